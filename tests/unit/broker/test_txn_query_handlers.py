"""DescribeTransactions and ListTransactions handlers over a real coordinator on in-memory seams, with ACLs."""

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace

from pylog.broker.handlers.describe_transactions import handle_describe_transactions
from pylog.broker.handlers.list_transactions import handle_list_transactions
from pylog.common.errors import ErrorCode as E
from pylog.protocol.api import ApiKey, request_class

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "coordinator"))
from test_txn_coordinator import make, ready  # noqa: E402  (the coordinator's in-memory seams)


class Authorizer:
    """Allows everything except the (operation, resource type, name) triples in `denied`."""

    def __init__(self, denied):
        self.denied = set(denied)

    def authorize(self, principal, host, operation, resource_type, name):
        return (operation, resource_type, name) not in self.denied


def _ctx(coordinator, denied=None):
    broker = SimpleNamespace(transactions=None if coordinator is None else SimpleNamespace(coordinator=coordinator),
                             authorizer=None if denied is None else Authorizer(denied))
    return SimpleNamespace(broker=broker, header=SimpleNamespace(api_version=0), peer="127.0.0.1:5000",
                           security=SimpleNamespace(principal="User:alice"))


async def _coordinator_with_open_txn():
    c = await ready(make())
    r = await c.init_producer_id("tx", 60000)
    assert await c.add_partitions("tx", r.producer_id, r.producer_epoch,
                                  frozenset({("t", 1), ("t", 0), ("secret", 0)})) == E.NONE
    await c.init_producer_id("idle", 30000)
    return c


def _describe(ids):
    return request_class(ApiKey.DescribeTransactions)[0](transactional_ids=ids)


def _list(states=(), pids=()):
    return request_class(ApiKey.ListTransactions)[0](state_filters=list(states), producer_id_filters=list(pids))


def test_describe_answers_each_id_and_hides_unauthorized_topics():
    async def run():
        c = await _coordinator_with_open_txn()
        resp = await handle_describe_transactions(
            _ctx(c, {("DESCRIBE", "TOPIC", "secret"), ("DESCRIBE", "TRANSACTIONAL_ID", "idle")}),
            _describe(["tx", "idle", "nope"]))
        tx, idle, nope = resp.transaction_states
        assert (tx.error_code, tx.transaction_state, tx.producer_id, tx.producer_epoch, tx.transaction_timeout_ms,
                tx.transaction_start_time_ms) == (0, "Ongoing", 1000, 0, 60000, 100)
        assert [(t.topic, list(t.partitions)) for t in tx.topics] == [("t", [0, 1])]
        assert idle.error_code == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
        assert nope.error_code == E.TRANSACTIONAL_ID_NOT_FOUND
        await c.close()
    asyncio.run(run())


def test_list_filters_and_leaves_out_unauthorized_ids():
    async def run():
        c = await _coordinator_with_open_txn()
        resp = await handle_list_transactions(_ctx(c), _list())
        assert resp.error_code == 0
        assert [(t.transactional_id, t.producer_id, t.transaction_state) for t in resp.transaction_states] == [
            ("idle", 1001, "Empty"), ("tx", 1000, "Ongoing")]
        resp = await handle_list_transactions(_ctx(c, {("DESCRIBE", "TRANSACTIONAL_ID", "idle")}),
                                              _list(["Empty", "Ongoing", "Weird"]))
        assert [t.transactional_id for t in resp.transaction_states] == ["tx"]
        assert list(resp.unknown_state_filters) == ["Weird"]
        resp = await handle_list_transactions(_ctx(c), _list(pids=[1001]))
        assert [t.transactional_id for t in resp.transaction_states] == ["idle"]
        await c.close()
    asyncio.run(run())


def test_without_a_hosted_coordinator_both_say_not_available():
    async def run():
        resp = await handle_list_transactions(_ctx(None), _list())
        assert (resp.error_code, list(resp.transaction_states)) == (E.COORDINATOR_NOT_AVAILABLE, [])
        resp = await handle_describe_transactions(_ctx(None), _describe(["tx"]))
        assert resp.transaction_states[0].error_code == E.COORDINATOR_NOT_AVAILABLE
    asyncio.run(run())


def test_responses_encode_at_v0():
    async def run():
        c = await _coordinator_with_open_txn()
        for resp in (await handle_list_transactions(_ctx(c), _list()),
                     await handle_describe_transactions(_ctx(c), _describe(["tx"]))):
            assert len(resp.encode(version=0)) > 10
        await c.close()
    asyncio.run(run())
