"""One partition replica on this broker: leader/follower role, ISR, high watermark, waiters.

As leader it tracks every follower's log end offset (the offset of its latest fetch), advances
the high watermark to the smallest LEO in the ISR, and decides who has fallen out of (or caught
up into) the ISR; the ISR itself only changes after ZooKeeper accepted the conditional write
(see ReplicaManager), so the high watermark never advances on an ISR the controller doesn't know.
"""

from __future__ import annotations

import asyncio
import logging

from pylog.broker.isr import UNKNOWN_OFFSET, FollowerState, IsrChange, decide_isr
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.partition")


class Partition:
    """A replica of (topic, index) hosted here; all mutation happens on the event loop."""

    def __init__(self, topic: str, index: int, broker_id: int, log_obj) -> None:
        self.topic = topic
        self.index = index
        self.broker_id = broker_id
        self.log = log_obj
        self.topic_id = None
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = -1  # zkVersion of the partition state znode
        self.controller_epoch = -1
        self.replicas: list[int] = []
        self.isr: list[int] = []
        self.adding: list[int] = []
        self.removing: list[int] = []
        self.followers: dict[int, FollowerState] = {}
        self.leader_epoch_start_offset = 0
        self.isr_update_pending = False
        self.fenced = False  # ZooKeeper refused our ISR write: our view is stale until the controller speaks
        self._fetch_waiters: set[asyncio.Future] = set()
        self._produce_waiters: list[tuple[int, asyncio.Future]] = []

    def __repr__(self) -> str:
        return f"{self.topic}-{self.index}"

    @property
    def is_leader(self) -> bool:
        """Whether this broker currently leads the partition."""
        return self.leader == self.broker_id

    def check_leader_epoch(self, requested: int) -> ErrorCode:
        """KIP-320 fencing of a client's current_leader_epoch (-1: not checked): NONE, or why it is refused."""
        if requested < 0 or requested == self.leader_epoch:
            return ErrorCode.NONE
        return ErrorCode.FENCED_LEADER_EPOCH if requested < self.leader_epoch else ErrorCode.UNKNOWN_LEADER_EPOCH

    def below_min_isr(self) -> bool:
        """Whether the ISR is smaller than min.insync.replicas, read from the log's config (its one source, kept
        current by TopicConfigs): acks=all is then refused before the append, or fails after it."""
        return len(self.isr) < self.log.config.min_insync_replicas

    @property
    def high_watermark(self) -> int:
        """The offset below which every record is committed (on every ISR member)."""
        return self.log.high_watermark

    # -- role changes (LeaderAndIsr) -------------------------------------------------------

    def apply_state(self, leader: int, leader_epoch: int, isr: list[int], replicas: list[int],
                    partition_epoch: int, controller_epoch: int, adding: list[int], removing: list[int]) -> None:
        """Take the controller's view of the partition."""
        self.leader, self.leader_epoch = leader, leader_epoch
        self.isr, self.replicas = list(isr), list(replicas)
        self.partition_epoch, self.controller_epoch = partition_epoch, controller_epoch
        self.adding, self.removing = list(adding), list(removing)
        self.fenced = False
        self.isr_update_pending = False

    def make_leader(self, now_ms: int) -> None:
        """Become leader under the current leader epoch."""
        self.log.epoch_cache.assign(self.leader_epoch, self.log.log_end_offset)
        self.leader_epoch_start_offset = self.log.log_end_offset
        # Followers' positions are unknown until they fetch; "caught up now" keeps the ISR from
        # shrinking before they had a chance (Kafka does the same on a new leader).
        self.followers = {r: FollowerState(last_caught_up_ms=now_ms) for r in self.replicas if r != self.broker_id}
        self.maybe_increment_high_watermark()
        self.notify_fetchers()

    def make_follower(self) -> None:
        """Become a follower: fail anything waiting for leader-side progress."""
        self.followers = {}
        self.fail_produce_waiters(ErrorCode.NOT_LEADER_OR_FOLLOWER)
        self.notify_fetchers()

    # -- leader bookkeeping ---------------------------------------------------------------

    def update_follower(self, replica_id: int, fetch_offset: int, now_ms: int, log_start_offset: int = -1) -> None:
        """Record a follower's fetch: its LEO is the offset it asks for, and its log start offset."""
        st = self.followers.get(replica_id)
        if st is None:
            if replica_id not in self.replicas:
                return
            st = self.followers[replica_id] = FollowerState()
        leader_leo = self.log.log_end_offset
        if fetch_offset >= leader_leo:
            st.last_caught_up_ms = max(st.last_caught_up_ms, now_ms)
        elif fetch_offset >= st.last_fetch_leader_leo >= 0:
            st.last_caught_up_ms = max(st.last_caught_up_ms, st.last_fetch_ms)
        st.leo = fetch_offset
        st.last_fetch_leader_leo = leader_leo
        st.last_fetch_ms = now_ms
        if log_start_offset != st.log_start_offset:
            st.log_start_offset = log_start_offset
            self.notify_fetchers()  # a DeleteRecords waiting for the low watermark rechecks
        self.maybe_increment_high_watermark()

    def maybe_increment_high_watermark(self) -> bool:
        """Advance the HW to the smallest LEO in the ISR; True when it moved."""
        if not self.is_leader:
            return False
        leos = [self.log.log_end_offset]
        for r in self.isr:
            if r != self.broker_id:
                st = self.followers.get(r)
                leos.append(st.leo if st is not None else UNKNOWN_OFFSET)
        new_hw = min(leos)
        if new_hw > self.log.high_watermark:
            self.log.high_watermark = new_hw
            self.complete_produce_waiters()
            self.notify_fetchers()
            return True
        return False

    def isr_change(self, now_ms: int, max_lag_ms: int, shrink: bool = True) -> IsrChange | None:
        """The ISR this leader should propose now (see pylog.broker.isr), or None: not leading, fenced, an
        ISR write in flight, or nothing to change."""
        if not self.is_leader or self.fenced or self.isr_update_pending:
            return None
        return decide_isr(self.broker_id, self.isr, self.replicas, self.followers, self.log.high_watermark,
                          self.leader_epoch_start_offset, now_ms, max_lag_ms, shrink)

    def check_enough_replicas(self, required_offset: int) -> ErrorCode | None:
        """None while the HW is below `required_offset`; else the acks=all outcome."""
        if not self.is_leader:
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self.log.high_watermark < required_offset:
            return None
        if self.below_min_isr():
            return ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return ErrorCode.NONE

    # -- waiters ------------------------------------------------------------------------------

    def add_produce_waiter(self, required_offset: int) -> asyncio.Future:
        """A future resolved with the acks=all outcome once the HW reaches `required_offset`."""
        fut = asyncio.get_running_loop().create_future()
        done = self.check_enough_replicas(required_offset)
        if done is not None:
            fut.set_result(done)
        else:
            self._produce_waiters.append((required_offset, fut))
        return fut

    def complete_produce_waiters(self) -> None:
        """Resolve the acks=all waiters whose offset is now committed."""
        if not self._produce_waiters:
            return
        keep = []
        for required, fut in self._produce_waiters:
            if fut.done():
                continue
            outcome = self.check_enough_replicas(required)
            if outcome is None:
                keep.append((required, fut))
            else:
                fut.set_result(outcome)
        self._produce_waiters = keep

    def fail_produce_waiters(self, code: ErrorCode) -> None:
        """Resolve every acks=all waiter with `code` (leadership lost, partition stopped)."""
        for _, fut in self._produce_waiters:
            if not fut.done():
                fut.set_result(code)
        self._produce_waiters = []

    def add_fetch_waiter(self, fut: asyncio.Future) -> None:
        """Wake `fut` on the next append or HW change."""
        self._fetch_waiters.add(fut)

    def remove_fetch_waiter(self, fut: asyncio.Future) -> None:
        """Stop waking `fut`."""
        self._fetch_waiters.discard(fut)

    def notify_fetchers(self) -> None:
        """New data or a new HW: wake long-polling fetches."""
        if self._fetch_waiters:
            for fut in self._fetch_waiters:
                if not fut.done():
                    fut.set_result(None)
            self._fetch_waiters.clear()


async def wait_for_change(partitions: list[Partition], timeout: float) -> None:
    """Return on the next append, high watermark or follower change of any of them, or after `timeout` s."""
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    for p in partitions:
        p.add_fetch_waiter(fut)
    # The timer resolves the same future the partitions do: awaiting it directly wakes this task one
    # event-loop turn sooner than asyncio.wait_for (whose own waiter sits between) on every long-poll wake.
    timer = loop.call_later(timeout, _wake, fut)
    try:
        await fut
    finally:
        timer.cancel()
        for p in partitions:
            p.remove_fetch_waiter(fut)


def _wake(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)
