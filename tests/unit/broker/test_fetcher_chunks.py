"""A follower appends a fetch that spans the leader's segments in runs that each fit a segment."""

from pylog.broker.fetcher import segment_sized
from pylog.protocol import records


def _batches(n: int, value: bytes = b"v" * 100) -> bytearray:
    buf = bytearray()
    for i in range(n):
        buf += records.build_batch([(None, value, (), None)], base_offset=i)
    return buf


def test_runs_fit_the_segment_and_cover_every_batch_once():
    buf = _batches(5)
    headers = records.validate_batches(buf)
    one = len(buf) // 5
    runs = list(segment_sized(buf, headers, 2 * one + 10))
    assert [len(hs) for _, hs in runs] == [2, 2, 1]
    assert b"".join(bytes(c) for c, _ in runs) == bytes(buf)
    assert all(len(c) <= 2 * one + 10 for c, _ in runs)
    assert [h.base_offset for _, hs in runs for h in hs] == [0, 1, 2, 3, 4]


def test_a_fetch_within_the_segment_is_one_append():
    buf = _batches(3)
    headers = records.validate_batches(buf)
    runs = list(segment_sized(buf, headers, len(buf)))
    assert len(runs) == 1 and len(runs[0][1]) == 3


def test_a_batch_larger_than_the_segment_goes_alone():
    buf = _batches(2)
    headers = records.validate_batches(buf)
    runs = list(segment_sized(buf, headers, 10))
    assert [len(hs) for _, hs in runs] == [1, 1]


def test_each_run_s_headers_index_its_own_bytes():
    buf = _batches(5)
    headers = records.validate_batches(buf)
    one = len(buf) // 5
    for chunk, hs in segment_sized(buf, headers, 2 * one + 10):
        for h in hs:
            again = records.validate_batches(bytes(chunk[h.position:h.position + h.size]))
            assert [x.base_offset for x in again] == [h.base_offset]


def test_a_follower_log_appended_run_by_run_reads_every_offset_back(tmp_path):
    from pylog.log import Log, LogConfig

    buf = _batches(6)
    headers = records.validate_batches(buf)
    one = len(buf) // 6
    log = Log.open(str(tmp_path / "t-0"), LogConfig(segment_bytes=2 * one + 10, index_interval_bytes=1), 0)
    try:
        for chunk, hs in segment_sized(buf, headers, log.config.segment_bytes):
            log.append_as_follower(chunk, hs)
        assert len(log.segments) == 3
        for offset in range(6):
            data = b"".join(s.read() for s in log.read(offset, one))
            assert records.validate_batches(data)[0].base_offset == offset
    finally:
        log.close()
