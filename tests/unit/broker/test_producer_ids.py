"""ProducerIdManager: ids handed out from reserved blocks, a new block only when one is used up."""

from __future__ import annotations

import asyncio

import pytest

from pylog.broker.producer_ids import ProducerIdManager
from pylog.zk.codecs import ProducerIdBlock


def test_ids_are_unique_across_blocks_even_when_requested_concurrently():
    reserved: list[ProducerIdBlock] = []

    def allocate(broker_id: int) -> ProducerIdBlock:  # stands in for the ZooKeeper write
        block = ProducerIdBlock.after(reserved[-1] if reserved else None, broker_id)
        reserved.append(block)
        return block

    async def blocking(fn, *args):
        await asyncio.sleep(0)  # let the other requests pile up behind the reservation
        return fn(*args)

    async def main():
        mgr = ProducerIdManager(3, allocate, blocking)
        return await asyncio.gather(*(mgr.generate() for _ in range(2500)))

    ids = asyncio.run(main())
    assert sorted(ids) == list(range(2500))
    assert [(b.broker, b.block_start, b.block_end) for b in reserved] == [(3, 0, 999), (3, 1000, 1999),
                                                                          (3, 2000, 2999)]


def test_exhausted_id_space_is_refused():
    last = ProducerIdBlock(0, 2**63 - 1000, 2**63 - 1)
    with pytest.raises(ValueError, match="Exhausted all producer ids"):
        ProducerIdBlock.after(last, 1)
