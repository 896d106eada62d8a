"""The ownership both coordinators share: leadership of a partition -> load -> serve -> unload, as Kafka answers."""

from __future__ import annotations

import asyncio

from pylog.coordinator.ownership import Ownership, partition_for
from pylog.protocol.errors import ErrorCode as E


class Topic:
    """Leader epochs per partition (None: not the leader) and a log to read, with a gate to hold a read."""

    def __init__(self) -> None:
        self.epochs: dict[int, int | None] = {0: 3}
        self.reads: list[int] = []
        self.fail = False
        self.gate = asyncio.Event()
        self.gate.set()
        self.installed: list[tuple[int, int, str]] = []
        self.dropped: list[int] = []

    async def read(self, p: int) -> str:
        self.reads.append(p)
        await self.gate.wait()
        if self.fail:
            raise OSError("disk hiccup")
        return f"state of {p}"

    def ownership(self) -> Ownership[str]:
        return Ownership("__t", self.epochs.get, self.read, lambda p, e, s: self.installed.append((p, e, s)),
                         self.dropped.append)


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 5))


def test_a_led_partition_answers_load_in_progress_until_loaded_then_none():
    async def go():
        t = Topic()
        o = t.ownership()
        t.gate.clear()
        assert [o.check(0), o.check(0)] == [E.COORDINATOR_LOAD_IN_PROGRESS] * 2  # one load for both
        assert o.loading(0) and o.owned() == []
        t.gate.set()
        await o.wait(0)
        assert o.check(0) == E.NONE and t.reads == [0] and t.installed == [(0, 3, "state of 0")]
        assert o.owned() == [0] and o.epoch(0) == 3
    run(go())


def test_not_the_leader_is_not_coordinator_and_forgets_the_partition():
    async def go():
        t = Topic()
        o = t.ownership()
        o.check(0)
        await o.wait(0)
        t.epochs[0] = None
        assert o.check(0) == E.NOT_COORDINATOR and 0 not in o.loaded and 0 in t.dropped
        assert o.check(1) == E.NOT_COORDINATOR and o.epoch(0) is None
    run(go())


def test_a_new_epoch_reloads_and_a_load_overtaken_by_leadership_is_discarded():
    async def go():
        t = Topic()
        o = t.ownership()
        o.check(0)
        await o.wait(0)
        t.epochs[0] = 4  # leader again, at a newer epoch: the state may be stale
        t.gate.clear()
        assert o.check(0) == E.COORDINATOR_LOAD_IN_PROGRESS and 0 not in o.loaded
        t.epochs[0] = 5  # and again while reading: the epoch-4 read is cancelled, epoch 5 loads
        assert o.check(0) == E.COORDINATOR_LOAD_IN_PROGRESS
        t.gate.set()
        await o.wait(0)
        assert o.check(0) == E.NONE and o.loaded == {0: 5} and t.installed[-1][1] == 5
        assert [e for _, e, _ in t.installed] == [3, 5]
    run(go())


def test_a_failed_load_is_retried_by_the_next_request():
    async def go():
        t = Topic()
        o = t.ownership()
        t.fail = True
        assert o.check(0) == E.COORDINATOR_LOAD_IN_PROGRESS
        await o.wait(0)
        assert not o.loading(0) and 0 not in o.loaded
        t.fail = False
        assert o.check(0) == E.COORDINATOR_LOAD_IN_PROGRESS
        await o.wait(0)
        assert o.check(0) == E.NONE and t.reads == [0, 0]
    run(go())


def test_one_hash_for_group_and_transactional_ids_as_kafka():
    # Kafka: Utils.abs("app".hashCode) % 50; hashCode("app") = 96801.
    assert partition_for("app", 50) == 96801 % 50
    assert partition_for("polygenelubricants", 50) == 0  # hashCode is Integer.MIN_VALUE: abs gives 0
