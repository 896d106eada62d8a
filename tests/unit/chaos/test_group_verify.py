"""The groups-chaos verdict on hand-made member logs: each check fires on the fault it is for, and only then."""

from __future__ import annotations

from pylog.chaos.group_verify import check_group, parse_member
from pylog.chaos.workload import Acked

ACKED = Acked(by_partition={0: [(0, 0), (2, 1), (4, 2)], 1: [(1, 0), (3, 1)]})
HWS = {0: 3, 1: 2}
GOOD = ["S", "A 0,1", "P 0 0 0", "P 1 0 1", "C 0 1", "C 1 1", "P 0 1 2", "P 0 2 4", "P 1 1 3", "C 0 3", "C 1 2"]


def verdict(*logs: list[str], history=None, final=None, assignment=None, state="STABLE", live=1):
    members = [parse_member(f"m{i}", log) for i, log in enumerate(logs)]
    return check_group(ACKED, members, history or {0: [1, 3], 1: [1, 2]}, final or dict(HWS), HWS,
                       {"m0": [0, 1]} if assignment is None else assignment, state, live)


def test_a_clean_run_passes_and_counts():
    v = verdict(GOOD)
    assert v.ok, v.findings
    assert (v.processed, v.duplicates, v.commits) == (5, 0, 4)


def test_a_killed_member_reprocessing_its_uncommitted_batch_is_a_duplicate_not_a_finding():
    killed = ["S", "A 0,1", "P 0 0 0", "P 1 0 1", "C 0 1", "C 1 1", "P 0 1 2"]  # dies before committing 0@2
    after = ["S", "A 0,1", "P 0 1 2", "P 0 2 4", "P 1 1 3", "F 0 3 NOT_COORDINATOR", "C 0 3", "C 1 2"]
    v = verdict(killed, after, assignment={"m1": [0, 1]})
    assert v.ok, v.findings
    assert v.duplicates == 1 and dict(v.failed_commits) == {"NOT_COORDINATOR": 1}


def test_an_acknowledged_record_never_processed():
    v = verdict(["S", "A 0,1", "P 0 0 0", "P 0 1 2", "P 1 0 1", "P 1 1 3"], final={0: 3, 1: 2})
    assert any("acknowledged records never processed" in f and "(0, 2, 4)" in f for f in v.findings)


def test_a_committed_offset_going_backwards():
    v = verdict(GOOD, history={0: [1, 3, 1, 3], 1: [2]})
    assert v.findings == ["partition 0: the committed offset went backwards from 3 to 1"]


def test_a_gap_within_one_assignment_is_a_skip_but_a_new_assignment_may_start_elsewhere():
    skipping = ["S", "A 0", "P 0 0 0", "P 0 2 4"]
    assert any("jumped from offset 0 to 2" in f for f in verdict(skipping, GOOD).findings)
    moved = ["S", "A 0", "P 0 0 0", "A 0", "P 0 2 4"]  # reassigned: starts at the committed offset
    assert not any("jumped" in f for f in verdict(moved, GOOD).findings)


def test_committed_beyond_what_was_processed_is_a_skip():
    v = verdict(["S", "A 0,1", "P 0 0 0", "P 0 2 4", "A 0,1", "P 1 0 1", "P 1 1 3"], history={0: [3], 1: [2]})
    assert any("partition 0: 1 offsets below the committed 3 never processed, first [1]" == f for f in v.findings)


def test_the_final_commit_must_reach_the_high_watermark_and_keep_every_acknowledged_commit():
    v = verdict(GOOD, final={0: 2, 1: 2})
    assert "partition 0: final committed offset 2 is below an acknowledged commit of 3" in v.findings
    assert "partition 0: final committed offset 2, high watermark 3" in v.findings


def test_the_group_must_end_stable_with_each_partition_assigned_once():
    assert verdict(GOOD, state="PREPARING_REBALANCE").findings == ["the group ended PREPARING_REBALANCE, not Stable"]
    assert verdict(GOOD, live=2).findings == ["the group ended with 1 members, 2 members are running"]
    twice = verdict(GOOD, assignment={"m0": [0, 1], "m1": [1]}, live=2).findings
    assert len(twice) == 1 and "exactly one member" in twice[0]
    assert verdict(GOOD, assignment={"m0": [0]}).findings[0].startswith("final assignment")
    lost = check_group(ACKED, [parse_member("m0", GOOD)], {}, dict(HWS), HWS, None, "not described (timed out)", 1)
    assert lost.findings == ["the group could not be described at the end: not described (timed out)"]
