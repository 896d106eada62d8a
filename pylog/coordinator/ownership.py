"""Which partitions of an internal topic a coordinator serves: leadership -> load -> serve -> unload.

Both coordinators (groups over `__consumer_offsets`, transactions over `__transaction_state`) own
their ids through this, and both behave as Kafka does: ownership is checked per request against
the broker's current leadership of the id's partition. Not the leader: NOT_COORDINATOR (and the
partition's state is forgotten). A leader epoch newer than the one loaded: the load starts in the
background (one per partition and epoch; a newer epoch cancels an older load) and the request gets
COORDINATOR_LOAD_IN_PROGRESS, which every client retries, until the state is in place. So a missed
leadership callback can't leave stale state serving requests.

The coordinator supplies `read` (replay the partition, touching no state of its own), `install`
(put the replayed state in place) and `drop` (forget the partition's state).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import Awaitable, Callable, Generic, TypeVar

from pylog.common.errors import ErrorCode

log = logging.getLogger("pylog.coordinator")
T = TypeVar("T")
_INT_MIN = -(1 << 31)


def java_string_hash(s: str) -> int:
    """Java's String.hashCode: h = 31*h + c over UTF-16 code units, wrapped to a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def kafka_abs(n: int) -> int:
    """Kafka's Utils.abs: Math.abs, except Integer.MIN_VALUE (whose Math.abs is negative) gives 0."""
    return 0 if n == _INT_MIN else abs(n)


# Every coordinator request asks this, most often for the same few ids: a synchronous committer hashed
# its group id twice per commit, a transactional producer its id on every request.
@functools.lru_cache(maxsize=65536)
def partition_for(key: str, num_partitions: int) -> int:
    """The coordinator partition of a group id or transactional id, as Kafka computes both
    (GroupMetadataManager.partitionFor, TransactionStateManager.partitionFor): abs(hashCode) % partitions."""
    return kafka_abs(java_string_hash(key)) % num_partitions


class Ownership(Generic[T]):
    """The partitions of one internal topic that this broker leads, loads and serves."""

    def __init__(self, topic: str, leader_epoch: Callable[[int], int | None], read: Callable[[int], Awaitable[T]],
                 install: Callable[[int, int, T], None], drop: Callable[[int], None]) -> None:
        self.topic = topic
        self._leader_epoch, self._read, self._install, self._drop = leader_epoch, read, install, drop
        self.loaded: dict[int, int] = {}  # partition -> leader epoch its state was loaded at
        self._loading: dict[int, tuple[int, asyncio.Task]] = {}
        self._tasks: set[asyncio.Task] = set()

    def check(self, p: int) -> ErrorCode:
        """NONE when this broker leads partition `p` and has loaded it; else the error for the client."""
        epoch = self._leader_epoch(p)
        if epoch is None:
            if p in self.loaded or p in self._loading:
                self.unload(p)
            return ErrorCode.NOT_COORDINATOR
        if self.loaded.get(p) == epoch:
            return ErrorCode.NONE
        self._start(p, epoch)
        return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS

    def epoch(self, p: int) -> int | None:
        """The epoch `p` was loaded at if this broker still leads it at that epoch (the coordinator epoch)."""
        epoch = self.loaded.get(p)
        return epoch if epoch is not None and self._leader_epoch(p) == epoch else None

    def owned(self) -> list[int]:
        """Partitions loaded and still led here."""
        return [p for p in list(self.loaded) if self.check(p) == ErrorCode.NONE]

    def loading(self, p: int | None = None) -> bool:
        """Whether partition `p` (any partition, when None) is being loaded."""
        return bool(self._loading) if p is None else p in self._loading

    async def wait(self, p: int) -> None:
        """Until partition `p`'s load under way (if any) has ended (for the broker's callbacks and tests)."""
        loading = self._loading.get(p)
        if loading is not None:
            await asyncio.wait((loading[1],))

    def _start(self, p: int, epoch: int) -> None:
        current = self._loading.get(p)
        if current is not None and current[0] == epoch:
            return
        self.unload(p)
        task = asyncio.get_running_loop().create_task(self._load(p, epoch))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self._loading[p] = (epoch, task)

    async def _load(self, p: int, epoch: int) -> None:
        t0 = time.monotonic()
        try:
            state = await self._read(p)
        except Exception:
            log.exception("Loading %s-%d failed; the next request retries", self.topic, p)
            if self._loading.get(p, (None,))[0] == epoch:
                del self._loading[p]
            return
        if self._loading.get(p, (None,))[0] != epoch or self._leader_epoch(p) != epoch:
            return  # leadership moved while we read
        del self._loading[p]
        self.loaded[p] = epoch
        self._install(p, epoch, state)
        log.info("Loaded %s-%d at epoch %d in %.0f ms", self.topic, p, epoch, (time.monotonic() - t0) * 1000)

    def unload(self, p: int) -> None:
        """Forget partition `p` (another broker serves it now): a load under way stops, its state goes."""
        was_loaded = self.loaded.pop(p, None) is not None
        loading = self._loading.pop(p, None)
        if loading is not None:
            loading[1].cancel()
        self._drop(p)
        if was_loaded:
            log.info("Unloaded %s-%d", self.topic, p)
