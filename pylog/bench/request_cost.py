"""Broker CPU per small request (issue 29): Produce, Fetch, OffsetCommit, Heartbeat, a follower's Fetch.

One cluster of two brokers. One client sends N requests of a kind, one at a time (each waits for
its response, as a synchronous committer does), over one connection, with bytes encoded once
before timing so that the client's own Python costs nothing on the broker's side. The brokers'
CPU (both processes' threads' run time from /proc/PID/task/*/schedstat, in ns; the system share
from /proc/PID/stat, in 10 ms ticks) over those N requests, divided by N, is the figure: it
includes the other broker's idle work (ZooKeeper pings, an idle follower's long poll), 4-6 ms
of CPU per second for both, i.e. a few us per request at these rates.

kinds
  produce-acks1      one batch of --records 100 B records, acks=1, to a partition on broker 0 (RF 1)
  produce-acksall    the same with acks=-1 (RF 1: answered once appended)
  fetch              a consumer Fetch (max_wait 0) at offset 0 for one such batch (sent from its segment)
  offset-commit      OffsetCommit of one offset by a simple consumer (generation -1, no member id)
  heartbeat          Heartbeat of the one member of a group
  follower-fetch     acks=-1 Produce to an RF 2 partition (leader 0, follower 1): its CPU minus
                     produce-acksall's is what the follower's fetches (one carries the batch, the
                     next acknowledges it) cost the two brokers

--compare DIR runs a second cluster from another checkout (e.g. /work/main, on --compare-loop,
default asyncio) and alternates the clusters in every round, so that the shared machine's load hits
them alike; --loops asyncio,uvloop runs one cluster of this checkout per event loop. --profile DIR runs the brokers
under cProfile (`python -m pstats DIR/broker-*.prof`).
Run: `scripts/bench request-cost [--requests N] [--rounds R] [--records K] [--kinds K1,K2] [--loops L1,L2]
[--compare DIR [--compare-loop L]] [--profile DIR]`.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import socket
import struct
import sys
import time
from typing import Iterator, Sequence

from confluent_kafka.admin import AdminClient, NewTopic

from pylog.bench import _harness as h
from pylog.client.sync import KafkaClient
from pylog.localcluster import LocalCluster
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import decode_response, encode_request

KINDS = ("produce-acks1", "produce-acksall", "fetch", "offset-commit", "heartbeat", "follower-fetch")
RF1, RF2, GROUP, MEMBER_GROUP = "rc-rf1", "rc-rf2", "rc-commits", "rc-members"
_I32 = struct.Struct(">i")
# Versions recent clients send (librdkafka 2.x: Produce 9, Fetch 12+ flexible, OffsetCommit 8, Heartbeat 4).
VERSIONS = {ApiKey.Produce: 9, ApiKey.Fetch: 12, ApiKey.OffsetCommit: 8, ApiKey.Heartbeat: 4}


def _frame(api_key: int, msg_builder) -> bytes:
    """One encoded request frame at VERSIONS' version."""
    v = VERSIONS[api_key]
    return encode_request(msg_builder(request_class(api_key)[v]), v, 1, "request-cost")


def _produce(topic: str, acks: int, batch: bytes) -> bytes:
    def build(cls):
        tpd = cls.TopicProduceData
        return cls(transactional_id=None, acks=acks, timeout_ms=30000, topic_data=[tpd(name=topic, partition_data=[
            tpd.PartitionProduceData(index=0, records=batch)])])
    return _frame(ApiKey.Produce, build)


def _fetch(batch_size: int) -> bytes:
    def build(cls):
        ft = cls.FetchTopic
        return cls(replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=52428800, isolation_level=0, session_id=0,
                   session_epoch=-1, topics=[ft(topic=RF1, partitions=[
                       ft.FetchPartition(partition=0, current_leader_epoch=-1, fetch_offset=0, log_start_offset=-1,
                                         partition_max_bytes=batch_size)])],
                   forgotten_topics_data=[], rack_id="")
    return _frame(ApiKey.Fetch, build)


def _commit() -> bytes:
    def build(cls):
        t = cls.OffsetCommitRequestTopic
        return cls(group_id=GROUP, generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                   retention_time_ms=-1, topics=[t(name=RF1, partitions=[
                       t.OffsetCommitRequestPartition(partition_index=0, committed_offset=1,
                                                      committed_leader_epoch=-1, committed_metadata="")])])
    return _frame(ApiKey.OffsetCommit, build)


def _join(client: KafkaClient, node: int) -> tuple[str, int]:
    """Make the one member of MEMBER_GROUP (JoinGroup twice for the member id, SyncGroup); (member id, generation)."""
    member = ""
    for _ in range(3):
        def join(cls, _v, member=member):
            return cls(group_id=MEMBER_GROUP, session_timeout_ms=300000, rebalance_timeout_ms=300000,
                       member_id=member, group_instance_id=None, protocol_type="consumer",
                       protocols=[cls.JoinGroupRequestProtocol(name="range", metadata=b"")])
        resp = client.call(ApiKey.JoinGroup, join, node=node, max_version=5)
        member = resp.member_id
        if resp.error_code == 0:
            break
    else:
        raise RuntimeError(f"JoinGroup failed: error {resp.error_code}")
    generation = resp.generation_id

    def sync(cls, _v):
        return cls(group_id=MEMBER_GROUP, generation_id=generation, member_id=member, group_instance_id=None,
                   assignments=[cls.SyncGroupRequestAssignment(member_id=member, assignment=b"")])
    got = client.call(ApiKey.SyncGroup, sync, node=node, max_version=3)
    if got.error_code:
        raise RuntimeError(f"SyncGroup failed: error {got.error_code}")
    return member, generation


def _heartbeat(member: str, generation: int) -> bytes:
    return _frame(ApiKey.Heartbeat, lambda cls: cls(group_id=MEMBER_GROUP, generation_id=generation,
                                                    member_id=member, group_instance_id=None))


def _coordinator(client: KafkaClient, group: str) -> int:
    def build(cls, v):
        return cls(key=group, key_type=0) if v < 4 else cls(key_type=0, coordinator_keys=[group])
    deadline = time.monotonic() + 60
    while True:  # COORDINATOR_NOT_AVAILABLE while __consumer_offsets is being created
        resp = client.call(ApiKey.FindCoordinator, build, node=0, max_version=3)
        if not resp.error_code:
            return resp.node_id
        if time.monotonic() > deadline:
            raise RuntimeError(f"FindCoordinator({group}): error {resp.error_code}")
        time.sleep(0.2)


def _errors(value) -> list[int]:
    """Every non-zero error_code anywhere in a decoded response's dict form."""
    if isinstance(value, dict):
        own = [value["error_code"]] if value.get("error_code") else []
        return own + [e for v in value.values() for e in _errors(v)]
    if isinstance(value, list):
        return [e for v in value for e in _errors(v)]
    return []


def _check(kind: str, frame: bytes, response: bytes) -> None:
    """Raise if a warm-up response carries an error: the timed loop would measure error answers."""
    api_key, version = struct.unpack_from(">hh", frame, 4)
    _corr, resp = decode_response(api_key, version, response)
    errors = _errors(resp.to_dict())
    if errors:
        raise RuntimeError(f"{kind}: the broker answered errors {errors[:3]}")


class _Pipe:
    """A raw connection that sends one pre-encoded request at a time and reads its whole response."""

    def __init__(self, address: str) -> None:
        host, _, port = address.rpartition(":")
        self.sock = socket.create_connection((host, int(port)), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray(1 << 20)
        self.view = memoryview(self.buf)

    def roundtrip(self, frame: bytes, whole: bool = False) -> bytes:
        """Send a frame; return the response (correlation id onwards) if `whole`, else its first bytes."""
        self.sock.sendall(frame)
        have = 0
        while have < 4 or have < 4 + _I32.unpack_from(self.buf, 0)[0]:
            n = self.sock.recv_into(self.view[have:])
            if not n:
                raise ConnectionError("broker closed the connection")
            have += n
        return bytes(self.buf[4:have if whole else min(have, 64)])

    def close(self) -> None:
        self.sock.close()


def runtime_ns(pids: Sequence[int]) -> int:
    """Nanoseconds the processes' threads have run on a CPU (the scheduler's own count, user + system): /proc's
    user and system times tick at 10 ms, too coarse for a few thousand requests of ~100 us."""
    total = 0
    for pid in pids:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                    total += int(f.read().split()[0])
            except FileNotFoundError:  # a thread that ended meanwhile (an executor's idle worker)
                pass
    return total


class Setup:
    """One two-broker cluster with the topics, group and pre-encoded requests of every kind."""

    def __init__(self, name: str, cluster: LocalCluster, records_per_batch: int) -> None:
        self.name, self.cluster = name, cluster
        self.target = h.pylog_target(cluster, name)
        addr = {b.broker_id: b.address for b in cluster.brokers.values()}
        admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
        for f in admin.create_topics([NewTopic(RF1, 1, replica_assignment=[[0]]),
                                      NewTopic(RF2, 1, replica_assignment=[[0, 1]])]).values():
            f.result(120)
        h.wait_leaders(cluster.bootstrap, [RF1, RF2], 1, isr=None)
        h.wait_leaders(cluster.bootstrap, [RF2], 1, isr=2)
        batch = records.build_batch([(None, b"v" * 100, (), 1_700_000_000_000)] * records_per_batch)
        self.pipes = {0: _Pipe(addr[0])}
        with KafkaClient(cluster.bootstrap) as client:
            client.refresh_metadata()
            commit_node, member_node = _coordinator(client, GROUP), _coordinator(client, MEMBER_GROUP)
            member, generation = _join(client, member_node)
        for node in (commit_node, member_node):
            self.pipes.setdefault(node, _Pipe(addr[node]))
        self.requests = {
            "produce-acks1": (0, _produce(RF1, 1, batch)),
            "produce-acksall": (0, _produce(RF1, -1, batch)),
            "fetch": (0, _fetch(len(batch))),
            "offset-commit": (commit_node, _commit()),
            "heartbeat": (member_node, _heartbeat(member, generation)),
            "follower-fetch": (0, _produce(RF2, -1, batch)),
        }
        for kind, (node, frame) in self.requests.items():  # warm up, and fail early on an error answer
            _check(kind, frame, self.pipes[node].roundtrip(frame, whole=True))

    def measure(self, kind: str, n: int) -> tuple[float, float]:
        """Broker CPU microseconds per request over n requests of a kind: (user + system, system)."""
        node, frame = self.requests[kind]
        pipe = self.pipes[node]
        c0, ns0 = self.target.cpu(), runtime_ns(self.target.pids)
        for _ in range(n):
            pipe.roundtrip(frame)
        c1, ns1 = self.target.cpu(), runtime_ns(self.target.pids)
        return (ns1 - ns0) / n / 1e3, (c1[1] - c0[1]) / n * 1e6

    def close(self) -> None:
        for p in self.pipes.values():
            p.close()


@contextlib.contextmanager
def _cluster(checkout: str | None, profile_dir: str | None, loop: str = "asyncio",
             zk_connect: str | None = None) -> Iterator[LocalCluster]:
    """Two brokers whose code comes from `checkout` (None: this one): PYTHONPATH and cwd point there."""
    saved_path, saved_cwd = os.environ.get("PYTHONPATH"), os.getcwd()
    root = os.path.abspath(checkout or os.path.join(os.path.dirname(__file__), "..", ".."))
    os.environ["PYTHONPATH"] = root
    os.chdir(root)  # `python -m` puts the cwd first on sys.path
    try:
        cm = h.pylog_cluster(2, {"offsets.topic.replication.factor": "1", "offsets.topic.num.partitions": "4"},
                             profile_dir=profile_dir, event_loop=loop, zk_connect=zk_connect)
        cluster = cm.__enter__()
    finally:
        os.chdir(saved_cwd)
        if saved_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved_path
    try:
        yield cluster
    finally:
        cm.__exit__(None, None, None)


def run(kinds: Sequence[str], n: int, rounds: int, records_per_batch: int, compare: str | None = None,
        profile_dir: str | None = None, loops: Sequence[str] = ("asyncio",), zk_connect: str | None = None,
        compare_loop: str = "asyncio") -> list[list]:
    """Median broker CPU per request of each kind for this checkout on each loop (then `compare`'s, on
    `compare_loop`); returns table rows, one column per cluster, then each column's ratio to the first."""
    configs = [(f"this/{loop}", None, loop) for loop in loops]
    if compare:
        configs.append(("compare", compare, compare_loop))
    names = [c[0] for c in configs]
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    with contextlib.ExitStack() as stack:
        setups = []
        for name, checkout, loop in configs:
            cluster = stack.enter_context(_cluster(checkout, profile_dir, loop, zk_connect))
            setup = Setup(name, cluster, records_per_batch)
            stack.callback(setup.close)
            setups.append(setup)
        for r in range(rounds):
            order = setups if r % 2 == 0 else setups[::-1]
            for kind in (kinds if r % 2 == 0 else kinds[::-1]):
                for s in order:
                    results.setdefault((kind, s.name), []).append(s.measure(kind, n))
            h.log(f"round {r} done")
    rows = []
    for kind in kinds:
        totals = [h.median([x[0] for x in results[(kind, name)]]) for name in names]
        systems = [h.median([x[1] for x in results[(kind, name)]]) for name in names]
        row = [kind] + [f"{t:.0f} ({s:.0f})" for t, s in zip(totals, systems)]
        row += [f"{t / totals[0]:.2f}" if totals[0] else "-" for t in totals[1:]]
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout (progress on stderr)."""
    ap = argparse.ArgumentParser(prog="scripts/bench request-cost", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=2000, help="requests per (round, kind, cluster)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds (the median is reported)")
    ap.add_argument("--records", type=int, default=4, help="100 B records per produced batch (1-4 is 'small')")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ", ".join(KINDS))
    ap.add_argument("--compare", metavar="DIR", help="also run a cluster from the checkout DIR (e.g. /work/main)")
    ap.add_argument("--loops", default="asyncio", help="comma-separated event loops for this checkout's clusters "
                    "(asyncio, uvloop): one cluster each")
    ap.add_argument("--compare-loop", default="asyncio", choices=("asyncio", "uvloop"),
                    help="the event loop of the --compare cluster (default asyncio, the stock loop)")
    ap.add_argument("--profile", metavar="DIR", help="cProfile the brokers' event loops into DIR (slows them down)")
    args = ap.parse_args(argv)
    kinds = args.kinds.split(",")
    if any(k not in KINDS for k in kinds):
        ap.error(f"--kinds: each must be one of {', '.join(KINDS)}")
    if args.requests < 1 or args.rounds < 1 or args.records < 1:
        ap.error("--requests, --rounds and --records must be >= 1")
    if args.compare and not os.path.isdir(os.path.join(args.compare, "pylog")):
        ap.error(f"--compare: {args.compare} is not a pylog checkout (no pylog/ in it)")
    print(f"<!-- {h.machine_notes()} -->")
    t0 = time.monotonic()
    loops = args.loops.split(",")
    if any(lp not in ("asyncio", "uvloop") for lp in loops):
        ap.error("--loops: each must be asyncio or uvloop")
    rows = run(kinds, args.requests, args.rounds, args.records, args.compare, args.profile, loops,
               compare_loop=args.compare_loop)
    columns = [f"this checkout, {lp}" for lp in loops]
    if args.compare:
        columns.append(f"{args.compare}, {args.compare_loop}")
    header = ["request"] + [f"broker CPU µs/request, user+sys (sys) ({c})" for c in columns]
    header += [f"{c} / {columns[0]}" for c in columns[1:]]
    h.print_report(f"request cost: {args.requests:,} requests one at a time per kind and round, median of "
                   f"{args.rounds} rounds, {args.records} x 100 B records per batch, two brokers "
                   f"({time.monotonic() - t0:.0f} s)", header, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
