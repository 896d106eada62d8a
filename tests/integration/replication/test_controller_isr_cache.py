"""A broker's failure clears it from every ISR in ZooKeeper, even one its leader had just added it back to.

The real controller runs in this process against the real ZooKeeper; the brokers are ZooKeeper
sessions with registrations (no processes), so the test can play the leader's part exactly: an
ISR written to the partition state znode whose change notification the controller has not read
yet (leaders batch those), then the broker's session closing.
"""

from __future__ import annotations

import asyncio

import pytest

from pylog.common.config import BrokerConfig
from pylog.controller.controller import Controller
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import BrokerRegistration, EndPoint, PartitionState, TopicAssignment, TopicPartition
from pylog.zk.testing import free_port
from support.aio import until

pytestmark = pytest.mark.integration


def _register(zk: ZkClient, bid: int) -> None:
    zk.register_broker(BrokerRegistration(bid, (EndPoint("PLAINTEXT", "127.0.0.1", free_port(), "PLAINTEXT"),)))


def test_failed_broker_is_removed_from_an_isr_the_controller_had_not_seen_it_rejoin(zk_connect, zk):
    async def main() -> tuple[int, ...]:
        sessions = {b: ZkClient(zk_connect, session_timeout_ms=10000).start() for b in (0, 1, 2)}
        controller = None
        try:
            sessions[0].create_top_level_paths()
            for b, s in sessions.items():
                _register(s, b)
            config = BrokerConfig.from_props({"broker.id": "0", "zookeeper.connect": zk_connect,
                                              "auto.leader.rebalance.enable": "false"})
            controller = Controller(0, sessions[0], config)
            await controller.start()
            await until(lambda: controller.is_active, 30, "broker 0 to be controller")
            zk.create_topic_assignment("t", TopicAssignment({0: (0, 1, 2)}, "AAAAAAAAAAAAAAAAAAAAAA"))
            tp = ("t", 0)
            await until(lambda: tp in controller.ctx.leaders, 30, "the partition to be created")
            st = controller.ctx.leaders[tp]
            assert (st.leader, st.isr) == (0, (0, 1, 2))
            # Leader 0 shrinks the ISR and says so; the controller reads the notification.
            path = paths.partition_state("t", 0)
            version = zk.set(path, PartitionState(0, st.leader_epoch, (0, 1), st.controller_epoch).encode(),
                             st.partition_epoch).version
            zk.propagate_isr_changes([TopicPartition("t", 0)])
            await until(lambda: controller.ctx.leaders[tp].isr == (0, 1), 30, "the controller to see the shrink")
            # Broker 2 catches up and the leader adds it back; its notification is not out yet.
            zk.set(path, PartitionState(0, st.leader_epoch, (0, 1, 2), st.controller_epoch).encode(), version)
            sessions.pop(2).close()  # broker 2 stops: its registration goes with its session
            await until(lambda: 2 not in controller.ctx.live, 30, "the controller to see broker 2 fail")
            await until(lambda: 2 not in PartitionState.decode(zk.get(path)[0], 0, path).isr, 30,
                         "broker 2 to leave the ISR in ZooKeeper")
            return PartitionState.decode(zk.get(path)[0], 0, path).isr
        finally:
            if controller is not None:
                await controller.stop()
            for s in sessions.values():
                s.close()

    assert asyncio.run(main()) == (0, 1)
