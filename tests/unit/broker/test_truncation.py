"""Followers truncate by leader epoch, never by their high watermark alone (KIP-101, KIP-279).

The logs are real; the OffsetForLeaderEpoch round trip is the leader's epoch cache answering
for the follower's latest epoch, which is exactly what the handler returns.
"""

import pytest

from pylog.broker.fetcher import truncation_point
from support.logs import append


def converge(follower, leader, hw: int) -> int:
    """Run the follower's truncation rounds against the leader; returns the rounds it took."""
    for rounds in range(1, 10):
        latest = follower.epoch_cache.latest_epoch
        epoch, end = leader.epoch_cache.end_offset_for(latest)
        target, done = truncation_point(follower.epoch_cache.end_offset_for, follower.log_end_offset, hw, epoch, end)
        if target < follower.log_end_offset:
            follower.truncate_to(target)
        if done:
            return rounds
    raise AssertionError("truncation did not converge")


def values(log):
    return [bytes(r.value) for s in log.read(0, 1 << 30, None) for r in _records(s)]


def _records(fslice):
    from pylog.protocol import records
    data = fslice.read()
    out = []
    for h in records.iter_batches(data):
        out.extend(records.read_records(data[h.position:h.position + h.size]))
    return out


def test_scenario_1_a_stale_hw_does_not_cut_acknowledged_records(make_log):
    # B leads epoch 0 and has m1, m2 acknowledged; follower A has both but its HW says 1
    # (the HW that would have told it about m2 never arrived before it restarted).
    a, b = make_log("a"), make_log("b")
    append(b, [b"m1", b"m2"], 0)
    append(a, [b"m1", b"m2"], 0, leader=False)
    a.epoch_cache.assign(0, 0)
    converge(a, b, hw=1)
    assert values(a) == [b"m1", b"m2"]  # truncating to the HW would have dropped m2


def test_scenario_2_divergent_tails_are_cut_to_the_new_leaders_epoch_start(make_log):
    # Both crashed; B came back first without m2 (unflushed), led epoch 1 and wrote m3 at
    # offset 1. A still has m2 at offset 1 from epoch 0.
    a, b = make_log("a"), make_log("b")
    append(a, [b"m1", b"m2"], 0)
    append(b, [b"m1"], 0)
    b.epoch_cache.assign(1, 1)
    append(b, [b"m3"], 1)
    converge(a, b, hw=2)
    assert values(a) == [b"m1"]  # m2 is gone; A will fetch m3 from offset 1
    assert a.log_end_offset == 1


def test_kip_279_fast_leader_changes_take_several_rounds(make_log):
    # A wrote epochs 0 and 2; the leader B never saw epoch 2 and has epochs 0, 1 and 3. Its answer
    # for epoch 2 names epoch 1, which A lacks: A cuts to its end of epoch 0, asks again, and
    # only then learns epoch 0 ended at offset 1 on the leader.
    a, b = make_log("a"), make_log("b")
    append(a, [b"x0", b"a1"], 0)
    append(a, [b"a2", b"a3"], 2)
    append(b, [b"x0"], 0)
    append(b, [b"b1"], 1)
    append(b, [b"b2", b"b3"], 3)
    rounds = converge(a, b, hw=1)
    assert values(a) == [b"x0"]
    assert rounds == 2


@pytest.mark.parametrize("answer,follower_end,leo,hw,expected", [
    ((-1, -1), (0, 5), 5, 3, (3, True)),  # the leader knows no epochs: fall back to the HW
    ((4, 10), (4, 7), 7, 2, (7, True)),  # same epoch, leader has more: keep everything
    ((4, 5), (4, 7), 7, 2, (5, True)),  # same epoch, leader has less: cut to the leader's end
    ((3, 6), (2, 4), 9, 2, (4, False)),  # we lack epoch 3: cut to our end of epoch 2, ask again
    ((3, 6), (-1, -1), 9, 2, (2, True)),  # we have nothing at or below it: the HW
])
def test_truncation_point_table(answer, follower_end, leo, hw, expected):
    assert truncation_point(lambda _e: follower_end, leo, hw, *answer) == expected
