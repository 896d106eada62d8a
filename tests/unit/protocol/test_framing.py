"""Framing: frames come out whole however the stream is cut, and oversize frames are refused."""

import struct

import pytest

from pylog.protocol.framing import FrameDecoder, FrameTooLarge


def framed(body: bytes) -> bytes:
    return struct.pack(">i", len(body)) + body


@pytest.mark.parametrize("chunk", [1, 3, 4, 7, 100, 70_000])
def test_frames_survive_any_chunking(chunk):
    bodies = [b"a" * 10, b"", b"b" * 70_000, b"c" * 5, bytes(range(256)) * 600]
    stream = b"".join(framed(b) for b in bodies)
    dec = FrameDecoder()
    out = []
    for i in range(0, len(stream), chunk):
        out.extend(dec.feed(stream[i:i + chunk]))
    assert [bytes(f) for f in out] == bodies


def test_large_frame_is_filled_in_place_through_get_buffer():
    body = b"x" * 200_000
    stream = framed(body) + framed(b"tail")
    dec = FrameDecoder()
    frames = []
    pos = 0
    while pos < len(stream):
        buf = dec.get_buffer()
        n = min(len(buf), len(stream) - pos, 50_000)
        buf[:n] = stream[pos:pos + n]
        pos += n
        frames.extend(dec.buffer_updated(n))
    assert [len(f) for f in frames] == [200_000, 4]
    assert isinstance(frames[0], bytearray)


def test_oversize_and_negative_sizes_are_refused():
    with pytest.raises(FrameTooLarge):
        FrameDecoder(max_frame_size=1000).feed(struct.pack(">i", 1001))
    with pytest.raises(FrameTooLarge):
        FrameDecoder().feed(struct.pack(">i", -5))
