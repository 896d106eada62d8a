"""pylog-replica-verification: kafka-replica-verification.sh (ReplicaVerificationTool).

Fetches every selected partition from each of its replicas (Fetch v11 as the debug consumer, replica
id -2: since KIP-392 a follower serves a v11+ consumer fetch up to its own high watermark), then
walks the replicas' batches side by side up to each one's high watermark. Kafka's lines: a start
line, a "max lag" report every --report-interval-ms, a checksum mismatch (the run goes on) and an
offset mismatch (exit 1). Like Kafka's, it runs until stopped; a broker that does not answer
holds its partitions back, which shows as a growing lag.
"""

from __future__ import annotations

import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import click

from pylog.cli.common import OperationError, command, open_admin
from pylog.client.sync import ClientError, KafkaClient
from pylog.common.errors import ErrorCode
from pylog.common.types import TP
from pylog.protocol.api import ApiKey
from pylog.protocol.records import BatchHeader, iter_batches

DEBUGGING_CONSUMER_ID = -2  # Kafka's FetchRequest.DEBUGGING_CONSUMER_ID
INT_MAX = 2**31 - 1


def stamp(ms: float | None = None) -> str:
    """Kafka's yyyy-MM-dd HH:mm:ss,SSS (local time)."""
    t = datetime.fromtimestamp(time.time() if ms is None else ms / 1000)
    return t.strftime("%Y-%m-%d %H:%M:%S,") + f"{t.microsecond // 1000:03d}"


class OffsetMismatch(Exception):
    """Two replicas hold different offsets at the same position: Kafka prints it and exits 1."""


@dataclass
class ReplicaData:
    """One replica's answer for one partition: its high watermark (-1 when it did not answer) and batches."""

    high_watermark: int = -1
    batches: list[BatchHeader] = field(default_factory=list)


@dataclass
class Verifier:
    """ReplicaBuffer: the next offset to verify per partition and the max-lag report."""

    offsets: dict[TP, int]
    report_interval_ms: int
    last_report_ms: float = field(default_factory=lambda: time.time() * 1000)

    def verify(self, fetched: dict[TP, dict[int, ReplicaData]], now_ms: float | None = None) -> list[str]:
        """Compare one round's answers; returns the lines to print (raises OffsetMismatch)."""
        lines: list[str] = []
        max_lag, lag_tp, lag_offset = -1, None, -1
        for tp in sorted(fetched):
            replicas = fetched[tp]
            lines += self._verify_partition(tp, replicas)
            max_hw = max((r.high_watermark for r in replicas.values()), default=-1)
            if max_hw - self.offsets[tp] > max_lag:
                lag_offset = self.offsets[tp]
                max_lag, lag_tp = max_hw - lag_offset, tp
        now = time.time() * 1000 if now_ms is None else now_ms
        if now - self.last_report_ms > self.report_interval_ms:
            where = "null" if lag_tp is None else f"{lag_tp[0]}-{lag_tp[1]}"
            lines.append(f"{stamp(now)}: max lag is {max_lag} for partition {where} at offset {lag_offset} "
                         f"among {len(fetched)} partitions")
            self.last_report_ms = now
        return lines

    def _verify_partition(self, tp: TP, replicas: dict[int, ReplicaData]) -> list[str]:
        lines: list[str] = []
        iters = {rid: iter(r.batches) for rid, r in sorted(replicas.items())}
        while True:
            first: tuple[int, BatchHeader] | None = None
            for rid, it in iters.items():
                batch = next(it, None)
                if batch is None or batch.last_offset >= replicas[rid].high_watermark:
                    return lines  # only what every replica holds below its high watermark is verified
                if first is None:
                    first = (rid, batch)
                    continue
                frid, fb = first
                if fb.last_offset != batch.last_offset:
                    raise OffsetMismatch(f"{stamp()}: partition {tp[0]}-{tp[1]}: replica {frid}'s offset "
                                         f"{fb.last_offset} doesn't match replica {rid}'s offset {batch.last_offset}")
                if fb.crc != batch.crc:
                    lines.append(f"{stamp()}: partition {tp[0]}-{tp[1]} has unmatched checksum at offset "
                                 f"{batch.last_offset}; replica {frid}'s checksum {fb.crc}; replica {rid}'s "
                                 f"checksum {batch.crc}")
            if first is None:
                return lines
            self.offsets[tp] = first[1].next_offset


def _records(data: Any) -> bytes:
    return bytes(data) if data else b""


def fetch_from(client: KafkaClient, partitions: list[TP], offsets: dict[TP, int], fetch_size: int,
               max_wait_ms: int) -> dict[TP, ReplicaData]:
    """One Fetch as the debug consumer from one broker; a broker that fails gives empty answers (as Kafka)."""
    by_topic: dict[str, list[int]] = {}
    for t, p in partitions:
        by_topic.setdefault(t, []).append(p)

    def build(cls: type, _v: int) -> Any:
        ft = cls.FetchTopic
        return cls(replica_id=DEBUGGING_CONSUMER_ID, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=INT_MAX,
                   isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=[], rack_id="",
                   topics=[ft(topic=t, partitions=[ft.FetchPartition(
                       partition=p, current_leader_epoch=-1, fetch_offset=offsets[(t, p)], log_start_offset=-1,
                       partition_max_bytes=fetch_size) for p in ps]) for t, ps in by_topic.items()])
    out = {tp: ReplicaData() for tp in partitions}
    try:
        resp = client.call(ApiKey.Fetch, build, max_version=11)
    except (ClientError, OSError):
        time.sleep(max_wait_ms / 1000)  # Kafka's fetcher waits out its socket timeout; don't spin on a dead broker
        return out
    for t in resp.responses:
        for p in t.partitions:
            if (t.topic, p.partition_index) in out and p.error_code == ErrorCode.NONE:
                out[(t.topic, p.partition_index)] = ReplicaData(p.high_watermark,
                                                               list(iter_batches(_records(p.records))))
    return out


def _initial_offsets(admin: Any, leaders: dict[TP, int], timestamp: int) -> dict[TP, int]:
    """ListOffsets at --time from each leader (Kafka asks a consumer: endOffsets, beginningOffsets, offsetsForTimes)."""
    by_leader: dict[int, list[TP]] = {}
    for tp, leader in leaders.items():
        by_leader.setdefault(leader, []).append(tp)
    found: dict[TP, int] = {}
    for leader, tps in by_leader.items():
        for ts in ([timestamp, -1] if timestamp >= 0 else [timestamp]):  # no record after ts: start at the end
            topics: dict[str, list[int]] = {}
            for t, p in tps:
                if (t, p) not in found:
                    topics.setdefault(t, []).append(p)
            resp = admin.client.call(ApiKey.ListOffsets, lambda cls, v: cls(
                replica_id=-1, isolation_level=0, topics=[cls.ListOffsetsTopic(name=t, partitions=[
                    cls.ListOffsetsTopic.ListOffsetsPartition(partition_index=p, timestamp=ts) for p in ps])
                    for t, ps in topics.items()]), node=leader)
            for t in resp.topics:
                for p in t.partitions:
                    if p.error_code != ErrorCode.NONE:
                        raise OperationError(f"{ErrorCode(p.error_code).message} ({t.name}-{p.partition_index})")
                    if p.offset >= 0:
                        found[(t.name, p.partition_index)] = p.offset
    return found


def run(bootstrap: str, include: str, fetch_size: int, max_wait_ms: int, timestamp: int, report_ms: int) -> None:
    """ReplicaVerificationTool.main: set up, print the start line, then verify round after round."""
    try:
        regex = re.compile(include.strip().replace(",", "|"))
    except re.error:
        raise OperationError(f"{include} is an invalid regex") from None
    admin = open_admin(bootstrap)
    meta = admin.metadata(None)
    topics = [t for name, t in sorted(meta.topics.items()) if regex.fullmatch(name)]
    if not topics:
        raise OperationError("No topics found. [topics-include] if specified, is either filtering out all topics "
                             "or there is no topic.")
    per_broker: dict[int, list[TP]] = {}
    leaders: dict[TP, int] = {}
    for t in topics:
        for p, pm in sorted(t.partitions.items()):
            for b in pm.replicas:
                per_broker.setdefault(b, []).append((t.name, p))
            if pm.leader is not None:
                leaders[(t.name, p)] = pm.leader
    verifier = Verifier(_initial_offsets(admin, leaders, timestamp), report_ms)
    missing = [tp for tp in (tp for ps in per_broker.values() for tp in ps) if tp not in verifier.offsets]
    if missing:
        raise OperationError(f"No leader for partition {missing[0][0]}-{missing[0][1]}")
    brokers = admin.client.brokers
    clients = {b: KafkaClient(f"{brokers[b][0]}:{brokers[b][1]}", client_id="ReplicaVerification")
               for b in per_broker if b in brokers}
    click.echo(f"{stamp()}: verification process is started")
    with ThreadPoolExecutor(max_workers=len(per_broker)) as pool:  # one fetcher per broker, as Kafka's threads
        while True:
            answers = {b: pool.submit(fetch_from, clients[b], tps, dict(verifier.offsets), fetch_size, max_wait_ms)
                       if b in clients else None for b, tps in per_broker.items()}
            fetched: dict[TP, dict[int, ReplicaData]] = {}
            for b, fut in answers.items():
                got = fut.result() if fut is not None else {tp: ReplicaData() for tp in per_broker[b]}
                for tp, data in got.items():
                    fetched.setdefault(tp, {})[b] = data
            try:
                lines = verifier.verify(fetched)
            except OffsetMismatch as exc:
                click.echo(str(exc))
                sys.stdout.flush()
                raise SystemExit(1)
            for line in lines:
                click.echo(line)
            sys.stdout.flush()


@command("pylog-replica-verification", help="Validate that all replicas for a set of topics have the same data "
         "(kafka-replica-verification.sh).")
@click.option("--bootstrap-server", metavar="HOST1:PORT1,...",
              help="REQUIRED. The list of hostname and port of the server to connect to.")
@click.option("--broker-list", metavar="hostname:port,...,hostname:port",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified. "
                   "The list of hostname and port of the server to connect to.")
@click.option("--fetch-size", type=int, default=1048576, show_default=True, metavar="bytes",
              help="The fetch size of each request.")
@click.option("--max-wait-ms", type=int, default=1000, show_default=True, metavar="ms",
              help="The max amount of time each fetch request waits.")
@click.option("--topics-include", default=".*", show_default=True, metavar="Java regex (String)",
              help="List of topics to verify replica consistency.")
@click.option("--time", "time_", type=int, default=-1, show_default=True, metavar="timestamp/-1(latest)/-2(earliest)",
              help="Timestamp for getting the initial offsets.")
@click.option("--report-interval-ms", type=int, default=30000, show_default=True, metavar="ms",
              help="The reporting interval.")
def replica_verification_command(bootstrap_server: str | None, broker_list: str | None, fetch_size: int,
                                 max_wait_ms: int, topics_include: str, time_: int, report_interval_ms: int,
                                 **_: Any) -> None:
    """The pylog-replica-verification command."""
    servers = bootstrap_server or broker_list
    if not servers:
        raise click.UsageError("Missing required argument \"[bootstrap-server]\"")
    try:
        run(servers, topics_include, fetch_size, max_wait_ms, time_, report_interval_ms)
    except KeyboardInterrupt:
        raise SystemExit(130) from None


def main() -> None:
    """Console entry point (bin/pylog-replica-verification.sh, `pylog-replica-verification`)."""
    replica_verification_command.main(prog_name="pylog-replica-verification")


if __name__ == "__main__":
    main()
