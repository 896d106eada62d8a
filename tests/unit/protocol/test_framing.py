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
    assert isinstance(frames[0], memoryview) and not frames[0].readonly and bytes(frames[0]) == body


def test_a_recycled_large_frame_buffer_is_reused_only_when_nothing_holds_it():
    dec = FrameDecoder()
    (first,) = dec.feed(framed(b"a" * 100_000))
    buf_id = id(first.obj)  # (holding the buffer itself here would rightly stop its reuse)
    assert dec.recycle(first)
    (second,) = dec.feed(framed(b"b" * 90_000))
    assert id(second.obj) == buf_id and bytes(second) == b"b" * 90_000  # no new allocation
    kept = second[10:20]  # e.g. a record set a handler still holds
    assert not dec.recycle(second)
    (third,) = dec.feed(framed(b"c" * 100_000))
    assert id(third.obj) != buf_id and bytes(kept) == b"b" * 10  # the kept view was not overwritten
    (small,) = dec.feed(framed(b"tiny"))
    assert not dec.recycle(small)  # scratch-cut frames are plain bytearrays, never recycled
    (huge,) = dec.feed(framed(b"h" * (9 * 1024 * 1024)))
    assert not dec.recycle(huge)  # nor is the buffer of a rare huge request kept


def test_oversize_and_negative_sizes_are_refused():
    with pytest.raises(FrameTooLarge):
        FrameDecoder(max_frame_size=1000).feed(struct.pack(">i", 1001))
    with pytest.raises(FrameTooLarge):
        FrameDecoder().feed(struct.pack(">i", -5))
