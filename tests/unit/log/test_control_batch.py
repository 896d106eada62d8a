"""COMMIT/ABORT markers in Kafka's control-batch format."""

import struct

import pytest

from pylog.log.control import ControlRecordError, ControlType, Marker, build_marker, control_type, read_marker
from pylog.protocol.records import build_batch, parse_header, read_records


@pytest.mark.parametrize("kind", [ControlType.COMMIT, ControlType.ABORT])
def test_marker_round_trip_and_attributes(kind):
    m = Marker(producer_id=4242, producer_epoch=3, control_type=kind, coordinator_epoch=17)
    batch = build_marker(m, timestamp_ms=1700000000000, base_offset=55)
    h = parse_header(batch)
    assert h.is_control and h.is_transactional and h.compression == 0 and h.timestamp_type == 0
    assert (h.producer_id, h.producer_epoch, h.base_sequence, h.last_offset_delta) == (4242, 3, -1, 0)
    (record,) = read_records(batch)
    assert record.key == struct.pack(">hh", 0, int(kind))
    assert record.value == struct.pack(">hi", 0, 17)
    assert read_marker(h, batch) == m


def test_other_control_types_are_not_markers():
    batch = build_batch([(struct.pack(">hh", 0, 3), b"x", (), 0)], producer_id=1, producer_epoch=0,
                        is_transactional=False, is_control=True)
    assert read_marker(parse_header(batch), batch) is None


def test_bad_control_records():
    with pytest.raises(ControlRecordError, match="shorter than 4"):
        control_type(b"\x00")
    data = build_batch([(b"k", b"v", (), 0)])
    with pytest.raises(ControlRecordError, match="not a control batch"):
        read_marker(parse_header(data), data)
    short = build_batch([(struct.pack(">hh", 0, 1), b"\x00", (), 0)], is_control=True)
    with pytest.raises(ControlRecordError, match="value shorter than 6"):
        read_marker(parse_header(short), short)
