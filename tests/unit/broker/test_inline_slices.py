"""Fetch responses: small file slices are read and sent with the bytes around them; large ones stay sendfile."""

import os

import pytest

from pylog.broker import server
from pylog.log.results import FileSlice


class _Broker:
    def __init__(self) -> None:
        self.failed: list[str] = []

    def storage_failed(self, path: str, exc: Exception) -> None:
        self.failed.append(path)


@pytest.fixture
def srv():
    return server.SocketServer(_Broker(), "127.0.0.1", 0, 1 << 20)


def _segment(tmp_path, name: str, data: bytes) -> FileSlice:
    path = tmp_path / name
    path.write_bytes(data)
    return FileSlice(str(path), 0, len(data), os.stat(path).st_ino)


def test_small_slices_join_the_bytes_around_them_and_large_ones_stay_slices(srv, tmp_path):
    small = _segment(tmp_path, "a.log", b"0123456789")
    big_data = b"x" * (server._INLINE_SLICE_BYTES + 1)
    big = _segment(tmp_path, "b.log", big_data)
    part = FileSlice(small.path, 2, 3, small.inode)
    out = srv.inline_small_slices([b"head", small, b"mid", part, big, b"tail"])
    assert out == [b"head0123456789mid234", big, b"tail"]


def test_a_response_without_small_slices_is_left_as_it_is(srv, tmp_path):
    big = _segment(tmp_path, "b.log", b"x" * (server._INLINE_SLICE_BYTES + 1))
    parts = [b"head", big, b"tail"]
    assert srv.inline_small_slices(parts) is parts


def test_a_swapped_or_shrunk_segment_drops_the_connection_instead_of_a_wrong_frame(srv, tmp_path):
    s = _segment(tmp_path, "a.log", b"0123456789")
    swapped = FileSlice(s.path, 0, 10, s.inode + 1)  # planned on another file than the one now at the path
    with pytest.raises(ConnectionError, match="replaced by the log cleaner"):
        srv.inline_small_slices([b"h", swapped])
    shrunk = FileSlice(s.path, 5, 10, s.inode)
    with pytest.raises(ConnectionError, match="shrank"):
        srv.inline_small_slices([b"h", shrunk])
    gone = FileSlice(str(tmp_path / "gone.log"), 0, 10, 0)
    with pytest.raises(ConnectionError, match="vanished"):
        srv.inline_small_slices([gone])
    assert srv.broker.failed == []
