"""Read cluster state the way an operator would: Metadata through a broker, znodes through ZooKeeper."""

from __future__ import annotations

from dataclasses import dataclass

from pylog.client.sync import KafkaClient
from pylog.zk.client import ZkClient


@dataclass(frozen=True)
class PartitionView:
    """One partition as Metadata reports it."""

    leader: int
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


def partitions(bootstrap: str, topic: str) -> dict[int, PartitionView]:
    """Leader, epoch, replicas and ISR of each partition of a topic."""
    with KafkaClient(bootstrap, timeout=10) as k:
        md = k.refresh_metadata([topic])
    t = md.topics[0]
    if t.error_code:
        raise AssertionError(f"metadata for {topic}: error {t.error_code}")
    return {p.partition_index: PartitionView(p.leader_id, p.leader_epoch, tuple(p.replica_nodes), tuple(p.isr_nodes))
            for p in t.partitions}


def controller(zk_connect: str) -> tuple[int, int]:
    """(controller id, controller epoch) from ZooKeeper."""
    zk = ZkClient(zk_connect, session_timeout_ms=10000).start()
    try:
        ctl = zk.get_controller_id()
        epoch = zk.get_controller_epoch()
        return (ctl if ctl is not None else -1, epoch.epoch if epoch else 0)
    finally:
        zk.close()
