"""ListOffsets MAX_TIMESTAMP (-3): the record carrying the largest timestamp (KAFKA-16310), not its batch's end."""

import struct

import pytest

from pylog.protocol.records import build_batch, compute_crc, validate_batches

from logtest import BASE_TS


def _append(log, timestamps, compression=0):
    buf = bytearray(build_batch([(None, b"v", [], ts) for ts in timestamps], compression=compression))
    return log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)


@pytest.mark.parametrize("compression", [0, 1, 2, 3, 4])
def test_max_timestamp_is_the_record_not_the_batch_end(open_log, compression):
    log = open_log()
    _append(log, [BASE_TS + 100, BASE_TS + 400, BASE_TS + 200], compression)
    assert log.offset_for_timestamp(-3) == (1, BASE_TS + 400)
    # The time index keeps Kafka's semantics: the last offset of the batch holding the max.
    assert log.active_segment.offset_of_max_timestamp == 2


def test_max_timestamp_across_segments_ties_and_reopen(open_log):
    log = open_log(segment_bytes=400)
    _append(log, [BASE_TS + 5, BASE_TS + 900, BASE_TS + 7])          # offsets 0-2, max at 1
    _append(log, [BASE_TS + 1, BASE_TS + 2])                          # 3-4
    log.roll()
    _append(log, [BASE_TS + 300, BASE_TS + 900, BASE_TS + 900])       # 5-7: a tie, later segment
    _append(log, [BASE_TS + 10])
    assert len(log.segments) == 2
    # Ties go to the earliest record with that timestamp, as Kafka's maxBy/first-match does.
    assert log.max_timestamp_offset() == (1, BASE_TS + 900)
    _append(log, [BASE_TS + 50, BASE_TS + 950, BASE_TS + 950, BASE_TS + 20])  # 9-12
    assert log.max_timestamp_offset() == (10, BASE_TS + 950)
    log.close()
    reopened = open_log(recovery_point=0)  # recovery rebuilds indexes and the segments' max timestamps
    assert reopened.max_timestamp_offset() == (10, BASE_TS + 950)


def test_max_timestamp_with_log_append_time(open_log):
    log = open_log(message_timestamp_type="LogAppendTime")
    buf = bytearray(build_batch([(None, b"v", [], 5), (None, b"v", [], 9)]))
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS + 7)
    # Every record carries the append time; the first one is the answer.
    assert log.max_timestamp_offset() == (0, BASE_TS + 7)


def test_empty_log_has_no_max_timestamp(open_log):
    assert open_log().max_timestamp_offset() is None


def test_batch_header_max_without_a_matching_record(open_log):
    log = open_log()
    buf = bytearray(build_batch([(None, b"v", [], BASE_TS + 3), (None, b"v", [], BASE_TS + 8)]))
    # A client that writes a max timestamp no record carries (Kafka would rewrite it on append).
    struct.pack_into(">q", buf, 35, BASE_TS + 50)
    struct.pack_into(">I", buf, 17, compute_crc(buf, 0, len(buf)))
    log.append_as_leader(buf, validate_batches(buf), 0, now_ms=BASE_TS)
    assert log.max_timestamp_offset() == (1, BASE_TS + 8)
