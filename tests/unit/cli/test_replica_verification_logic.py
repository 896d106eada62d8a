"""ReplicaVerificationTool's comparison (ReplicaBuffer.verifyCheckSum) on hand-made batches: what it verifies,
the lag it reports, and Kafka's lines for a checksum and an offset mismatch."""

import re

import pytest

from pylog.cli.replica_verification import OffsetMismatch, ReplicaData, Verifier
from pylog.protocol.records import build_batch, iter_batches

STAMP = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}"


def batches(values, base=0):
    """One single-record batch per value, at consecutive offsets from base."""
    buf = b"".join(build_batch([(None, v, [], 1000)], base_offset=base + i) for i, v in enumerate(values))
    return list(iter_batches(buf))


def test_replicas_that_agree_advance_to_the_lowest_high_watermark_and_report_the_lag():
    v = Verifier({("t", 0): 0}, report_interval_ms=0, last_report_ms=0)
    lines = v.verify({("t", 0): {1: ReplicaData(3, batches([b"a", b"b", b"c"])),
                                 2: ReplicaData(2, batches([b"a", b"b", b"c"]))}}, now_ms=1)
    assert v.offsets[("t", 0)] == 2
    assert len(lines) == 1 and re.fullmatch(
        STAMP + r": max lag is 1 for partition t-0 at offset 2 among 1 partitions", lines[0])


def test_a_replica_that_did_not_answer_holds_its_partition_back():
    v = Verifier({("t", 0): 0, ("t", 1): 0}, report_interval_ms=0, last_report_ms=0)
    lines = v.verify({("t", 0): {1: ReplicaData(2, batches([b"a", b"b"])), 2: ReplicaData()},
                      ("t", 1): {1: ReplicaData(1, batches([b"x"])), 2: ReplicaData(1, batches([b"x"]))}}, now_ms=1)
    assert v.offsets == {("t", 0): 0, ("t", 1): 1}
    assert lines[-1].endswith(": max lag is 2 for partition t-0 at offset 0 among 2 partitions")


def test_unmatched_checksum_is_reported_and_verification_goes_on():
    v = Verifier({("t", 0): 0}, report_interval_ms=10**9)
    lines = v.verify({("t", 0): {1: ReplicaData(2, batches([b"a", b"b"])), 2: ReplicaData(2, batches([b"a", b"X"]))}})
    assert v.offsets[("t", 0)] == 2
    assert len(lines) == 1 and re.fullmatch(
        STAMP + r": partition t-0 has unmatched checksum at offset 1; replica 1's checksum \d+; "
                r"replica 2's checksum \d+", lines[0])


def test_an_offset_mismatch_stops_the_tool():
    v = Verifier({("t", 0): 0}, report_interval_ms=10**9)
    with pytest.raises(OffsetMismatch, match=STAMP + r": partition t-0: replica 1's offset 0 doesn't match "
                                                     r"replica 2's offset 1"):
        v.verify({("t", 0): {1: ReplicaData(5, batches([b"a"])), 2: ReplicaData(5, batches([b"a"], base=1))}})
