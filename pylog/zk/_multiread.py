"""ZooKeeper's multiRead (opcode 22, ZooKeeper >= 3.6): many getData/getChildren in one request.

kazoo has no multiRead, but its request queue accepts any object with `type`, `serialize()` and
`deserialize()`, so this is a request class in kazoo's style sent through KazooClient._call (the same
internal path kazoo's own *_async methods use). Why: pipelining 10,000 get_async calls costs ~1 s of
Python work per request in kazoo's connection thread; batches of 1,000 reads take ~25 ms in total.
Unlike multi(), each read succeeds or fails on its own (a missing znode is a NoNodeError entry).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from kazoo.exceptions import EXCEPTIONS
from kazoo.protocol.paths import _prefix_root
from kazoo.protocol.serialization import (MultiHeader, int_struct, multiheader_struct, read_buffer,
                                          read_string, stat_struct, write_string)
from kazoo.protocol.states import ZnodeStat

GET_DATA = 4  # ZooDefs.OpCode.getData
GET_CHILDREN = 8  # ZooDefs.OpCode.getChildren
_ERROR = -1


class MultiRead(NamedTuple):
    """A multiRead request of one kind of read (getData or getChildren) over absolute paths."""

    op: int
    paths: tuple[str, ...]

    type = 22  # ZooDefs.OpCode.multiRead
    watcher = None  # kazoo checks this attribute to register watches; multiRead sets none

    def serialize(self) -> bytearray:
        """MultiOperationRecord: (header, path, watch=false) per op, then the done header."""
        b = bytearray()
        for path in self.paths:
            b.extend(MultiHeader(self.op, False, -1).serialize())
            b.extend(write_string(path))
            b.append(0)
        b.extend(MultiHeader(-1, True, -1).serialize())
        return b

    @classmethod
    def deserialize(cls, buf: bytes, offset: int) -> list[Any]:
        """Per op: (data, ZnodeStat) for getData, [children] for getChildren, or a kazoo exception."""
        out: list[Any] = []
        while True:
            op, done, _ = multiheader_struct.unpack_from(buf, offset)
            offset += multiheader_struct.size
            if done:
                return out
            if op == _ERROR:
                code = int_struct.unpack_from(buf, offset)[0]
                offset += int_struct.size
                out.append(EXCEPTIONS[code]())
            elif op == GET_DATA:
                data, offset = read_buffer(buf, offset)
                out.append((data, ZnodeStat._make(stat_struct.unpack_from(buf, offset))))
                offset += stat_struct.size
            elif op == GET_CHILDREN:
                count = int_struct.unpack_from(buf, offset)[0]
                offset += int_struct.size
                children = []
                for _ in range(max(count, 0)):
                    child, offset = read_string(buf, offset)
                    children.append(child)
                out.append(children)
            else:
                raise ValueError(f"Unexpected op {op} in a multiRead response")


def start_multi_read(kazoo: Any, op: int, paths: list[str]) -> Any:
    """Queue a multiRead on a kazoo client (paths relative to its chroot); returns the IAsyncResult."""
    async_result = kazoo.handler.async_result()
    absolute = tuple(_prefix_root(kazoo.chroot, p) if kazoo.chroot else p for p in paths)
    kazoo._call(MultiRead(op, absolute), async_result)
    return async_result
