"""The one acks=all wait (DelayedProduce) on real leader replicas: answered per partition as the high watermark
passes each append, REQUEST_TIMED_OUT at the deadline, and a commit after the deadline does not change that answer."""

from __future__ import annotations

import asyncio

from pylog.broker.delayed_produce import AppendOutcome, DelayedProduce
from pylog.broker.partition import Partition
from pylog.log import LogConfig
from pylog.protocol.errors import ErrorCode
from support.logs import append


def leader(make_log, name: str, isr=(1, 2), min_isr=1) -> Partition:
    p = Partition(name, 0, 1, make_log(name))
    p.apply_state(1, 0, list(isr), [1, 2], 0, 1, [], [])
    p.log.update_config(LogConfig(min_insync_replicas=min_isr))
    p.make_leader(0)
    return p


def appended(p: Partition) -> AppendOutcome:
    append(p.log, [b"v"], 0)
    p.maybe_increment_high_watermark()  # as the replica manager's append does: a lone ISR commits at once
    return AppendOutcome(ErrorCode.NONE, p.log.log_end_offset - 1, p.log.log_end_offset - 1)


def test_each_append_is_answered_on_its_own_and_the_late_one_times_out(make_log):
    async def run():
        a, b, alone = leader(make_log, "a"), leader(make_log, "b"), leader(make_log, "c", isr=(1,))
        delayed = DelayedProduce(timeout_ms=100)
        for key, p in (("a", a), ("b", b), ("c", alone)):
            delayed.add(key, p, appended(p), acks=-1)
        delayed.add("refused", a, AppendOutcome(ErrorCode.NOT_ENOUGH_REPLICAS), acks=-1)
        assert delayed.pending
        a.update_follower(2, 1, now_ms=1)  # a's follower has the record; b's never fetches
        await delayed.wait()
        assert [delayed.result(k).error for k in ("a", "b", "c", "refused")] == [
            ErrorCode.NONE, ErrorCode.REQUEST_TIMED_OUT, ErrorCode.NONE, ErrorCode.NOT_ENOUGH_REPLICAS]
        assert (delayed.result("a").base_offset, delayed.result("b").base_offset) == (0, -1)
        b.update_follower(2, 1, now_ms=2)  # the record committed after the deadline: the answer stays
        assert delayed.result("b").error == ErrorCode.REQUEST_TIMED_OUT
    asyncio.run(run())


def test_acks_1_does_not_wait(make_log):
    async def run():
        p = leader(make_log, "t")
        delayed = DelayedProduce(timeout_ms=0)
        delayed.add("t", p, appended(p), acks=1)
        assert not delayed.pending
        await delayed.wait()
        assert delayed.result("t") == AppendOutcome(ErrorCode.NONE, 0, 0)
    asyncio.run(run())


def test_one_partition_is_answered_when_its_follower_fetches_or_times_out_at_the_deadline(make_log):
    # One pending partition takes the short path (its waiter awaited directly, a timer at the deadline).
    async def run():
        p, q = leader(make_log, "one"), leader(make_log, "late")
        fast, slow = DelayedProduce(timeout_ms=5000), DelayedProduce(timeout_ms=50)
        fast.add("one", p, appended(p), acks=-1)
        slow.add("late", q, appended(q), acks=-1)
        asyncio.get_running_loop().call_later(0.02, p.update_follower, 2, 1, 1)
        t0 = asyncio.get_running_loop().time()
        await fast.wait()
        assert fast.result("one") == AppendOutcome(ErrorCode.NONE, 0, 0)
        assert asyncio.get_running_loop().time() - t0 < 2  # answered by the fetch, not the 5 s deadline
        await slow.wait()
        assert slow.result("late").error == ErrorCode.REQUEST_TIMED_OUT
        q.update_follower(2, 1, now_ms=2)  # committed after the deadline: the answer stays
        assert slow.result("late").error == ErrorCode.REQUEST_TIMED_OUT
        assert q.log.high_watermark == 1
    asyncio.run(run())
