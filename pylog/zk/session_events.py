"""ZooKeeper session events and their delivery to listeners, in order, on a thread of their own.

kazoo reports state changes on its connection thread, where nothing may block or call ZooKeeper.
ZkConnection turns each change into a SessionEvent and posts it here; this dispatcher's thread
then calls every listener in turn, so a listener may call ZooKeeper (it must still return quickly:
the next event waits for it).
"""

from __future__ import annotations

import enum
import logging
import queue
import threading
from typing import Any, Callable

log = logging.getLogger(__name__)


class SessionEvent(enum.Enum):
    """What happened to the ZooKeeper session, as the broker and controller need to react to it."""

    CONNECTED = "CONNECTED"  # first session established after start()
    SUSPENDED = "SUSPENDED"  # connection lost; the session may be alive: stop acting, don't assume ownership
    RECONNECTED = "RECONNECTED"  # same session back: ephemerals and watches are intact
    EXPIRED = "EXPIRED"  # session gone: ephemerals deleted; a NEW_SESSION follows when ZooKeeper is reachable
    NEW_SESSION = "NEW_SESSION"  # connected with a new session after EXPIRED: re-register now
    CLOSED = "CLOSED"  # close() was called


SessionListener = Callable[[SessionEvent], Any]


class SessionEventDispatcher:
    """Listeners, a queue of posted events, and the thread that hands each event to every listener."""

    def __init__(self) -> None:
        self._listeners: list[SessionListener] = []
        self._events: queue.Queue[SessionEvent | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        """Whether the thread was started and not stopped since."""
        return self._thread is not None

    def add(self, listener: SessionListener) -> None:
        """Call listener(SessionEvent) on every later event."""
        self._listeners.append(listener)

    def remove(self, listener: SessionListener) -> None:
        """Stop calling a listener (unknown ones are ignored)."""
        if listener in self._listeners:
            self._listeners.remove(listener)

    def start(self) -> None:
        """Start the delivery thread."""
        self._thread = threading.Thread(target=self._run, name="pylog-zk-session-events", daemon=True)
        self._thread.start()

    def post(self, event: SessionEvent) -> None:
        """Queue an event for the listeners; returns at once (safe on kazoo's threads)."""
        self._events.put(event)

    def stop(self) -> None:
        """Deliver what is queued (a CLOSED included), then end the thread."""
        if self._thread is not None:
            self._events.put(None)
            if self._thread is not threading.current_thread():  # a listener may close the connection
                self._thread.join(timeout=10)
            self._thread = None

    def _run(self) -> None:
        while True:
            event = self._events.get()
            if event is None:
                return
            for listener in list(self._listeners):
                try:
                    listener(event)
                except Exception:
                    log.exception("ZooKeeper session listener %r failed on %s", listener, event.value)
