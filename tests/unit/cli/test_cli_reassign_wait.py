"""--execute --wait: the progress arithmetic, the bar a person sees, and the bounded wait."""

import io

import pytest
from rich.console import Console

from pylog.cli.common import OperationError
from pylog.cli.reassign_logic import Ongoing
from pylog.cli.reassign_wait import Bar, Progress, follow, measure

from reassign_fakes import FakeCluster

A, B = ("t", 0), ("t", 1)


def test_bytes_copied_count_each_new_replica_against_the_largest_source():
    moving = {A: ([1, 2], [3]), B: ([1], [2, 3])}
    p = Progress(2)
    measure(moving, [], {(A, 1): 1000, (A, 2): 900, (A, 3): 250, (B, 1): 100, (B, 2): 100, (B, 3): 40}, p)
    assert (p.done, p.bytes_total, p.bytes_copied) == (0, 1000 + 2 * 100, 250 + 100 + 40)
    # A finished (its sources are gone now): it counts in full, and the total never shrinks.
    measure(moving, [A], {(A, 3): 1000, (B, 1): 100, (B, 2): 100, (B, 3): 100}, p)
    assert (p.done, p.bytes_total, p.bytes_copied, p.complete) == (1, 1200, 1200, False)
    q = Progress(2)
    measure(moving, [A, B], None, q)  # sizes unknown: partitions only
    assert (q.complete, q.bytes_total) == (True, None)


def test_follow_polls_until_every_partition_finished_and_draws_a_bar():
    c = FakeCluster("bootstrap-server", {1: None, 2: None, 3: None}, {A: [1, 2], B: [2, 3]},
                    ongoing={A: Ongoing((3, 1, 2), (3,), (1,)), B: Ongoing((1, 2, 3), (1,), (3,))},
                    sizes={(A, 1): 4_000_000, (A, 2): 4_000_000, (A, 3): 0, (B, 2): 2_000_000, (B, 1): 0})
    ticks = []
    clock = [0.0]

    def sleep(s):
        clock[0] += s
        ticks.append(s)
        if len(ticks) == 2:
            c.sizes[(A, 3)] = 3_000_000
            c.finish(B)
        if len(ticks) == 4:
            c.finish(A)
    out = io.StringIO()
    bar = Bar(Console(file=out, force_terminal=True, width=150))
    p = follow(c, {A: ([1, 2], [3]), B: ([2, 3], [1])}, timeout_s=60, bar=bar, sleep=sleep, clock=lambda: clock[0])
    assert (p.done, p.partitions, p.complete) == (2, 2, True)
    assert len(ticks) == 4
    drawn = out.getvalue()
    assert "Reassigning" in drawn and "partitions" in drawn and "MB" in drawn


def test_follow_gives_up_after_its_timeout():
    c = FakeCluster("zookeeper", {1: None, 2: None}, {A: [1]}, ongoing={A: Ongoing((2, 1), (2,), (1,))})
    clock = [0.0]

    def sleep(s):
        clock[0] += s
    with pytest.raises(OperationError, match=r"Timed out after 2 s waiting for the reassignment of 1 of 1 "
                                             r"partition\(s\) to complete; it continues"):
        follow(c, {A: ([1], [2])}, timeout_s=2, sleep=sleep, clock=lambda: clock[0])
