"""Kafka's size-prefixed framing, sans I/O, shaped for asyncio's BufferedProtocol.

Small frames are cut out of one scratch buffer (many per recv); a frame larger than what is
left in the scratch gets a buffer of its own that the transport fills directly, so a 1 MB
produce request is received without intermediate copies and handed on as a mutable bytearray
(the broker rewrites batch offsets in it before writing it to the log).
"""

from __future__ import annotations

_SCRATCH = 64 * 1024


class FrameTooLarge(Exception):
    """A peer announced a frame bigger than the configured maximum (socket.request.max.bytes)."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")
        self.size = size
        self.limit = limit


class FrameDecoder:
    """Turns a byte stream into complete frames (without their 4-byte size prefix)."""

    __slots__ = ("max_frame_size", "_scratch", "_start", "_end", "_frame", "_filled")

    def __init__(self, max_frame_size: int = 100 * 1024 * 1024) -> None:
        self.max_frame_size = max_frame_size
        self._scratch = bytearray(_SCRATCH)
        self._start = 0  # first unparsed byte in scratch
        self._end = 0  # end of received bytes in scratch
        self._frame: bytearray | None = None  # a large frame being filled in place
        self._filled = 0

    def get_buffer(self) -> memoryview:
        """Where the transport should write the next received bytes."""
        if self._frame is not None:
            return memoryview(self._frame)[self._filled:]
        if self._end == len(self._scratch):
            self._compact()
        return memoryview(self._scratch)[self._end:]

    def buffer_updated(self, nbytes: int) -> list[bytearray]:
        """Account for `nbytes` written into the last buffer; return the frames now complete."""
        frames: list[bytearray] = []
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

    def feed(self, data: bytes) -> list[bytearray]:
        """Convenience for callers holding bytes (tests, blocking clients)."""
        frames: list[bytearray] = []
        view = memoryview(data)
        while view:
            buf = self.get_buffer()
            n = min(len(buf), len(view))
            buf[:n] = view[:n]
            view = view[n:]
            frames.extend(self.buffer_updated(n))
        return frames

    def _parse(self, frames: list[bytearray]) -> None:
        scratch = self._scratch
        while self._end - self._start >= 4:
            size = int.from_bytes(scratch[self._start:self._start + 4], "big", signed=True)
            if size < 0 or size > self.max_frame_size:
                raise FrameTooLarge(size, self.max_frame_size)
            have = self._end - self._start - 4
            body = self._start + 4
            if have >= size:
                frames.append(bytearray(scratch[body:body + size]))
                self._start = body + size
                continue
            if size > len(scratch) - 4:
                # Too big for the scratch buffer: give it its own and let the transport fill it.
                frame = bytearray(size)
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
