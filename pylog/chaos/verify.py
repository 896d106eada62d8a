"""After the faults: read every partition back and compare the in-sync replicas' segment files.

Used by every chaos mode: the no-loss run checks acknowledged records and replicas; --transactions
and --ctp compare their topics' replicas here (replica_checks) besides their exactly-once checks.

The checks are the correctness contract's: every acknowledged record is at the offset it was
acknowledged with (so it is present, and the acknowledged offsets of a partition rise in
acknowledgement order); records written twice by a retried batch are counted as duplicates,
not loss; and the logs of all in-sync replicas are identical batch for batch (offsets, leader
epoch, CRC) up to the high watermark, as the dump-log tool prints them.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import confluent_kafka as ck

from pylog.chaos.workload import Acked


@dataclass
class PartitionCheck:
    """The verdict for one partition."""

    partition: int
    high_watermark: int = 0
    acked: int = 0
    lost: list[tuple[int, int]] = field(default_factory=list)  # (seq, acknowledged offset) not found there
    duplicates: int = 0  # extra copies of a record (retried batches)
    # Acknowledged offsets that went backwards in acknowledgement order: allowed for the non-idempotent producer
    # (an old leader's late answer for a record it had committed comes after the new leader's), and kept as
    # (seq, offset, highest offset acknowledged before it) for the report.
    inversions: int = 0
    inversion_cases: list[tuple[int, int, int]] = field(default_factory=list)
    replicas: list[int] = field(default_factory=list)  # ISR members whose logs were compared
    batches: int = 0
    divergence: str = ""
    read_along: int = 0  # records the concurrent reader was served
    phantoms: list[tuple[int, int]] = field(default_factory=list)  # (offset, seq) served, not in the final log


def _consumer(bootstrap: str, **extra: str) -> ck.Consumer:
    return ck.Consumer({"bootstrap.servers": bootstrap, "group.id": "pylog-chaos-verify", "enable.auto.commit": False,
                        "enable.partition.eof": False, "log_level": 3, **extra})


def high_watermarks(c: ck.Consumer, topic: str, partitions: int, timeout: float = 60) -> dict[int, int]:
    """Each partition's end offset as the consumer's isolation level sees it (HW, or LSO for read_committed),
    asking again while the client's metadata still names a leader that moved (NOT_LEADER) after the faults."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return {p: c.get_watermark_offsets(ck.TopicPartition(topic, p), timeout=30, cached=False)[1]
                    for p in range(partitions)}
        except ck.KafkaException:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def read_back(bootstrap: str, topic: str, partitions: int,
              timeout: float = 120) -> dict[int, tuple[int, dict[int, int]]]:
    """Every record of every partition up to its high watermark: {partition: (hw, {offset: seq})}."""
    c = _consumer(bootstrap)
    try:
        hws = high_watermarks(c, topic, partitions)
        c.assign([ck.TopicPartition(topic, p, ck.OFFSET_BEGINNING) for p in range(partitions)])
        out: dict[int, dict[int, int]] = {p: {} for p in range(partitions)}
        pos = {p: 0 for p in range(partitions)}
        deadline = time.monotonic() + timeout
        while any(pos[p] < hws[p] for p in range(partitions)):
            if time.monotonic() > deadline:
                behind = {p: (pos[p], hws[p]) for p in range(partitions) if pos[p] < hws[p]}
                raise TimeoutError(f"reading back timed out; (position, high watermark) per partition: {behind}")
            for m in c.consume(10000, 1.0):
                if m.error() is not None:
                    raise RuntimeError(f"consumer error: {m.error()}")
                out[m.partition()][m.offset()] = int(m.value())
                pos[m.partition()] = m.offset() + 1
        return {p: (hws[p], out[p]) for p in range(partitions)}
    finally:
        c.close()


def check_records(acked: Acked, logs: dict[int, tuple[int, dict[int, int]]],
                  served: dict[int, dict[int, int]] | None = None) -> dict[int, PartitionCheck]:
    """Compare what was acknowledged, and what a consumer was served, with what the partitions hold."""
    checks = {}
    for p, (hw, records) in logs.items():
        chk = PartitionCheck(p, hw)
        for offset, seq in sorted((served or {}).get(p, {}).items()):
            chk.read_along += 1
            if records.get(offset) != seq:
                chk.phantoms.append((offset, seq))
        acks = acked.by_partition.get(p, [])
        chk.acked = len(acks)
        last = -1
        for seq, offset in acks:
            if records.get(offset) != seq:
                chk.lost.append((seq, offset))
            if offset <= last:
                chk.inversions += 1
                chk.inversion_cases += [(seq, offset, last)][:5 - len(chk.inversion_cases)]
            last = max(last, offset)
        copies = Counter(records.values())
        chk.duplicates = sum(n - 1 for n in copies.values() if n > 1)
        checks[p] = chk
    return checks


def dump_batches(log_dirs: list[Path], timeout: float = 120) -> dict[Path, list[dict]]:
    """Run the dump-log tool (`--output json`) over every segment of these partition dirs."""
    files = [str(f) for d in log_dirs for f in sorted(d.glob("*.log"))]
    if not files:
        return {d: [] for d in log_dirs}
    r = subprocess.run([sys.executable, "-m", "pylog.cli.dump_log", "--files", ",".join(files), "--output", "json"],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"pylog-dump-log exited {r.returncode}: {r.stderr.strip()[-500:]}")
    out: dict[Path, list[dict]] = {d: [] for d in log_dirs}
    for line in r.stdout.splitlines():
        obj = json.loads(line)
        out[Path(obj["file"]).parent].append(obj)
    return out


def _summary(objs: list[dict], hw: int) -> tuple[list[tuple], str]:
    """The batches below the high watermark as comparable tuples, plus anything odd about the file."""
    rows, odd = [], ""
    for o in objs:
        if o["type"] == "invalid_bytes":
            odd = f"{o['bytes']} invalid bytes at the end of {Path(o['file']).name}"
        elif o["type"] == "batch" and o["base_offset"] < hw:
            rows.append((o["base_offset"], o["last_offset"], o["partition_leader_epoch"], o["crc"], o["is_valid"]))
    return rows, odd


def compare_replicas(check: PartitionCheck, dirs: dict[int, Path]) -> None:
    """Diff the replicas' batches below the high watermark; fills check.replicas/batches/divergence."""
    dumps = dump_batches(list(dirs.values()))
    views = {bid: _summary(dumps[d], check.high_watermark) for bid, d in sorted(dirs.items())}
    check.replicas = sorted(views)
    problems = []
    ref_id = check.replicas[0]
    ref = views[ref_id][0]
    check.batches = len(ref)
    expected_offset = ref[0][0] if ref else 0
    for base, last, *_ in ref:
        if base != expected_offset:
            problems.append(f"broker {ref_id}: gap or overlap at offset {base} (expected {expected_offset})")
            break
        expected_offset = last + 1
    if expected_offset < check.high_watermark:
        problems.append(f"broker {ref_id}: log ends at {expected_offset} below the high watermark "
                        f"{check.high_watermark}")
    for bid, (rows, odd) in views.items():
        if odd:
            problems.append(f"broker {bid}: {odd}")
        if any(not r[4] for r in rows):
            problems.append(f"broker {bid}: a batch with a bad CRC")
        if bid != ref_id and rows != ref:
            i = next((i for i, (a, b) in enumerate(zip(rows, ref)) if a != b), min(len(rows), len(ref)))
            mine = rows[i] if i < len(rows) else None
            theirs = ref[i] if i < len(ref) else None
            problems.append(f"broker {bid} differs from broker {ref_id} at batch {i}: "
                            f"{_fmt(mine)} vs {_fmt(theirs)}")
    check.divergence = "; ".join(problems)


def replica_dir(data_dir: Path, name: str) -> Path | None:
    """A replica's directory in whichever of the broker's log dirs (all under its data dir) holds it."""
    found = [d for d in sorted(data_dir.glob(f"*/{name}")) if d.is_dir()]
    return found[0] if found else None


def compare_isr(cluster: Any, zk: Any, topic: str, checks: dict[int, PartitionCheck], settle_s: float = 30) -> None:
    """Diff each partition's in-sync replicas (ISR from ZooKeeper) below its check's high watermark, looking
    again for up to `settle_s` while they differ: a follower learns the final high watermark, and fetches
    what lies below it, on its next fetch after the leader moved it."""
    deadline = time.monotonic() + settle_s
    while True:
        got = zk.get_partition_states((topic, p) for p in checks)
        isr = {tp.partition: st.isr for tp, st in got.items() if st is not None}
        for p, chk in sorted(checks.items()):
            if not isr.get(p):
                chk.divergence = "no partition state or an empty ISR in ZooKeeper"
                continue
            dirs = {bid: replica_dir(cluster.brokers[bid].data_dir, f"{topic}-{p}") for bid in isr[p]}
            missing = sorted(bid for bid, d in dirs.items() if d is None)
            if missing:
                chk.divergence = f"in-sync replicas {missing} have no directory for {topic}-{p}"
                continue
            compare_replicas(chk, dirs)
        if all(not c.divergence for c in checks.values()) or time.monotonic() > deadline:
            return
        time.sleep(1.0)


def replica_checks(bootstrap: str, cluster: Any, zk: Any, topic: str, partitions: int) -> dict[int, PartitionCheck]:
    """The in-sync replicas of every partition of `topic` compared up to its current high watermark."""
    c = _consumer(bootstrap, **{"isolation.level": "read_uncommitted"})  # the high watermark, not the LSO
    try:
        checks = {p: PartitionCheck(p, hw) for p, hw in high_watermarks(c, topic, partitions).items()}
    finally:
        c.close()
    compare_isr(cluster, zk, topic, checks)
    return checks


def divergences(topic: str, checks: dict[int, PartitionCheck]) -> list[str]:
    """A finding for each partition whose replicas differ below the high watermark."""
    return [f"replicas-diverged: {topic}-{p}: {c.divergence}" for p, c in sorted(checks.items()) if c.divergence]


def _fmt(row: tuple | None) -> str:
    if row is None:
        return "(none)"
    return f"offsets {row[0]}-{row[1]} epoch {row[2]} crc {row[3]}"


def find_hanging(bootstrap: str, topic: str) -> list[str]:
    """The rows `pylog-transactions.sh find-hanging` prints for `topic` (any transaction still open)."""
    tool = Path(__file__).resolve().parents[2] / "bin" / "pylog-transactions.sh"
    done = subprocess.run([str(tool), "--bootstrap-server", bootstrap, "find-hanging", "--topic", topic,
                           "--max-transaction-timeout", "0"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return [f"find-hanging failed ({done.returncode}): {done.stderr.strip()[:300]}"]
    return [ln for ln in done.stdout.splitlines()[1:] if ln.strip()]
