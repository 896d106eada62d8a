"""A controller whose ZooKeeper session expires resigns, then wins /controller again in its new session
and stays active (the real controller in this process, the real ZooKeeper, the session expired from
outside with its own credentials)."""

from __future__ import annotations

import asyncio

import pytest

from pylog.common.config import BrokerConfig
from pylog.controller.controller import Controller
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.session import expire_session
from support.aio import until

pytestmark = pytest.mark.integration


def test_controller_is_active_again_after_each_of_several_session_expiries(zk_connect, zk):
    async def main() -> list[tuple[int, int]]:
        own = ZkClient(zk_connect, session_timeout_ms=6000).start()
        controller = Controller(0, own, BrokerConfig.from_props({"broker.id": "0", "zookeeper.connect": zk_connect}))
        seen = []
        try:
            own.create_top_level_paths()
            await controller.start()
            await until(lambda: controller.is_active, 30, "the first election")
            for _ in range(5):
                epoch = controller.ctx.epoch
                old_session = own.session_id
                await asyncio.get_running_loop().run_in_executor(None, expire_session, zk_connect,
                                                                 own.session_credentials())
                await until(lambda: own.session_id != old_session, 30, "a new session")
                await until(lambda: controller.is_active and controller.ctx.epoch > epoch, 30,
                             "the controller to be active again")
                await asyncio.sleep(0.5)  # anything still queued from the expiry must not undo it
                stat = zk.exists(paths.controller())
                assert controller.is_active and stat is not None and stat.ephemeralOwner == own.session_id
                seen.append((controller.ctx.epoch, zk.get_controller_epoch().epoch))
            return seen
        finally:
            await controller.stop()
            own.close()

    seen = asyncio.run(main())
    assert [a for a, _ in seen] == [b for _, b in seen]  # the context's epoch is ZooKeeper's
    assert [a for a, _ in seen] == sorted(set(a for a, _ in seen))  # a new epoch after each expiry
