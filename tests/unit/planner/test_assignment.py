"""Kafka's AdminUtils.assignReplicasToBrokers and createNewPartitionsAssignment, by Kafka's own vectors."""
import random

import pytest
from hypothesis import given, settings, strategies as st

from pylog.planner.assignment import (
    AdminOperationError, BrokerNotAvailableError, InvalidPartitionsError, InvalidReplicaAssignmentError,
    InvalidReplicationFactorError, assign_replicas_to_brokers, new_partitions_assignment,
    rack_alternated_broker_list,
)

RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def test_rack_unaware_vector_from_kafka_test_suite():
    # AdminRackAwareTest.testReplicaAssignment: brokers 0..4, 10 partitions, RF 3, fixedStartIndex 0.
    got = assign_replicas_to_brokers([(b, None) for b in range(5)], 10, 3, fixed_start_index=0)
    assert got == {0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
                   5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2]}
    assert list(got) == list(range(10))


def test_rack_alternated_list_matches_kafka_doc():
    assert rack_alternated_broker_list(RACKS) == [0, 3, 1, 5, 4, 2]


def test_rack_aware_example_from_kafka_doc_comment():
    got = assign_replicas_to_brokers(sorted(RACKS.items()), 7, 3, fixed_start_index=0)
    assert got == {0: [0, 3, 1], 1: [3, 1, 5], 2: [1, 5, 4], 3: [5, 4, 2], 4: [4, 2, 0], 5: [2, 0, 3],
                   6: [0, 4, 2]}


@pytest.mark.parametrize("args, exc, message", [
    ((0, 1), InvalidPartitionsError, "Number of partitions must be larger than 0."),
    ((3, 0), InvalidReplicationFactorError, "Replication factor must be larger than 0."),
    ((3, 6), InvalidReplicationFactorError, "Replication factor: 6 larger than available brokers: 5."),
])
def test_errors_carry_kafka_text(args, exc, message):
    with pytest.raises(exc) as err:
        assign_replicas_to_brokers([(b, None) for b in range(5)], *args)
    assert str(err.value) == message


def test_partial_racks_rejected():
    with pytest.raises(AdminOperationError, match=r"^Not all brokers have rack information for replica rack "
                                                  r"aware assignment\.$"):
        assign_replicas_to_brokers([(0, "a"), (1, None)], 1, 1)


def test_random_start_and_shift_come_from_two_draws_of_the_injected_rng():
    brokers = [(b, None) for b in range(7)]
    got = assign_replicas_to_brokers(brokers, 20, 3, rng=random.Random(42))
    r = random.Random(42)
    start, shift = r.randrange(7), r.randrange(7)
    # With start == shift the result equals the fixed-start form; otherwise compare to a manual draw.
    first = {p: (p + start) % 7 for p in range(20)}
    assert [got[p][0] for p in range(20)] == [first[p] for p in range(20)]
    assert got == assign_replicas_to_brokers(brokers, 20, 3, rng=random.Random(42))
    assert got[1][1] == (first[1] + 1 + shift % 6) % 7


@settings(max_examples=60, deadline=None)
@given(n_brokers=st.integers(1, 12), n_racks=st.integers(0, 5), n_parts=st.integers(1, 40),
       rf=st.integers(1, 4), seed=st.integers(0, 1000))
def test_placement_properties(n_brokers, n_racks, n_parts, rf, seed):
    rf = min(rf, n_brokers)
    brokers = [(b, None if n_racks == 0 else f"r{b % n_racks}") for b in range(n_brokers)]
    got = assign_replicas_to_brokers(brokers, n_parts, rf, rng=random.Random(seed))
    assert sorted(got) == list(range(n_parts))
    racks = dict(brokers)
    distinct_racks = len({r for _, r in brokers})
    for replicas in got.values():
        assert len(replicas) == rf and len(set(replicas)) == rf
        if n_racks:
            assert len({racks[b] for b in replicas}) == min(rf, distinct_racks)
    counts = [sum(b in r for r in got.values()) for b, _ in brokers]
    if n_racks == 0:
        # Leaders are round-robin, so first replicas are within one of each other.
        leaders = [sum(r[0] == b for r in got.values()) for b, _ in brokers]
        assert max(leaders) - min(leaders) <= 1
        assert sum(counts) == n_parts * rf


def test_add_partitions_continues_the_original_layout():
    brokers = [(b, None) for b in range(5)]
    full = assign_replicas_to_brokers(brokers, 10, 3, fixed_start_index=0)
    existing = {p: full[p] for p in range(3)}
    assert new_partitions_assignment("foo", existing, brokers, 5) == {3: full[3], 4: full[4]}


def test_add_partitions_start_index_is_first_broker_at_or_above_partition0_leader():
    brokers = [(1, None), (3, None), (5, None)]
    # Partition 0 led by 4: first broker with id >= 4 is 5 at index 2.
    got = new_partitions_assignment("foo", {0: [4, 1]}, brokers, 2)
    assert got == assign_replicas_to_brokers(brokers, 1, 2, fixed_start_index=2, start_partition_id=1)


def test_add_partitions_errors():
    brokers = [(b, None) for b in range(3)]
    with pytest.raises(InvalidPartitionsError) as err:
        new_partitions_assignment("foo", {0: [0], 1: [1], 2: [2]}, brokers, 2)
    assert str(err.value) == ("The number of partitions for a topic can only be increased. "
                              "Topic foo currently has 3 partitions, 2 would not be an increase.")
    with pytest.raises(AdminOperationError, match="^Unexpected existing replica assignment for topic 'foo', "
                                                  "partition id 0 is missing. Assignment: "):
        new_partitions_assignment("foo", {1: [0]}, brokers, 3)
    with pytest.raises(InvalidReplicaAssignmentError, match="^Duplicate brokers not allowed"):
        new_partitions_assignment("foo", {0: [0, 1]}, brokers, 2, {1: [2, 2]})
    with pytest.raises(BrokerNotAvailableError, match="^Some brokers specified for partition id 1 are not "
                                                      "available. Specified brokers: 0, 7, available brokers: "
                                                      "0, 1, 2.$"):
        new_partitions_assignment("foo", {0: [0, 1]}, brokers, 2, {1: [0, 7]})
    with pytest.raises(InvalidReplicaAssignmentError, match=r"partition 0 has 2 while partitions \[1\] have "
                                                            r"replication factors \[1\], respectively\.$"):
        new_partitions_assignment("foo", {0: [0, 1]}, brokers, 2, {1: [0]})
    assert new_partitions_assignment("foo", {0: [0, 1]}, brokers, 2, {1: [2, 0]}) == {1: [2, 0]}
