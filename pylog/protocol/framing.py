"""Kafka's size-prefixed framing, sans I/O, shaped for asyncio's BufferedProtocol.

Small frames are cut out of one scratch buffer (many per recv) as bytearrays; a frame larger
than what is left in the scratch gets a buffer of its own that the transport fills directly, so a
1 MB produce request is received without intermediate copies and handed on as a writable
memoryview (the broker rewrites batch offsets in it before writing it to the log).

Large-frame buffers are recycled: `bytearray(n)` zero-fills, which cost ~90 us per MB on the
benchmark machine -- a third of the broker's Python time per 1 MB produce request. The owner hands
a frame back with `recycle(frame)` once done with it; its buffer becomes the decoder's one spare,
reused for the next large frame it can hold, but only if no view of it survives (checked with the
buffer's reference count), so a handler that kept part of a frame never sees it overwritten.
"""

from __future__ import annotations

import struct
import sys

_SCRATCH = 64 * 1024
_ROUND = 64 * 1024  # large-frame buffers are rounded up to this, plus 1/8 headroom, to be reusable
_MAX_SPARE = 8 * 1024 * 1024  # a rare huge request's buffer is not kept for the connection's lifetime
_SIZE = struct.Struct(">i")


class FrameTooLarge(Exception):
    """A peer announced a frame bigger than the configured maximum (socket.request.max.bytes)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


class FrameDecoder:
    """Turns a byte stream into complete frames (without their 4-byte size prefix)."""

    __slots__ = ("max_frame_size", "_scratch", "_start", "_end", "_frame", "_filled", "_spare")

    def __init__(self, max_frame_size: int = 100 * 1024 * 1024) -> None:
        self.max_frame_size = max_frame_size
        self._scratch = bytearray(_SCRATCH)
        self._start = 0  # first unparsed byte in scratch
        self._end = 0  # end of received bytes in scratch
        self._frame: memoryview | None = None  # a large frame being filled in place
        self._filled = 0
        self._spare: bytearray | None = None  # a recycled large-frame buffer

    def get_buffer(self) -> memoryview:
        """Where the transport should write the next received bytes."""
        if self._frame is not None:
            return self._frame[self._filled:]
        if self._end == len(self._scratch):
            self._compact()
        return memoryview(self._scratch)[self._end:]

    def buffer_updated(self, nbytes: int) -> list[bytearray | memoryview]:
        """Account for `nbytes` written into the last buffer; return the frames now complete."""
        frames: list[bytearray | memoryview] = []
        if self._frame is not None:
            self._filled += nbytes
            if self._filled < len(self._frame):
                return frames
            frames.append(self._frame)
            self._frame = None
            return frames
        self._end += nbytes
        self._parse(frames)
        return frames

    def feed(self, data: bytes) -> list[bytearray | memoryview]:
        """Convenience for callers holding bytes (tests, blocking clients)."""
        frames: list[bytearray | memoryview] = []
        view = memoryview(data)
        while view:
            buf = self.get_buffer()
            n = min(len(buf), len(view))
            buf[:n] = view[:n]
            view = view[n:]
            frames.extend(self.buffer_updated(n))
        return frames

    def recycle(self, frame: bytearray | memoryview) -> bool:
        """Give a frame back once its request is done; True if its buffer will be reused.

        Only large frames (memoryviews over a buffer of their own) are kept. The frame must not
        be used after this call.
        """
        if not isinstance(frame, memoryview):
            return False
        buf = frame.obj
        try:
            frame.release()
        except BufferError:  # something still holds an export of the frame itself
            return False
        # Our `buf` and getrefcount's argument are the only references unless a slice of the
        # frame is still alive somewhere (each keeps the buffer alive through its managed buffer).
        if not isinstance(buf, bytearray) or len(buf) > _MAX_SPARE or sys.getrefcount(buf) > 2:
            return False
        if self._spare is None or len(buf) >= len(self._spare):
            self._spare = buf
        return True

    def _large_frame(self, size: int) -> memoryview:
        spare = self._spare
        if spare is not None and len(spare) >= size:
            self._spare = None
        else:
            spare = bytearray(-(-(size + size // 8) // _ROUND) * _ROUND)
        return memoryview(spare)[:size]

    def _parse(self, frames: list[bytearray | memoryview]) -> None:
        scratch = self._scratch
        while self._end - self._start >= 4:
            size = _SIZE.unpack_from(scratch, self._start)[0]
            if size < 0 or size > self.max_frame_size:
                raise FrameTooLarge(size, self.max_frame_size)
            have = self._end - self._start - 4
            body = self._start + 4
            if have >= size:
                frames.append(scratch[body:body + size])  # a slice of a bytearray is a bytearray copy
                self._start = body + size
                continue
            if size > len(scratch) - 4:
                # Too big for the scratch buffer: give it its own and let the transport fill it.
                frame = self._large_frame(size)
                frame[:have] = scratch[body:self._end]
                self._frame, self._filled = frame, have
                self._start = self._end = 0
                return
            break
        if self._start == self._end:
            self._start = self._end = 0

    def _compact(self) -> None:
        pending = self._end - self._start
        self._scratch[:pending] = self._scratch[self._start:self._end]
        self._start, self._end = 0, pending
