"""Creating an internal topic on first use (issue 30): `__consumer_offsets` only once
offsets.topic.replication.factor brokers are alive (Kafka's COORDINATOR_NOT_AVAILABLE until then),
`__transaction_state` with the live brokers it has (pylog's documented rule), neither before the
controller has named any live broker, and no "Created" line for a topic that already existed.
Metadata's auto-creation likewise waits for the controller's first word."""

import asyncio
import logging
from types import SimpleNamespace

import pytest

from pylog.broker.group_host import GroupHost
from pylog.broker.metadata_cache import BrokerEndpoint, MetadataCache
from pylog.broker.topic_admin import TopicAdmin, TopicResult
from pylog.broker.txn_host import TxnHost
from pylog.common.config import BrokerConfig
from pylog.protocol.errors import ErrorCode as E
from support.fake_replicas import Replicas


class Admin:
    """TopicAdmin's create_topic as the hosts call it: records the calls, answers `error`."""

    def __init__(self, error: E = E.NONE) -> None:
        self.error = error
        self.created: list[tuple[str, int, int]] = []

    async def create_topic(self, name, partitions, rf, manual, configs, validate_only, timeout_ms):
        self.created.append((name, partitions, rf))
        return TopicResult(name, error=self.error)


def _find(kind, live: int, admin: Admin, **props) -> tuple:
    """FindCoordinator's answer on a broker that knows `live` brokers and no internal topic, then what was created."""
    async def go():
        tasks = []
        brokers = {b: BrokerEndpoint(b, "127.0.0.1", 9092 + b) for b in range(live)}
        metadata = SimpleNamespace(topics={}, brokers=brokers)
        cfg = BrokerConfig.from_props({"zookeeper.connect": "x:1", **props})
        spawn = lambda coro: tasks.append(asyncio.get_running_loop().create_task(coro)) or tasks[-1]  # noqa: E731
        if kind is GroupHost:
            h = GroupHost(cfg, metadata, Replicas("__consumer_offsets"), admin, spawn)
        else:
            h = TxnHost(cfg, metadata, Replicas("__transaction_state"), admin, spawn, 0, None, None)
        answer = h.find("some-key")
        await asyncio.gather(*tasks)
        return answer[0], admin.created

    return asyncio.run(go())


@pytest.mark.parametrize("live, created_rf", [(0, None), (1, None), (2, None), (3, 3), (4, 3)])
def test_consumer_offsets_waits_for_its_replication_factor_of_live_brokers(live, created_rf):
    err, created = _find(GroupHost, live, Admin(), **{"offsets.topic.replication.factor": "3",
                                                      "offsets.topic.num.partitions": "5"})
    assert err == E.COORDINATOR_NOT_AVAILABLE  # the topic has no leaders yet either way
    assert created == ([] if created_rf is None else [("__consumer_offsets", 5, created_rf)])


@pytest.mark.parametrize("live, created_rf", [(0, None), (1, 1), (3, 3)])
def test_transaction_state_is_created_with_the_live_brokers_but_not_before_any_is_known(live, created_rf):
    err, created = _find(TxnHost, live, Admin(), **{"transaction.state.log.num.partitions": "5"})
    assert err == E.COORDINATOR_NOT_AVAILABLE
    assert created == ([] if created_rf is None else [("__transaction_state", 5, created_rf)])


def test_a_topic_that_already_existed_is_not_reported_as_created(caplog):
    caplog.set_level(logging.INFO, logger="pylog.broker")
    _, created = _find(GroupHost, 1, Admin(E.TOPIC_ALREADY_EXISTS), **{"offsets.topic.replication.factor": "1"})
    assert created == [("__consumer_offsets", 50, 1)]
    assert [r.getMessage() for r in caplog.records if "__consumer_offsets" in r.getMessage()] == []
    _, created = _find(GroupHost, 1, Admin(E.NONE), **{"offsets.topic.replication.factor": "1"})
    assert [r.getMessage() for r in caplog.records if r.getMessage().startswith("Created")] == [
        "Created __consumer_offsets with 50 partitions, replication factor 1"]


def test_too_few_brokers_is_logged_once_per_count_not_per_retry(caplog):
    caplog.set_level(logging.INFO, logger="pylog.broker")

    async def go():
        h = GroupHost(BrokerConfig.from_props({"zookeeper.connect": "x:1"}),
                      SimpleNamespace(topics={}, brokers={0: None}), Replicas("__consumer_offsets"), Admin(), None)
        return [h.creation_replication_factor(n) for n in (1, 1, 1, 2, 3)]

    assert asyncio.run(go()) == [None, None, None, None, 3]
    lines = [m for m in (r.getMessage() for r in caplog.records) if "does not meet the required replication" in m]
    assert len(lines) == 2 and lines[0].startswith("Number of alive brokers '1'"), lines


def test_metadata_auto_creation_waits_until_the_controller_named_the_live_brokers():
    cfg = BrokerConfig.from_props({"zookeeper.connect": "x:1"})
    admin = TopicAdmin(None, MetadataCache(), cfg, 2, None)  # no ZooKeeper needed: nothing may be written
    assert asyncio.run(admin.auto_create("chaos")) == E.LEADER_NOT_AVAILABLE
