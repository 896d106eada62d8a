"""Producer id blocks in real ZooKeeper: Kafka's JSON, and no two brokers ever get the same block."""

from __future__ import annotations

import json
import threading

import pytest

from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import ProducerIdBlock

pytestmark = pytest.mark.integration


def test_first_blocks_and_kafka_json(zk: ZkClient) -> None:
    zk.create_top_level_paths()  # /latest_producer_id_block exists with empty data, as Kafka creates it
    first = zk.allocate_producer_id_block(2)
    assert (first.block_start, first.block_end, first.broker) == (0, 999, 2)
    second = zk.allocate_producer_id_block(5)
    assert (second.block_start, second.block_end) == (1000, 1999)
    data, stat = zk.get(paths.latest_producer_id_block())
    assert data == b'{"version":1,"broker":5,"block_start":"1000","block_end":"1999"}'
    assert stat.version == 2


def test_block_written_by_kafka_is_continued(zk: ZkClient) -> None:
    zk.create(paths.latest_producer_id_block(), json.dumps(
        {"version": 1, "broker": 0, "block_start": "4000", "block_end": "4999"}).encode())
    assert zk.allocate_producer_id_block(1).block_start == 5000


def test_racing_brokers_never_share_a_block(zk_connect: str) -> None:
    clients = [ZkClient(zk_connect, session_timeout_ms=10000).start() for _ in range(4)]
    got: list[ProducerIdBlock] = []
    errors: list[BaseException] = []
    lock = threading.Lock()

    def grab(zk: ZkClient, broker: int) -> None:
        try:
            for _ in range(10):
                block = zk.allocate_producer_id_block(broker)
                with lock:
                    got.append(block)
        except BaseException as exc:  # surfaced below: a thread's failure must fail the test
            errors.append(exc)

    try:
        clients[0].create_top_level_paths()
        threads = [threading.Thread(target=grab, args=(zk, i)) for i, zk in enumerate(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors and not any(t.is_alive() for t in threads)
    finally:
        for zk in clients:
            zk.close()
    starts = sorted(b.block_start for b in got)
    assert starts == [i * 1000 for i in range(40)]


def test_malformed_block_is_a_clear_error(zk: ZkClient) -> None:
    zk.create(paths.latest_producer_id_block(), b'{"version":1,"broker":0}')
    with pytest.raises(ValueError, match="latest_producer_id_block.*block_start"):
        zk.allocate_producer_id_block(0)
