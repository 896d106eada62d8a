"""The leader's ISR decision (pylog.broker.isr.decide_isr), by table: ISR, followers' state, now, lag -> new ISR."""

from __future__ import annotations

import pytest

from pylog.broker.isr import FollowerState, IsrChange, decide_isr

LAG = 10_000
LEADER = 1


def f(leo: int, caught_up_ms: int) -> FollowerState:
    """A follower at `leo` that last caught up to the leader's log end at `caught_up_ms`."""
    return FollowerState(leo=leo, last_caught_up_ms=caught_up_ms)


# (case, isr, replicas, followers, high watermark, epoch start offset, now, shrink) -> new ISR, lagging, caught up
CASES = [
    ("all in sync", [1, 2, 3], [1, 2, 3], {2: f(5, 0), 3: f(5, 0)}, 5, 0, 5_000, True, None),
    ("lag is inclusive", [1, 2], [1, 2], {2: f(0, 0)}, 0, 0, LAG, True, None),
    ("one past the lag", [1, 2, 3], [1, 2, 3], {2: f(5, 100), 3: f(3, 0)}, 3, 0, LAG + 1, True,
     IsrChange((1, 2), (3,), ())),
    ("both lag, order kept", [1, 3, 2], [1, 2, 3], {2: f(0, 0), 3: f(0, 0)}, 0, 0, LAG + 1, True,
     IsrChange((1,), (3, 2), ())),
    ("never fetched from this leader", [1, 2], [1, 2], {}, 0, 0, 0, True, IsrChange((1,), (2,), ())),
    ("the leader never lags", [1], [1], {}, 0, 0, 10 * LAG, True, None),
    ("reached the HW and the epoch start", [1, 2], [1, 2, 3], {2: f(4, 0), 3: f(4, 0)}, 4, 2, 0, True,
     IsrChange((1, 2, 3), (), (3,))),
    ("below the HW", [1, 2], [1, 2, 3], {2: f(4, 0), 3: f(3, 0)}, 4, 0, 0, True, None),
    ("at the HW but before this epoch's start", [1], [1, 2], {2: f(4, 0)}, 4, 6, 0, True, None),
    ("no fetch yet", [1], [1, 2], {}, 0, 0, 0, True, None),
    ("not assigned: never added", [1], [1], {2: f(9, 0)}, 0, 0, 0, True, None),
    ("shrink and expand at once", [1, 2], [1, 2, 3], {2: f(1, 0), 3: f(4, 20_000)}, 4, 0, 20_000, True,
     IsrChange((1, 3), (2,), (3,))),
    ("after a fetch: only adds", [1, 2], [1, 2, 3], {2: f(1, 0), 3: f(4, 20_000)}, 4, 0, 20_000, False,
     IsrChange((1, 2, 3), (), (3,))),
    ("after a fetch: a lagging member stays", [1, 2], [1, 2], {2: f(0, 0)}, 0, 0, 20_000, False, None),
    # A follower that stopped fetching (kill -9) keeps the offsets of its last fetch, at the HW while nothing is
    # written: once shrunk out it must not rejoin on them (the next fetch of a live follower asked).
    ("stopped fetching: not back on stale offsets", [1, 2], [1, 2, 3], {2: f(4, 20_000), 3: f(4, 0)}, 4, 0,
     LAG + 1, False, None),
    ("out of sync by the lag rule: not back", [1, 2], [1, 2, 3], {2: f(4, 20_000), 3: f(4, 0)}, 4, 0, LAG + 1,
     True, None),
]


@pytest.mark.parametrize("case,isr,replicas,followers,hw,epoch_start,now,shrink,expected", CASES,
                         ids=[c[0] for c in CASES])
def test_decide_isr(case, isr, replicas, followers, hw, epoch_start, now, shrink, expected):
    assert decide_isr(LEADER, isr, replicas, followers, hw, epoch_start, now, LAG, shrink) == expected
