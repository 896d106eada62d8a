"""RecordBatch v2: validation, in-place offset assignment, decoding, building."""

import struct

import pytest
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from pylog.protocol.records import (
    BATCH_OVERHEAD,
    CorruptRecordError,
    RecordError,
    UnsupportedMagicError,
    assign_offsets,
    build_batch,
    iter_batches,
    parse_header,
    read_records,
    set_log_append_time,
    validate_batches,
)


def kafka_python_batch(values, compression=0, ts=1_690_000_000_000):
    """A batch exactly as kafka-python's producer builds it (base offset 0, epoch 0)."""
    b = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=False,
        producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 30,
    )
    for i, v in enumerate(values):
        b.append(i, timestamp=ts + i, key=None, value=v, headers=[])
    return bytes(b.build())


def test_kafka_python_batch_validates_and_parses():
    raw = kafka_python_batch([b"a", b"bb", b"ccc"])
    (h,) = validate_batches(raw)
    assert (h.base_offset, h.records_count, h.last_offset_delta, h.magic) == (0, 3, 2, 2)
    assert h.size == len(raw) and h.position == 0
    assert h.compression == 0 and not h.is_transactional and not h.is_control
    assert h.base_timestamp == 1_690_000_000_000 and h.max_timestamp == 1_690_000_000_002


@pytest.mark.parametrize("codec", [1, 2, 3, 4], ids=["gzip", "snappy", "lz4", "zstd"])
def test_compressed_batches_from_kafka_python_round_trip(codec):
    values = [b"value-%d" % i * 20 for i in range(50)]  # compressible, so kafka-python compresses
    raw = kafka_python_batch(values, compression=codec)
    (h,) = validate_batches(raw)
    assert h.compression == codec  # stored as-is, count from the header
    assert h.records_count == 50
    assert [r.value for r in read_records(raw)] == values


@pytest.mark.parametrize("codec", [0, 1, 2, 3, 4])
def test_build_batch_applies_codec_even_when_small(codec):
    raw = build_batch([(b"k", b"v", [("h", b"x")], 1000), (None, None, [], 1001)], compression=codec)
    (h,) = validate_batches(raw)
    assert h.compression == codec
    recs = read_records(raw)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in recs] == [
        (0, b"k", b"v", [("h", b"x")], 1000),
        (1, None, None, [], 1001),
    ]


def test_assign_offsets_keeps_crc_valid_for_a_real_client():
    buf = bytearray(kafka_python_batch([b"x"] * 3) + kafka_python_batch([b"y"] * 2))
    headers = validate_batches(buf)
    last = assign_offsets(buf, headers, 1000, 7)
    assert last == 1004
    assert [(h.base_offset, h.partition_leader_epoch) for h in headers] == [(1000, 7), (1003, 7)]
    # kafka-python's consumer-side reader sees the stamped offsets and a valid CRC
    records = MemoryRecords(bytes(buf))
    seen = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        assert batch.leader_epoch == 7
        seen.extend(r.offset for r in batch)
    assert seen == [1000, 1001, 1002, 1003, 1004]
    assert validate_batches(buf)[1].base_offset == 1003  # and we still accept it


def test_crc_corruption_is_detected():
    buf = bytearray(kafka_python_batch([b"hello", b"world"]))
    buf[-1] ^= 0x01
    with pytest.raises(CorruptRecordError, match=r"Record is corrupt \(stored crc = \d+, computed crc = \d+\)") as e:
        validate_batches(buf)
    assert e.value.error_code == 2


def test_crc_covers_attributes_but_not_offset_or_epoch():
    buf = bytearray(kafka_python_batch([b"x"]))
    struct.pack_into(">q", buf, 0, 12345)  # base offset: outside the CRC
    struct.pack_into(">i", buf, 12, 99)  # leader epoch: outside the CRC
    validate_batches(buf)
    buf[22] ^= 0x04  # attributes: inside
    with pytest.raises(CorruptRecordError):
        validate_batches(buf)


@pytest.mark.parametrize("magic", [0, 1])
def test_old_magic_is_rejected_with_code_43(magic):
    buf = bytearray(kafka_python_batch([b"x"]))
    buf[16] = magic
    with pytest.raises(UnsupportedMagicError) as e:
        validate_batches(buf)
    assert e.value.error_code == 43
    assert isinstance(e.value, RecordError)


def test_truncated_and_undersized_batches_are_corrupt():
    raw = kafka_python_batch([b"abc"])
    with pytest.raises(CorruptRecordError, match="Truncated"):
        validate_batches(raw[:-1])
    with pytest.raises(CorruptRecordError, match="Truncated"):
        validate_batches(raw + raw[:5])
    small = bytearray(raw)
    struct.pack_into(">i", small, 8, 10)
    with pytest.raises(CorruptRecordError, match="minimum record overhead"):
        validate_batches(small)


def test_inconsistent_count_and_offset_delta_is_corrupt():
    buf = bytearray(kafka_python_batch([b"a", b"b"]))
    struct.pack_into(">i", buf, 57, 5)  # records count (CRC-covered): fix the CRC to isolate the check
    from pylog.protocol.records import compute_crc
    struct.pack_into(">I", buf, 17, compute_crc(buf, 0, len(buf)))
    with pytest.raises(CorruptRecordError, match="Inconsistent batch offset range"):
        validate_batches(buf)
    assert validate_batches(buf, check_offsets=False)[0].records_count == 5


def test_empty_buffer_gives_no_batches():
    assert validate_batches(b"") == []


def test_iter_batches_stops_at_torn_tail():
    one = kafka_python_batch([b"a"])
    two = kafka_python_batch([b"bb", b"cc"])
    data = one + two + two[:30]
    sizes = [h.size for h in iter_batches(data)]
    assert sizes == [len(one), len(two)]
    assert [h.position for h in iter_batches(data)] == [0, len(one)]


def test_parse_header_bounds():
    raw = kafka_python_batch([b"a"])
    assert parse_header(raw).records_count == 1
    with pytest.raises(CorruptRecordError):
        parse_header(raw[: BATCH_OVERHEAD - 1])


def test_header_properties():
    raw = build_batch([(None, b"x", [], 5)], base_offset=10, leader_epoch=3, compression=4,
                      producer_id=77, producer_epoch=1, base_sequence=2**31 - 1,
                      is_transactional=True, timestamp_type=1)
    (h,) = validate_batches(raw)
    assert (h.base_offset, h.last_offset, h.partition_leader_epoch) == (10, 10, 3)
    assert h.compression_name == "zstd" and h.is_transactional and h.timestamp_type == 1
    assert h.timestamp_type_name == "LogAppendTime"
    assert h.last_sequence == 2**31 - 1
    two = build_batch([(None, b"x", [], 5)] * 3, base_sequence=2**31 - 2)
    assert parse_header(two).last_sequence == 0  # sequences wrap like Kafka's


def test_set_log_append_time_rewrites_crc():
    buf = bytearray(kafka_python_batch([b"a", b"b"]))
    (h,) = validate_batches(buf)
    set_log_append_time(buf, h, 1_700_000_000_000)
    (h2,) = validate_batches(buf)
    assert h2.timestamp_type == 1 and h2.max_timestamp == 1_700_000_000_000
    assert DefaultRecordBatch(bytes(buf)).validate_crc()
    assert [r.timestamp for r in read_records(buf)] == [1_700_000_000_000] * 2


def test_read_records_sequences():
    raw = build_batch([(None, b"a", [], 1), (None, b"b", [], 2)], producer_id=5, producer_epoch=0, base_sequence=10)
    assert [r.sequence for r in read_records(raw)] == [10, 11]


def test_read_records_reports_garbage_as_corrupt():
    raw = bytearray(build_batch([(b"key", b"value", [], 1)]))
    raw[BATCH_OVERHEAD] = 0x7F  # the first record's length varint
    with pytest.raises(CorruptRecordError):
        read_records(raw)


# --- batches produced by librdkafka (confluent-kafka), fetched raw from its in-process mock broker ---

def _librdkafka_batches(compression: str) -> bytes:
    """Produce with confluent-kafka to librdkafka's mock cluster and fetch the stored bytes raw."""
    import socket

    from confluent_kafka import Producer

    from pylog.protocol import api
    from pylog.protocol.codec import decode_response, encode_request

    producer = Producer({
        "test.mock.num.brokers": 1, "compression.type": compression, "linger.ms": 5,
        "enable.idempotence": True, "log_level": 3,
    })
    for i in range(5):
        producer.produce("t", partition=0, key=b"k%d" % i, value=b"value-%d" % i * 10,
                         headers=[("h", b"1")], timestamp=1_690_000_000_000 + i)
    assert producer.flush(10) == 0
    broker = next(iter(producer.list_topics(timeout=10).brokers.values()))
    fetch = api.request_class(1)[4]
    req = fetch(replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=1 << 20, isolation_level=0, topics=[
        fetch.FetchTopic(topic="t", partitions=[
            fetch.FetchTopic.FetchPartition(partition=0, fetch_offset=0, partition_max_bytes=1 << 20)])])
    with socket.create_connection((broker.host, broker.port), timeout=10) as s:
        s.sendall(encode_request(req, 4, 1, "pylog-test"))
        data = b""
        while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
            chunk = s.recv(65536)
            assert chunk, "mock broker closed the connection"
            data += chunk
    _, resp = decode_response(1, 4, data[4:])
    part = resp.responses[0].partitions[0]
    assert part.error_code == 0
    return bytes(part.records)


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_librdkafka_produced_batches(compression):
    raw = bytearray(_librdkafka_batches(compression))
    headers = validate_batches(raw)
    assert sum(h.records_count for h in headers) == 5
    assert headers[0].producer_id >= 0 and headers[0].base_sequence == 0  # idempotent producer
    assert headers[0].compression_name == compression
    assign_offsets(raw, headers, 500, 4)
    records = [r for h in headers for r in read_records(raw[h.position:h.position + h.size])]
    assert [(r.offset, r.key, r.sequence) for r in records] == [(500 + i, b"k%d" % i, i) for i in range(5)]
    assert records[2].value == b"value-2" * 10 and records[2].headers == [("h", b"1")]
    assert records[4].timestamp == 1_690_000_000_004
    batch = DefaultRecordBatch(bytes(raw[: headers[0].size]))
    assert batch.validate_crc() and batch.base_offset == 500 and batch.leader_epoch == 4


def test_keyed_batch_reads_back_as_built_and_its_header_is_the_parsed_one():
    from pylog.protocol import records
    from pylog.protocol.batch_rewrite import build_keyed_batch
    recs = [(b"k1", b"v" * 200), (b"k2", None), (b"k" * 300, b"")]
    for pid, epoch, txn in ((-1, -1, False), (4000, 3, True)):
        buf, h = build_keyed_batch(recs, 1_700_000_000_123, pid, epoch, txn)
        assert records.validate_batches(buf) == [h]
        assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in records.read_records(buf)] == \
            [(i, 1_700_000_000_123, k, v, []) for i, (k, v) in enumerate(recs)]
        assert (h.producer_id, h.producer_epoch, h.is_transactional, h.base_sequence) == (pid, epoch, txn, -1)
        same = records.build_batch([(k, v, (), 1_700_000_000_123) for k, v in recs], producer_id=pid,
                                   producer_epoch=epoch, is_transactional=txn)
        assert bytes(buf) == same  # byte for byte what the general builder writes
