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

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING, Sequence

from pylog.common.types import TP
from pylog.coordinator.group.hashing import OFFSETS_TOPIC
from pylog.log.control import ControlType, Marker, build_marker
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.services import BrokerServices

MARKER_TIMEOUT_S = 30.0  # Kafka's request.timeout.ms default, which bounds the coordinator's marker requests


@dataclass(frozen=True)
class MarkerSet:
    """One WritableTxnMarker: a producer's COMMIT (or ABORT) for some partitions."""

    producer_id: int
    producer_epoch: int
    coordinator_epoch: int
    commit: bool
    partitions: Sequence[TP]


async def append_markers(broker: BrokerServices, entries: Sequence[MarkerSet]) -> list[dict[TP, ErrorCode]]:
    """Append every entry's markers to the partitions this broker leads; each partition's error, per entry."""
    rm = broker.replicas
    results: list[dict[TP, ErrorCode]] = [{} for _ in entries]
    waits: dict[tuple[int, TP], tuple[asyncio.Future, int]] = {}
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
            out = rm.append(p, bytearray(marker), -1, from_coordinator=True)
            results[i][tp] = out.error
            if out.error == ErrorCode.NONE:
                waits[(i, tp)] = (p.add_produce_waiter(out.last_offset + 1), out.last_offset)
    pending = [f for f, _ in waits.values() if not f.done()]
    if pending:
        await asyncio.wait(pending, timeout=MARKER_TIMEOUT_S)
    for (i, tp), (fut, offset) in waits.items():
        err = results[i][tp] = ErrorCode(fut.result()) if fut.done() else ErrorCode.REQUEST_TIMED_OUT
        if tp[0] == OFFSETS_TOPIC and err == ErrorCode.NONE and broker.groups is not None:
            broker.groups.coordinator.on_txn_marker(tp[1], entries[i].producer_id, entries[i].commit, offset)
    return results
