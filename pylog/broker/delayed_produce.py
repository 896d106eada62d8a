"""Appends waiting for acks=all: Kafka's DelayedProduce, the one wait every leader-side writer shares.

The Produce handler, the coordinators' internal topics and the transaction markers all append as
leader through ReplicaManager.append_records and get one of these back. An acks=all append is done
when the high watermark passed it (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR is then
below min.insync.replicas), when leadership is lost (the partition fails its waiters), or at the
deadline (REQUEST_TIMED_OUT). The deadline counts from the append, not from when the wait starts: a
Produce response queued behind slower ones does not get a longer timeout.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Hashable, NamedTuple, Sequence

from pylog.protocol import records
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.broker.partition import Partition


class AppendOutcome(NamedTuple):
    """A leader append's result for the Produce response."""

    error: ErrorCode
    base_offset: int = -1
    last_offset: int = -1
    record_errors: Sequence[tuple[int, str]] = ()  # (index in batch, message), INVALID_RECORD only
    message: str | None = None
    duplicate: bool = False  # an idempotent producer's retry answered with the original offsets


class Append(NamedTuple):
    """One partition's records to append as leader; `key` names it in the DelayedProduce."""

    key: Hashable
    partition: Partition
    records: bytearray
    headers: list[records.BatchHeader] | None = None  # a coordinator's own batch: already parsed


def _time_out(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(ErrorCode.REQUEST_TIMED_OUT)


class DelayedProduce:
    """The outcomes of a set of appends and, for acks=all, their wait for the ISR."""

    def __init__(self, timeout_ms: int) -> None:
        self.deadline = asyncio.get_running_loop().time() + max(timeout_ms, 0) / 1000
        self.outcomes: dict[Hashable, AppendOutcome] = {}
        self._acked: dict[Hashable, ErrorCode] = {}  # acks=all appends the ISR already answered
        self._waits: dict[Hashable, asyncio.Future] = {}

    def add(self, key: Hashable, p: Partition, outcome: AppendOutcome, acks: int) -> None:
        """Record an append's outcome; a successful acks=all one waits for the high watermark to pass it."""
        self.outcomes[key] = outcome
        if acks != -1 or outcome.error != ErrorCode.NONE:
            return
        required = outcome.last_offset + 1
        done = p.check_enough_replicas(required)
        if done is not None:  # an ISR of this broker alone: no future, loop turn or timer
            self._acked[key] = ErrorCode(done)
        else:
            self._waits[key] = p.add_produce_waiter(required)

    @property
    def pending(self) -> bool:
        """Whether some acks=all append still waits for its followers."""
        return any(not f.done() for f in self._waits.values())

    async def wait(self) -> None:
        """Until every acks=all append is answered or the deadline passed; the late ones are dropped from their
        partition's waiters (they answer REQUEST_TIMED_OUT)."""
        pending = [f for f in self._waits.values() if not f.done()]
        if not pending:
            return
        loop = asyncio.get_running_loop()
        remaining = self.deadline - loop.time()
        try:
            if remaining <= 0:
                return
            if len(pending) == 1:
                # One partition (every commit, most produces): await its waiter itself, a timer answering
                # it REQUEST_TIMED_OUT at the deadline; asyncio.wait's waiter and callbacks cost a loop turn.
                timer = loop.call_later(remaining, _time_out, pending[0])
                try:
                    await pending[0]
                finally:
                    timer.cancel()
            else:
                await asyncio.wait(pending, timeout=remaining)
        finally:  # also when the waiter itself is cancelled (its connection closed): nobody needs them now
            for f in pending:
                if not f.done():
                    f.cancel()

    def result(self, key: Hashable) -> AppendOutcome:
        """The append's final outcome: its acks=all answer folded in (offsets -1 on an error)."""
        out = self.outcomes[key]
        if key in self._acked:
            err = self._acked[key]
        elif key in self._waits:
            fut = self._waits[key]
            err = ErrorCode(fut.result()) if fut.done() and not fut.cancelled() else ErrorCode.REQUEST_TIMED_OUT
        else:
            return out
        return out if err == ErrorCode.NONE else out._replace(error=err, base_offset=-1, last_offset=-1)
