"""Session events reach every listener in order, on the dispatcher's thread, even past a failing listener."""

from __future__ import annotations

import threading

from pylog.zk.session_events import SessionEvent, SessionEventDispatcher


def test_events_are_delivered_in_order_and_stop_drains_the_queue(caplog):
    d = SessionEventDispatcher()
    seen: list[tuple[str, SessionEvent, str]] = []

    def failing(event: SessionEvent) -> None:
        raise RuntimeError("listener bug")

    def recording(event: SessionEvent) -> None:
        seen.append(("b", event, threading.current_thread().name))

    def removed(event: SessionEvent) -> None:
        seen.append(("removed", event, ""))

    d.add(failing)
    d.add(removed)
    d.add(recording)
    d.remove(removed)
    d.start()
    assert d.running
    for e in (SessionEvent.CONNECTED, SessionEvent.SUSPENDED, SessionEvent.RECONNECTED):
        d.post(e)
    d.post(SessionEvent.CLOSED)
    d.stop()  # returns once everything posted before it was delivered
    assert not d.running
    assert [e for _, e, _ in seen] == [SessionEvent.CONNECTED, SessionEvent.SUSPENDED, SessionEvent.RECONNECTED,
                                       SessionEvent.CLOSED]
    assert {name for _, _, name in seen} == {"pylog-zk-session-events"}
    assert "ZooKeeper session listener" in caplog.text  # the failure is logged, not raised into the loop


def test_a_listener_may_stop_the_dispatcher_from_its_own_thread():
    d = SessionEventDispatcher()
    done = threading.Event()

    def closing(event: SessionEvent) -> None:
        d.stop()  # as ZkConnection.close() called from a session listener
        done.set()

    d.add(closing)
    d.start()
    d.post(SessionEvent.EXPIRED)
    assert done.wait(10) and not d.running
