"""Producer ids for InitProducerId, handed out from blocks reserved in ZooKeeper.

Each broker reserves 1000 ids at a time at /latest_producer_id_block (a conditional write, so no
two brokers ever own the same block) and hands them out from memory. A block is reserved only
when the first id is needed, and ids of a block a broker did not finish before it stopped are
never reused: Kafka's ZooKeeper-mode ProducerIdManager behaves the same way.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from pylog.zk.codecs import ProducerIdBlock

log = logging.getLogger("pylog.producer_ids")


class ProducerIdManager:
    """Hands out unique producer ids; `allocate_block(broker_id)` reserves the next block (blocking)."""

    def __init__(self, broker_id: int, allocate_block: Callable[[int], ProducerIdBlock], blocking: Callable[..., Any]):
        self.broker_id = broker_id
        self._allocate_block = allocate_block
        self._blocking = blocking  # runs a blocking call off the event loop
        self._next = 0
        self._block: ProducerIdBlock | None = None
        self._lock = asyncio.Lock()

    async def generate(self) -> int:
        """The next unused producer id (reserving a new block in ZooKeeper when this one is used up)."""
        async with self._lock:
            if self._block is None or self._next > self._block.block_end:
                self._block = await self._blocking(self._allocate_block, self.broker_id)
                self._next = self._block.block_start
                log.info("Broker %d reserved producer ids %d..%d", self.broker_id, self._block.block_start,
                         self._block.block_end)
            pid = self._next
            self._next += 1
            return pid
