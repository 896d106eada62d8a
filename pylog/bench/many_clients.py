"""Many partitions and clients: 8 producer processes x 64 partitions with keys, then 8 consumers.

Targets in the same run (--setups), repetitions alternated: librdkafka's mock cluster (one broker,
C, in memory), one pylog broker (RF 1), two pylog brokers on this host (RF 1, each leading half the
partitions: "a broker per core", not in the defaults) and three pylog brokers (RF 3,
min.insync.replicas 2), all written with acks=all (librdkafka's default; on RF 1 it is acks=1).
Each repetition writes a fresh topic: every producer process sends --records keyed records (the key
spreads them over the partitions with librdkafka's default partitioner) and the consumer processes
then each read their share of the partitions (assign(), partitions dealt round-robin) from the low
to the high watermark. Aggregate MB/s is the record values moved from the moment all processes
were told to start until the last one finished. Processes connect and fetch metadata before the clock starts.

The mock keeps at most 5 MB per partition, so the defaults (8 x 32,000 x 1 KB over 64
partitions, ~4.1 MB each) fit it; the consumers read what each server holds, which is all of
it unless the sizes are raised; every pylog setup must return every record written. Prints MB/s, the
ratio to the mock and to one pylog broker (RF 1), and the servers' CPU seconds per GB (user and system
apart; all brokers' summed for a multi-broker setup).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any, Sequence

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient

from pylog.bench import _harness as h

BROKER_CONFIG = {"log.retention.check.interval.ms": "1000"}
TOPIC_CONFIG = {"segment.bytes": str(64 * 1024 * 1024), "retention.bytes": str(256 * 1024 * 1024)}
PRIME_MB = 1024  # page cache to recycle first (see _harness.prime_page_cache); topics are deleted after each rep
PRODUCER_CONF = {"batch.size": 1048576, "linger.ms": 5, "acks": "all"}
# name -> (row label, brokers, replication factor). rf1x2 is "a broker per core": two broker processes on
# this host, each leading half of the partitions (RF 1), the cheapest way past one event loop per broker.
SETUPS = {"mock": ("mock", 1, 1), "rf1": ("pylog RF 1", 1, 1), "rf1x2": ("pylog RF 1, 2 brokers", 2, 1),
          "rf3": ("pylog RF 3", 3, 3)}
DEFAULT_SETUPS = ("mock", "rf1", "rf3")
RF1 = SETUPS["rf1"][0]


@dataclass
class Phase:
    """One phase (produce or consume) of one repetition against one target."""

    records: int
    seconds: float
    user: float
    sys: float
    value_size: int

    @property
    def mb_per_s(self) -> float:
        """MiB of record values per second, all processes together."""
        return self.records * self.value_size / self.seconds / h.MB

    @property
    def cores(self) -> float:
        """The servers' CPU (user + system) over the phase's wall time: how many cores they kept busy."""
        return (self.user + self.sys) / self.seconds

    def per_gb(self, cpu: float) -> float:
        """Server CPU seconds per 10^9 bytes of record values."""
        return cpu / (self.records * self.value_size / h.GB)


# -- worker processes ------------------------------------------------------------------------------


def _worker_produce(args: dict[str, Any]) -> dict[str, Any]:
    p = ck.Producer({"bootstrap.servers": args["bootstrap"], "queue.buffering.max.messages": 2_000_000,
                     "queue.buffering.max.kbytes": 2_000_000, "log_level": 3, **PRODUCER_CONF})
    p.list_topics(args["topic"], timeout=30)
    value = b"x" * args["value_size"]
    prefix = f"p{args['index']}-"
    _ready_then_wait()
    errors = []
    send = p.produce

    def on_delivery(err: Any, _msg: Any) -> None:
        if err is not None:
            errors.append(str(err))

    for i in range(args["records"]):
        key = prefix + str(i)
        try:
            send(args["topic"], value, key, on_delivery=on_delivery)
        except BufferError:
            p.poll(0.005)
            send(args["topic"], value, key, on_delivery=on_delivery)
    left = p.flush(300)
    return {"records": args["records"] - left - len(errors), "error": errors[0] if errors else
            (f"{left} undelivered" if left else None)}


def _worker_consume(args: dict[str, Any]) -> dict[str, Any]:
    c = ck.Consumer({"bootstrap.servers": args["bootstrap"], "group.id": "pylog-bench-many",
                     "enable.auto.commit": False, "fetch.queue.backoff.ms": 10, "log_level": 3})
    topic = args["topic"]
    ranges = {}
    for part in args["partitions"]:
        lo, hi = c.get_watermark_offsets(ck.TopicPartition(topic, part), timeout=30)
        if hi > lo:
            ranges[part] = (lo, hi)
    want = sum(hi - lo for lo, hi in ranges.values())
    _ready_then_wait()
    c.assign([ck.TopicPartition(topic, part, lo) for part, (lo, _) in ranges.items()])
    got = 0
    try:
        while got < want:
            msgs = c.consume(min(10000, want - got), 10.0)
            if not msgs:
                return {"records": got, "error": f"no records for 10 s after {got} of {want}"}
            if msgs[-1].error() is not None:
                return {"records": got, "error": str(msgs[-1].error())}
            got += len(msgs)
    finally:
        c.close()
    return {"records": got, "error": None}


def _ready_then_wait() -> None:
    print("READY", flush=True)
    if sys.stdin.readline().strip() != "GO":
        sys.exit(1)


def _worker_main(kind: str, raw: str) -> None:
    out = (_worker_produce if kind == "produce" else _worker_consume)(json.loads(raw))
    print("DONE " + json.dumps(out), flush=True)


# -- the driver ----------------------------------------------------------------------------------------


def _phase(target: h.Target, kind: str, jobs: list[dict[str, Any]], value_size: int) -> Phase:
    """Start one worker per job, wait until all are connected, start them together, wait for all."""
    procs = [subprocess.Popen([sys.executable, "-m", "pylog.bench.many_clients", "worker", kind, json.dumps(j)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) for j in jobs]
    try:
        for pr in procs:
            line = pr.stdout.readline().strip()
            if line != "READY":
                raise RuntimeError(f"{target.name}: a {kind} worker did not start (got {line!r})")
        c0 = target.cpu()
        t0 = time.perf_counter()
        for pr in procs:
            pr.stdin.write("GO\n")
            pr.stdin.flush()
        results = []
        for pr in procs:
            line = pr.stdout.readline().strip()
            if not line.startswith("DONE "):
                raise RuntimeError(f"{target.name}: a {kind} worker failed (got {line!r})")
            results.append(json.loads(line[5:]))
        elapsed = time.perf_counter() - t0
        c1 = target.cpu()
    finally:
        for pr in procs:
            try:
                pr.wait(30)
            except subprocess.TimeoutExpired:
                pr.kill()
                pr.wait(10)
    errors = [r["error"] for r in results if r["error"]]
    if errors:
        raise RuntimeError(f"{target.name}: {kind}: {errors[0]}")
    return Phase(sum(r["records"] for r in results), elapsed, c1[0] - c0[0], c1[1] - c0[1], value_size)


def one_rep(target: h.Target, topic: str, partitions: int, rf: int, producers: int, consumers: int,
            records: int, value_size: int) -> tuple[Phase, Phase]:
    """Create `topic`, produce into it from `producers` processes, read it back with `consumers` processes."""
    cfg = dict(TOPIC_CONFIG, **({"min.insync.replicas": "2"} if rf > 1 else {}))
    if target.name != "mock":  # the mock's topics are made when it starts (see _harness.mock_peer)
        h.create_topics(target.bootstrap, [topic], partitions=partitions, rf=rf, config=cfg)
    if rf > 1:
        h.wait_leaders(target.bootstrap, [topic], partitions, isr=rf)
    if target.name != "mock" and rf == 1:
        _check_leaders_spread(target, topic)
    base = {"bootstrap": target.bootstrap, "topic": topic, "value_size": value_size}
    prod = _phase(target, "produce", [dict(base, index=i, records=records) for i in range(producers)], value_size)
    shares = [list(range(partitions))[i::consumers] for i in range(consumers)]
    cons = _phase(target, "consume", [dict(base, partitions=s) for s in shares if s], value_size)
    if target.name != "mock" and cons.records != prod.records:  # the mock keeps only 5 MB per partition
        raise RuntimeError(f"{target.name}: read {cons.records:,} records of the {prod.records:,} written")
    if target.name != "mock":  # so that the next repetition's writes reuse this one's page cache
        admin = AdminClient({"bootstrap.servers": target.bootstrap})  # referenced until the futures resolve
        for f in admin.delete_topics([topic], operation_timeout=60, request_timeout=60).values():
            f.result(60)
    return prod, cons


def run(reps: int, partitions: int, producers: int, consumers: int, records: int, value_size: int,
        setups: Sequence[str] = DEFAULT_SETUPS, zk_connect: str | None = None, prime_mb: int = PRIME_MB) -> list[list]:
    """Alternate reps over the chosen setups (of SETUPS), each server started once; returns table rows."""
    res: dict[str, list[tuple[Phase, Phase]]] = {}
    with contextlib.ExitStack() as stack:
        targets = []
        for name in setups:
            label, n_brokers, rf = SETUPS[name]
            if name == "mock":
                t = stack.enter_context(h.mock_peer({f"bench-many-{i}": partitions for i in range(reps)}))
            else:
                cluster = stack.enter_context(h.pylog_cluster(n_brokers, BROKER_CONFIG, prime_mb=prime_mb,
                                                              zk_connect=_chroot(zk_connect, name)))
                t = h.pylog_target(cluster, label)
            targets.append((t, rf))
        for i in range(reps):
            for t, rf in (targets if i % 2 == 0 else targets[::-1]):
                prod, cons = one_rep(t, f"bench-many-{i}", partitions, rf, producers, consumers, records, value_size)
                res.setdefault(t.name, []).append((prod, cons))
                h.log(f"  {t.name} rep {i + 1}: produce {prod.mb_per_s:.1f} MB/s in {prod.seconds:.2f}s "
                      f"({prod.user:.2f}s user + {prod.sys:.2f}s sys: {prod.cores:.2f} cores), consume "
                      f"{cons.mb_per_s:.1f} MB/s in {cons.seconds:.2f}s ({cons.user:.2f}s + {cons.sys:.2f}s: "
                      f"{cons.cores:.2f} cores), {cons.records:,} of {prod.records:,} records read")
    return _rows(res)


def _check_leaders_spread(target: h.Target, topic: str) -> None:
    """Fail unless every broker of the target leads some of the topic's partitions (else it measures one loop)."""
    md = AdminClient({"bootstrap.servers": target.bootstrap}).list_topics(topic, timeout=30)
    leaders = {p.leader for p in md.topics[topic].partitions.values()}
    if len(leaders) < min(len(target.pids), len(md.topics[topic].partitions)):
        raise RuntimeError(f"{target.name}: {topic}'s partitions are led by brokers {sorted(leaders)} only")


def _chroot(zk_connect: str | None, name: str) -> str | None:
    """A chroot of its own for each cluster sharing a given ZooKeeper (both have a broker 0)."""
    return None if zk_connect is None else f"{zk_connect.rstrip('/')}/{name}"


def _rows(res: dict[str, list[tuple[Phase, Phase]]]) -> list[list]:
    rf3 = SETUPS["rf3"][0]
    rows = []
    for kind, idx in (("produce", 0), ("consume", 1)):
        mb = {name: h.median([r[idx].mb_per_s for r in runs]) for name, runs in res.items()}
        for name, runs in res.items():
            phases = [r[idx] for r in runs]
            user = h.median([p.per_gb(p.user) for p in phases])
            sys_ = h.median([p.per_gb(p.sys) for p in phases])
            # RF 3 writes acks=all to three replicas: comparable to RF 1 on pylog, not to the one-broker mock
            vs_mock = f"{mb[name] / mb['mock']:.2f}" if "mock" in mb and name != rf3 else "-"
            vs_rf1 = f"{mb[name] / mb[RF1]:.2f}" if RF1 in mb and name not in (RF1, "mock") else "-"
            cores = h.median([p.cores for p in phases])
            rows.append([kind, name, mb[name], f"{user:.2f} / {sys_:.2f}", vs_mock, vs_rf1, f"{cores:.2f}"])
    return rows


HEADER = ["phase", "server", "MB/s (all clients)", "server CPU-s/GB user / sys", "ratio vs mock",
          "ratio vs pylog RF 1 (one broker)", "server cores busy"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench many_clients", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="repetitions per target (the median is reported)")
    ap.add_argument("--partitions", type=int, default=64)
    ap.add_argument("--producers", type=int, default=8, help="producer processes")
    ap.add_argument("--consumers", type=int, default=8, help="consumer processes")
    ap.add_argument("--records", type=int, default=32_000, help="records per producer process per repetition")
    ap.add_argument("--value-size", type=int, default=1000)
    ap.add_argument("--setups", default=",".join(DEFAULT_SETUPS),
                    help=f"comma-separated, of {list(SETUPS)} (rf1x2: two brokers, RF 1, a broker per core)")
    ap.add_argument("--no-mock", action="store_true", help="skip the librdkafka mock peer")
    args = ap.parse_args(argv)
    setups = [s for s in args.setups.split(",") if not (args.no_mock and s == "mock")]
    if not setups or any(s not in SETUPS for s in setups) or len(set(setups)) != len(setups):
        ap.error(f"--setups {args.setups!r} (without mock if --no-mock): expected one or more distinct names "
                 f"among {list(SETUPS)}")
    for name in ("reps", "partitions", "producers", "consumers", "records", "value_size"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    print(f"<!-- {h.machine_notes()} -->")
    rows = run(args.reps, args.partitions, args.producers, args.consumers, args.records, args.value_size,
               setups)
    h.print_report(f"many clients: {args.producers} producer processes x {args.records:,} keyed {args.value_size} B "
                   f"records into {args.partitions} partitions, then {args.consumers} consumer processes; acks=all; "
                   f"median of {args.reps}", HEADER, rows)
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["worker"] and len(sys.argv) == 4:
        _worker_main(sys.argv[2], sys.argv[3])
    else:
        sys.exit(main())
