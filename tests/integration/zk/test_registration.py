"""Broker registration and session events: duplicate ids refused, re-registration after a forced session
expiry, same session kept across a short stall."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import threading
from pathlib import Path

import pytest

from pylog.zk import errors, paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import BrokerRegistration, EndPoint
from pylog.zk.core import SessionEvent
from pylog.zk.session import SessionCredentials, ephemeral_owner, expire_session
from pylog.zk.testing import start_test_zookeeper

pytestmark = pytest.mark.integration


def registration(broker_id: int, port: int = 9092) -> BrokerRegistration:
    """A v5 registration on localhost."""
    return BrokerRegistration(broker_id, [EndPoint("PLAINTEXT", "localhost", port)], rack="r1")


def next_event(events: queue.Queue, timeout: float = 15.0) -> SessionEvent:
    """The next session event, or fail."""
    try:
        return events.get(timeout=timeout)
    except queue.Empty:
        raise AssertionError(f"no session event within {timeout}s") from None


def test_register_returns_czxid_and_writes_v5(zk: ZkClient) -> None:
    zk.create_top_level_paths()
    epoch = zk.register_broker(registration(1))
    data, stat = zk.get(paths.broker_id(1))
    assert epoch == stat.czxid and stat.ephemeralOwner == zk.session_id
    obj = json.loads(data)
    assert obj["version"] == 5 and obj["endpoints"] == ["PLAINTEXT://localhost:9092"] and obj["rack"] == "r1"
    assert re.fullmatch(r"\d{13}", obj["timestamp"])  # a string of epoch ms
    assert zk.register_broker(registration(1)) == epoch  # our own node: success, same epoch
    assert zk.get_broker(1).registration == BrokerRegistration.decode(1, data)  # type: ignore[union-attr]


def test_second_broker_with_same_id_is_refused(zk: ZkClient, zk_connect: str) -> None:
    zk.create_top_level_paths()
    zk.register_broker(registration(1))
    with ZkClient(zk_connect, session_timeout_ms=6000) as other:
        with pytest.raises(errors.BrokerIdInUseError) as err:
            other.register_broker(registration(1, port=9093))
        assert str(err.value) == (
            f"Error while creating ephemeral at /brokers/ids/1, node already exists and owner "
            f"'{zk.session_id}' does not match current session '{other.session_id}'")
        assert isinstance(err.value, errors.NodeExistsError)
    assert json.loads(zk.get(paths.broker_id(1))[0])["port"] == 9092  # the first one is untouched


def test_reregister_after_forced_session_expiry(zk_connect: str, zk: ZkClient, tmp_path: Path) -> None:
    zk.create_top_level_paths()
    session_file = tmp_path / "zk-session.json"
    events: queue.Queue = queue.Queue()
    broker = ZkClient(zk_connect, session_timeout_ms=6000, session_file=str(session_file))
    broker.add_session_listener(events.put)
    with broker.start():
        assert next_event(events) == SessionEvent.CONNECTED
        first_epoch = broker.register_broker(registration(1))
        creds = SessionCredentials.read(str(session_file))  # what a chaos test reads from outside
        assert creds.session_id == ephemeral_owner(zk, paths.broker_id(1)) == broker.session_id

        assert expire_session(zk_connect, creds) is True
        assert zk.exists(paths.broker_id(1)) is None  # ephemerals go with the session

        seen = [next_event(events), next_event(events)]
        if seen[0] == SessionEvent.SUSPENDED:
            seen = seen[1:] + [next_event(events)]
        assert seen == [SessionEvent.EXPIRED, SessionEvent.NEW_SESSION]
        assert broker.session_id != creds.session_id
        assert SessionCredentials.read(str(session_file)).session_id == broker.session_id

        second_epoch = broker.register_broker(registration(1))
        assert second_epoch > first_epoch
        assert zk.exists(paths.broker_id(1)).ephemeralOwner == broker.session_id  # type: ignore[union-attr]
    assert next_event(events) == SessionEvent.CLOSED
    assert zk.exists(paths.broker_id(1)) is None


def test_expiring_a_dead_session_reports_false(zk_connect: str) -> None:
    with ZkClient(zk_connect, session_timeout_ms=6000) as gone:
        creds = gone.session_credentials()
    assert expire_session(zk_connect, creds) is False


def test_suspended_then_reconnected_keeps_session_and_retries_requests(tmp_path: Path) -> None:
    server = start_test_zookeeper(str(tmp_path))  # our own server: we freeze it
    events: queue.Queue = queue.Queue()
    client = ZkClient(server.connect_string + "/suspend", session_timeout_ms=4000)
    client.add_session_listener(events.put)
    try:
        client.start()
        client.create_top_level_paths()
        epoch = client.register_broker(registration(1))
        session = client.session_id
        assert next_event(events) == SessionEvent.CONNECTED
        os.kill(server.pid, signal.SIGSTOP)  # a GC pause / network stall: pings go unanswered
        try:
            assert next_event(events, 20) == SessionEvent.SUSPENDED
            result: list = []
            reader = threading.Thread(target=lambda: result.append(client.get(paths.broker_id(1))))
            reader.start()  # issued while suspended: must wait for the reconnect, not fail
        finally:
            os.kill(server.pid, signal.SIGCONT)
        assert next_event(events, 20) == SessionEvent.RECONNECTED
        reader.join(20)
        assert result and result[0][1].czxid == epoch
        assert client.session_id == session  # same session: ephemerals survived
    finally:
        client.close()
        server.stop()
