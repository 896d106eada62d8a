"""End-to-end latency: produce -> consume at a fixed rate, pylog RF 1 / RF 3 beside librdkafka's mock.

A producer process sends `--rate` records/s of `--value-size` bytes to one partition with
confluent-kafka's defaults except linger.ms=0 (acks=1 on RF 1, acks=all on RF 3 with
min.insync.replicas=2); each value starts with the send time (CLOCK_MONOTONIC, shared by every
process on the machine) and a sequence number. A consumer process (defaults, assign() to the
partition from the beginning) takes the time each record reaches the application and keeps
now - send time. The first `--warmup` seconds are dropped. Prints p50/p99/p99.9/max end to end
and the producer's delivery (ack) latency. Kafka's published end-to-end figures (Kreps 2014,
anchors.md 1.1): 2 ms p50, 3 ms p99, 14 ms p99.9. Goals here: p99 <= 5 ms on RF 1, <= 10 ms on RF 3.

Producer and consumer run in processes of their own so that neither client's Python thread
delays the other's; all of them share this machine's cores with the brokers.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import struct
import subprocess
import sys
import time
from typing import Any, Sequence

import confluent_kafka as ck
from confluent_kafka.admin import AdminClient, NewTopic

from pylog.bench import _harness as h

TOPIC = "bench-latency"
_HEAD = struct.Struct(">qq")  # send time (ns, CLOCK_MONOTONIC), sequence number
BROKER_CONFIG = {"log.retention.check.interval.ms": "1000"}
TOPIC_CONFIG = {"segment.bytes": str(64 * 1024 * 1024), "retention.bytes": str(256 * 1024 * 1024)}
SETUPS = ("mock", "rf1", "rf3")
_IDLE_S = 5.0  # a consumer that got nothing for this long after the first record stops (the mock falls behind)
# The mock parks a Fetch that found nothing for the whole fetch.wait.max.ms (500 ms by default) and
# is not woken by a produce (librdkafka src/rdkafka_mock_handlers.c, "If there was no data, delay up
# to MaxWait"), and it answers one batch per partition per Fetch. With the consumer's defaults its
# end-to-end latency is the wait itself and at 10,000 one-record batches/s it falls behind; so its
# consumer polls (1 ms): that row is the floor of the clients and loopback, not a default set-up.
MOCK_CONSUMER = {"fetch.wait.max.ms": 1}


def percentile(sorted_xs: Sequence[float], q: float) -> float:
    """The nearest-rank q-quantile (0 < q <= 1) of an ascending sequence."""
    if not sorted_xs:
        return float("nan")
    return sorted_xs[max(0, math.ceil(q * len(sorted_xs)) - 1)]


def summary_ms(ns: list[int]) -> dict[str, float]:
    """p50/p99/p99.9/max in milliseconds of a list of nanosecond latencies."""
    xs = sorted(ns)
    return {"n": len(xs), **{k: percentile(xs, q) / 1e6 for k, q in (("p50", 0.5), ("p99", 0.99), ("p999", 0.999))},
            "max": (xs[-1] / 1e6) if xs else float("nan")}


# -- the two client processes ---------------------------------------------------------------------


def producer_main(bootstrap: str, topic: str, rate: int, seconds: float, value_size: int, acks: str,
                  warmup: float) -> dict[str, Any]:
    """Send `rate` records/s for `seconds`; returns delivery latencies after warm-up and the error count."""
    acked: list[int] = []
    errors: list[str] = []
    warm_seq = int(rate * warmup)

    def on_delivery(err: Any, msg: Any) -> None:
        if err is not None:
            errors.append(str(err))
        elif _HEAD.unpack_from(msg.value())[1] >= warm_seq:
            acked.append(time.monotonic_ns() - _HEAD.unpack_from(msg.value())[0])

    p = ck.Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": acks, "on_delivery": on_delivery,
                     "log_level": 3})
    p.list_topics(topic, timeout=30)
    pad = b"x" * max(0, value_size - _HEAD.size)
    total = int(rate * seconds)
    interval = 1e9 / rate
    t0 = time.monotonic_ns()
    i = full = 0
    while i < total:
        now = time.monotonic_ns()
        due = min(total, int((now - t0) / interval) + 1)
        while i < due:  # every record whose slot has come (a late loop catches up, as a real source would)
            try:
                p.produce(topic, _HEAD.pack(time.monotonic_ns(), i) + pad, partition=0)
            except BufferError:  # 100,000 records wait for acks: the server is behind; wait as an app would
                full += 1
                p.poll(0.001)
                continue
            i += 1
        p.poll(0)
        wait = t0 + i * interval - time.monotonic_ns()
        if wait > 0:
            time.sleep(wait / 1e9)
    left = p.flush(60)
    return {"sent": total, "queue_full_waits": full, "undelivered": left, "errors": len(errors),
            "first_error": errors[:1],
            "ack": summary_ms(acked), "send_seconds": (time.monotonic_ns() - t0) / 1e9}


def consumer_main(bootstrap: str, topic: str, expect: int, rate: int, warmup: float, timeout: float,
                  conf: dict[str, Any]) -> dict[str, Any]:
    """Read `expect` records from offset 0; returns end-to-end latencies after warm-up."""
    c = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "pylog-bench-latency", "log_level": 3, **conf})
    c.assign([ck.TopicPartition(topic, 0, ck.OFFSET_BEGINNING)])
    print("READY", flush=True)
    warm_seq = int(rate * warmup)
    lat: list[int] = []
    seen = 0
    deadline = time.monotonic() + timeout
    last = time.monotonic()
    while seen < expect and time.monotonic() < deadline and (not seen or time.monotonic() - last < _IDLE_S):
        # consume(n, t) waits for n records or t seconds: take what is there, else block for one.
        msgs = c.consume(1000, 0) or [m for m in (c.poll(0.1),) if m is not None]
        for m in msgs:
            if m.error() is not None:
                print(f"consumer: {m.error()}", file=sys.stderr, flush=True)
                continue
            now = time.monotonic_ns()
            last = now / 1e9
            sent, seq = _HEAD.unpack_from(m.value())
            seen += 1
            if seq >= warm_seq:
                lat.append(now - sent)
    c.close()
    return {"seen": seen, "e2e": summary_ms(lat)}


def _child(role: str, *args: Any) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "pylog.bench.latency", f"_{role}", *map(str, args)],
                            stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)


def _result(proc: subprocess.Popen, what: str, timeout: float) -> dict[str, Any]:
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)
        raise RuntimeError(f"the {what} process did not finish within {timeout:.0f}s") from None
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        raise RuntimeError(f"the {what} process failed (exit {proc.returncode})")
    return json.loads(lines[-1])


def measure(bootstrap: str, topic: str, rate: int, seconds: float, value_size: int, acks: str,
            warmup: float, consumer_conf: dict[str, Any] | None = None, partial_ok: bool = False) -> dict[str, Any]:
    """One run: consumer first (parked at offset 0), then the producer; both results merged.

    A consumer that does not get every record is an error unless `partial_ok` (the mock).
    """
    total = int(rate * seconds)
    cons = _child("consumer", bootstrap, topic, total, rate, warmup, seconds + 20, json.dumps(consumer_conf or {}))
    try:
        if cons.stdout.readline().strip() != "READY":
            raise RuntimeError("the consumer process did not start")
        time.sleep(1.0)  # its first fetch is parked on the broker before the first record
        prod = _child("producer", bootstrap, topic, rate, seconds, value_size, acks, warmup)
        p = _result(prod, "producer", seconds + 90)
        c = _result(cons, "consumer", 90)
    finally:
        for proc in (cons,):
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)
    if p["undelivered"] or p["errors"] or (c["seen"] < total and not partial_ok):
        raise RuntimeError(f"{topic}: {p['undelivered']} undelivered, {p['errors']} errors {p['first_error']}, "
                           f"consumer saw {c['seen']} of {total}")
    return {**p, **c}


# -- setups ---------------------------------------------------------------------------------------


def _create(bootstrap: str, rf: int) -> None:
    """The topic: one partition led by broker 0; RF 3 with min.insync.replicas=2 waits for a full ISR."""
    cfg = dict(TOPIC_CONFIG, **({"min.insync.replicas": "2"} if rf > 1 else {}))
    admin = AdminClient({"bootstrap.servers": bootstrap})
    fut = admin.create_topics([NewTopic(TOPIC, num_partitions=1, replica_assignment=[list(range(rf))], config=cfg)],
                              operation_timeout=60, request_timeout=60)
    for f in fut.values():
        f.result(60)
    h.wait_leaders(bootstrap, [TOPIC], 1, isr=rf)


def run_setup(setup: str, rate: int, seconds: float, value_size: int, warmup: float, loop: str = "asyncio",
              zk_connect: str | None = None, profile_dir: str | None = None) -> dict[str, Any]:
    """Measure one setup (mock, rf1 or rf3) on a fresh server; returns the merged result with its label."""
    load = os.getloadavg()[0]  # the machine is shared: each row says how busy it was
    if setup == "mock":
        with h.mock_peer() as mock:
            res = measure(mock.bootstrap, TOPIC, rate, seconds, value_size, "1", warmup, MOCK_CONSUMER, True)
        return {"label": "librdkafka mock (C), RF 1, acks=1, consumer fetch.wait.max.ms 1", "load": load, **res}
    rf = 1 if setup == "rf1" else 3
    with h.pylog_cluster(rf, BROKER_CONFIG, event_loop=loop, zk_connect=zk_connect,
                         profile_dir=profile_dir) as cluster:
        _create(cluster.bootstrap, rf)
        target = h.pylog_target(cluster)
        c0 = target.cpu()
        res = measure(cluster.brokers[0].address, TOPIC, rate, seconds, value_size, "1" if rf == 1 else "all", warmup)
        c1 = target.cpu()
    busy = (c1[0] - c0[0] + c1[1] - c0[1]) / res["send_seconds"]
    label = f"pylog/{loop}, RF 1, acks=1" if rf == 1 else f"pylog/{loop}, RF 3, acks=all, min.isr 2"
    return {"label": label, "busy": busy, "load": load, **res}


def row(res: dict[str, Any]) -> list:
    """A table row of one setup's result."""
    e, a = res["e2e"], res["ack"]
    busy = f"{res['busy']:.0%}" if "busy" in res else "-"
    got = f"{res['seen']:,}" if res["seen"] == res["sent"] else f"**{res['seen']:,} of {res['sent']:,}**"
    if res.get("queue_full_waits"):
        got += " (producer queue full: the server fell behind)"
    return [res["label"], f"{e['p50']:.2f}", f"{e['p99']:.2f}", f"{e['p999']:.2f}", f"{e['max']:.1f}",
            f"{a['p50']:.2f}", f"{a['p99']:.2f}", busy, got, f"{res['load']:.1f}"]


HEADER = ["server", "e2e p50 ms", "e2e p99 ms", "e2e p99.9 ms", "e2e max ms", "ack p50 ms", "ack p99 ms",
          "brokers' CPU (of 1 core)", "records consumed", "load avg at start"]
KAFKA_ROW = ["Kafka 0.8.1 (Kreps 2014, 3 machines, published)", "2", "3", "14", "-", "-", "-", "-", "-", "-"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    if argv is None:
        argv = sys.argv[1:]
    if argv and argv[0] in ("_producer", "_consumer"):
        return _child_main(argv)
    ap = argparse.ArgumentParser(prog="scripts/bench latency", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=int, default=10_000, help="records per second")
    ap.add_argument("--seconds", type=float, default=30.0, help="producing time per setup (warm-up included)")
    ap.add_argument("--warmup", type=float, default=5.0, help="seconds of records not counted")
    ap.add_argument("--value-size", type=int, default=1024)
    ap.add_argument("--setups", default=",".join(SETUPS), help=f"comma-separated, of {list(SETUPS)}")
    ap.add_argument("--loop", default="uvloop",
                    help="the brokers' event loop: asyncio or uvloop (uvloop: the brokers' default)")
    ap.add_argument("--profile", metavar="DIR", help="cProfile the brokers' event loops into DIR (slows them down)")
    args = ap.parse_args(argv)
    setups = args.setups.split(",")
    if any(s not in SETUPS for s in setups):
        ap.error(f"unknown setups in {args.setups!r}; expected some of {list(SETUPS)}")
    if args.value_size < _HEAD.size or args.rate <= 0 or args.warmup >= args.seconds:
        ap.error(f"need --value-size >= {_HEAD.size}, --rate > 0 and --warmup < --seconds")
    print(f"<!-- {h.machine_notes()} -->")
    rows = []
    for s in setups:
        h.log(f"setup {s}: {args.rate} records/s x {args.value_size} B for {args.seconds:.0f}s")
        res = run_setup(s, args.rate, args.seconds, args.value_size, args.warmup, args.loop, profile_dir=args.profile)
        h.log(f"  {res['label']}: e2e {res['e2e']}, ack {res['ack']}, servers' CPU {res.get('busy', 0):.0%}, "
              f"producer queue full {res.get('queue_full_waits', 0)} times")
        rows.append(row(res))
    rows.append(KAFKA_ROW)
    h.print_report(f"latency: {args.rate:,} records/s x {args.value_size} B, linger.ms 0, 1 partition, "
                   f"{args.seconds - args.warmup:.0f}s measured after {args.warmup:.0f}s warm-up", HEADER, rows)
    return 0


def _child_main(argv: Sequence[str]) -> int:
    role, a = argv[0], argv[1:]
    with contextlib.redirect_stdout(sys.stderr) if role == "_producer" else contextlib.nullcontext():
        if role == "_producer":
            res = producer_main(a[0], a[1], int(a[2]), float(a[3]), int(a[4]), a[5], float(a[6]))
        else:
            res = consumer_main(a[0], a[1], int(a[2]), int(a[3]), float(a[4]), float(a[5]), json.loads(a[6]))
    print(json.dumps(res), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
