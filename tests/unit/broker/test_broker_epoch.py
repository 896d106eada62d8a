"""KIP-380 fencing of controller requests across a broker's runs (issue 30): a broker restarted after
kill -9 serves its socket before it registers, and until then the controller can only be addressing
the previous run's registration. Such requests wait for the registration and are then judged."""

import asyncio

import pytest

from pylog.broker.broker import Broker, broker_epoch_stale
from pylog.common.config import BrokerConfig


@pytest.mark.parametrize("request_epoch, registered_epoch, stale", [
    (-1, -1, False),  # an old controller's "unknown epoch" is never stale (Kafka)
    (-1, 40, False),
    (38, -1, True),  # not registered yet: any known epoch is the previous run's
    (38, 40, True),  # the previous run's registration
    (40, 40, False),
    (41, 40, False),  # the controller saw a re-registration before this broker did (Kafka accepts it)
])
def test_the_epoch_rule(request_epoch, registered_epoch, stale):
    assert broker_epoch_stale(request_epoch, registered_epoch) is stale


def _broker() -> Broker:
    return Broker(BrokerConfig.from_props({"zookeeper.connect": "127.0.0.1:1", "broker.id": "2"}))


def test_requests_before_registration_wait_for_it_and_only_the_old_run_s_are_refused():
    async def go():
        b = _broker()
        old = asyncio.ensure_future(b.is_broker_epoch_stale(38))  # the run before the kill -9
        new = asyncio.ensure_future(b.is_broker_epoch_stale(66))  # this run's, arriving before _register returns
        await asyncio.sleep(0.05)
        assert not old.done() and not new.done()
        b.mark_registered(66)
        return await asyncio.wait_for(old, 1), await asyncio.wait_for(new, 1)

    assert asyncio.run(go()) == (True, False)


def test_a_broker_that_stops_before_registering_refuses_what_waited():
    async def go():
        b = _broker()
        waiting = asyncio.ensure_future(b.is_broker_epoch_stale(38))
        await asyncio.sleep(0.05)
        await b.stop()  # e.g. the old registration never went away: start-up failed
        return await asyncio.wait_for(waiting, 1)

    assert asyncio.run(go()) is True
