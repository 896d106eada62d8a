"""High watermark and ISR arithmetic of a leader replica, on a real log."""

import asyncio


from support.logs import append
from pylog.broker.isr import IsrChange
from pylog.broker.partition import Partition
from pylog.log import LogConfig
from pylog.protocol.errors import ErrorCode


def leader(make_log, replicas=(1, 2, 3), isr=(1, 2, 3), min_isr=2, now=0) -> Partition:
    p = Partition("t", 0, 1, make_log())
    p.apply_state(1, 0, list(isr), list(replicas), 0, 1, [], [])
    p.log.update_config(LogConfig(min_insync_replicas=min_isr))
    p.make_leader(now)
    return p


def test_hw_is_the_smallest_leo_in_the_isr(make_log):
    p = leader(make_log)
    append(p.log, [b"a", b"b", b"c"], 0)
    assert p.high_watermark == 0  # followers' positions unknown yet
    p.update_follower(2, 3, now_ms=10)
    assert p.high_watermark == 0
    p.update_follower(3, 2, now_ms=10)
    assert p.high_watermark == 2
    p.update_follower(3, 3, now_ms=11)
    assert p.high_watermark == 3


def test_hw_never_moves_back_and_ignores_non_isr_replicas(make_log):
    p = leader(make_log, isr=(1, 2))
    append(p.log, [b"a", b"b"], 0)
    p.update_follower(2, 2, now_ms=1)
    assert p.high_watermark == 2
    p.update_follower(3, 0, now_ms=1)  # replica 3 is assigned but out of sync: no effect
    p.update_follower(2, 1, now_ms=2)  # a stale fetch offset can't lower it
    assert p.high_watermark == 2


def test_lagging_follower_is_out_of_sync_after_the_lag_time(make_log):
    p = leader(make_log, now=0)
    append(p.log, [b"a"], 0)
    p.update_follower(2, 1, now_ms=100)  # caught up at 100
    p.update_follower(3, 0, now_ms=100)  # behind since becoming leader at 0
    assert p.isr_change(now_ms=5000, max_lag_ms=10_000) is None
    assert p.isr_change(now_ms=10_050, max_lag_ms=10_000) == IsrChange((1, 2), (3,), ())
    assert p.isr_change(now_ms=10_200, max_lag_ms=10_000) == IsrChange((1,), (2, 3), ())
    assert p.isr_change(now_ms=10_200, max_lag_ms=10_000, shrink=False) is None  # a fetch only adds


def test_follower_rejoins_when_it_reaches_the_hw_and_the_epoch_start(make_log):
    p = leader(make_log, isr=(1, 2))
    append(p.log, [b"a", b"b"], 0)
    p.update_follower(2, 2, now_ms=1)
    p.update_follower(3, 1, now_ms=1)
    assert p.isr_change(now_ms=2, max_lag_ms=10_000, shrink=False) is None
    p.update_follower(3, 2, now_ms=2)
    assert p.isr_change(now_ms=2, max_lag_ms=10_000, shrink=False) == IsrChange((1, 2, 3), (), (3,))
    p.isr_update_pending = True  # a write in flight: no second proposal
    assert p.isr_change(now_ms=2, max_lag_ms=10_000) is None


def test_a_follower_that_stopped_fetching_stays_out_once_shrunk(make_log):
    # Broker 3 is kill -9'd after fetching everything: the leader shrinks it out after the lag time, and the
    # next fetch of broker 2 must not add it back on its last offsets (CI's Prometheus test saw the ISR of
    # a dead follower flap, and the controller's removal skip it while it was out for a moment).
    p = leader(make_log, now=0)
    append(p.log, [b"a"], 0)
    p.update_follower(2, 1, now_ms=100)
    p.update_follower(3, 1, now_ms=100)
    assert p.high_watermark == 1
    change = p.isr_change(now_ms=10_101, max_lag_ms=10_000)
    assert change is not None and change.isr == (1,) and set(change.lagging) == {2, 3}
    p.isr = [1]  # as update_isr adopts it
    p.update_follower(2, 1, now_ms=10_200)  # 2 is alive and caught up: back in; 3 is not
    assert p.isr_change(now_ms=10_200, max_lag_ms=10_000, shrink=False) == IsrChange((1, 2), (), (2,))
    p.isr = [1, 2]
    p.update_follower(2, 1, now_ms=10_700)
    assert p.isr_change(now_ms=10_700, max_lag_ms=10_000, shrink=False) is None
    p.update_follower(3, 1, now_ms=10_800)  # 3 restarted and fetches again: back in
    assert p.isr_change(now_ms=10_800, max_lag_ms=10_000, shrink=False) == IsrChange((1, 2, 3), (), (3,))


def test_acks_all_waits_for_the_hw_and_checks_min_isr(make_log):
    async def run():
        p = leader(make_log, isr=(1, 2), min_isr=2)
        append(p.log, [b"a"], 0)
        fut = p.add_produce_waiter(1)
        assert not fut.done()
        p.update_follower(2, 1, now_ms=1)
        assert fut.result() == ErrorCode.NONE
        append(p.log, [b"b"], 0)
        fut2 = p.add_produce_waiter(2)
        p.isr = [1]  # the ISR shrank below min.insync.replicas while we waited
        p.maybe_increment_high_watermark()
        assert fut2.result() == ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        append(p.log, [b"c"], 0)
        fut3 = p.add_produce_waiter(3)
        p.make_follower()  # leadership lost: the waiter must not hang
        assert fut3.result() == ErrorCode.NOT_LEADER_OR_FOLLOWER
    asyncio.run(run())


def test_new_leader_records_its_epoch_start(make_log):
    p = leader(make_log)
    append(p.log, [b"a", b"b"], 0)
    p.apply_state(1, 5, [1, 2, 3], [1, 2, 3], 1, 1, [], [])
    p.make_leader(0)
    assert p.leader_epoch_start_offset == 2
    assert p.log.epoch_cache.end_offset_for(5) == (5, 2)
    assert p.log.epoch_cache.end_offset_for(0) == (0, 2)


def test_current_leader_epoch_is_fenced_in_one_place(make_log):
    # The one check Fetch, ListOffsets and OffsetForLeaderEpoch share (KIP-320).
    p = Partition("t", 0, 1, make_log())
    p.apply_state(1, 5, [1], [1], 0, 1, [], [])
    table = {-1: ErrorCode.NONE, 5: ErrorCode.NONE, 4: ErrorCode.FENCED_LEADER_EPOCH,
             0: ErrorCode.FENCED_LEADER_EPOCH, 6: ErrorCode.UNKNOWN_LEADER_EPOCH}
    assert {epoch: p.check_leader_epoch(epoch) for epoch in table} == table


def test_a_long_poll_returns_on_the_next_hw_change_or_at_its_timeout_and_can_be_cancelled(make_log):
    from pylog.broker.partition import wait_for_change

    async def run():
        p = leader(make_log, isr=(1, 2))
        append(p.log, [b"a"], 0)
        loop = asyncio.get_running_loop()
        loop.call_later(0.02, p.update_follower, 2, 1, 1)  # the HW moves to 1: the poll wakes
        t0 = loop.time()
        await wait_for_change([p], 5)
        assert loop.time() - t0 < 2 and p.high_watermark == 1
        t0 = loop.time()
        await wait_for_change([p], 0.05)  # nothing changes: back at the timeout
        assert 0.04 <= loop.time() - t0 < 2
        poll = loop.create_task(wait_for_change([p], 5))
        await asyncio.sleep(0.01)
        poll.cancel()  # the fetch's connection closed
        await asyncio.gather(poll, return_exceptions=True)
        assert poll.cancelled()
        p.maybe_increment_high_watermark()  # a later change finds no stale waiter to trip over
    asyncio.run(run())
