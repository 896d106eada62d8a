"""Appending transaction markers to the partitions this broker leads: the work of WriteTxnMarkers.

Shared by the WriteTxnMarkers handler and by the transaction coordinator's marker channel when a
partition's leader is this broker, which then skips the request to itself over loopback (its
encoding, two socket writes and the decoding: most of a small transaction's marker cost).

Each partition gets one COMMIT or ABORT control batch with the producer's id and epoch and the
coordinator epoch (pylog/log/control.py), appended like an acks=all produce: it is answered once the
whole ISR has it, or REQUEST_TIMED_OUT. A marker whose coordinator epoch is below the one of the
producer's last marker there is TRANSACTION_COORDINATOR_FENCED (a newer coordinator owns the id). A
marker written to a `__consumer_offsets` partition also settles the producer's transactional offset
commits there (the group coordinator commits or drops them), as Kafka's handler does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from pylog.broker.delayed_produce import Append
from pylog.common.types import TP
from pylog.coordinator.group.records import OFFSETS_TOPIC
from pylog.log.control import ControlType, Marker, build_marker
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.replica_manager import ReplicaManager

# A marker was written to a `__consumer_offsets` partition: (partition, producer id, commit, its offset).
OffsetsMarker = Callable[[int, int, bool, int], None]
MARKER_TIMEOUT_MS = 30_000  # Kafka's request.timeout.ms default, which bounds the coordinator's marker requests


@dataclass(frozen=True)
class MarkerSet:
    """One WritableTxnMarker: a producer's COMMIT (or ABORT) for some partitions."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    commit: bool
    partitions: Sequence[TP]


async def append_markers(rm: ReplicaManager, entries: Sequence[MarkerSet],
                         offsets_marker: OffsetsMarker | None) -> list[dict[TP, ErrorCode]]:
    """Append every entry's markers to the partitions this broker leads; each partition's error, per entry.
    `offsets_marker` hears of each one written to a `__consumer_offsets` partition."""
    results: list[dict[TP, ErrorCode]] = [{} for _ in entries]
    appends: list[Append] = []
    for i, m in enumerate(entries):
        marker = build_marker(Marker(m.producer_id, m.producer_epoch,
                                     ControlType.COMMIT if m.commit else ControlType.ABORT, m.coordinator_epoch))
        for tp in m.partitions:
            p, err = rm.leader_partition(*tp)
            if p is None:
                results[i][tp] = err
                continue
            entry = p.log.producer_state.producers.get(m.producer_id)
            if entry is not None and m.coordinator_epoch < entry.coordinator_epoch:
                results[i][tp] = ErrorCode.TRANSACTION_COORDINATOR_FENCED
                continue
            results[i][tp] = ErrorCode.NONE  # its place, in request order; the append's answer replaces it
            appends.append(Append((i, tp), p, bytearray(marker)))
    delayed = rm.append_records(appends, -1, MARKER_TIMEOUT_MS, from_coordinator=True)
    await delayed.wait()
    for (i, tp) in delayed.outcomes:
        out = delayed.result((i, tp))
        results[i][tp] = out.error
        if tp[0] == OFFSETS_TOPIC and out.error == ErrorCode.NONE and offsets_marker is not None:
            offsets_marker(tp[1], entries[i].producer_id, entries[i].commit, out.last_offset)
    return results
