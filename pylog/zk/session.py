"""Session credentials and forced session expiry (for tests and chaos runs).

ZooKeeper lets any client that knows a session's id and password attach to it; closing that attached
client closes (expires) the session for its real owner too. This is Curator's KillSession trick and
works across processes: a broker publishes its credentials with ZkClient(session_file=...), and a
test calls expire_session(connect, SessionCredentials.read(file)). The owner then sees SUSPENDED,
EXPIRED and, once it reconnects, NEW_SESSION. ephemeral_owner() tells which session holds a znode.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.protocol.states import KazooState


@dataclass(frozen=True)
class SessionCredentials:
    """A session's id (the ephemeralOwner of its znodes) and its password."""

    session_id: int
    password: bytes

    def to_json(self) -> str:
        """{"session_id": <int>, "session_id_hex": "0x...", "password": "<hex>"}."""
        return json.dumps({"session_id": self.session_id, "session_id_hex": hex(self.session_id),
                           "password": self.password.hex()})

    @classmethod
    def from_json(cls, text: str) -> "SessionCredentials":
        """Parse to_json() output; ValueError if malformed."""
        try:
            obj = json.loads(text)
            return cls(int(obj["session_id"]), bytes.fromhex(obj["password"]))
        except (ValueError, KeyError, TypeError) as e:
            raise ValueError(f"Malformed ZooKeeper session credentials: {e}") from None

    def write(self, path: str) -> None:
        """Write atomically (tmp + rename) with owner-only permissions: the password grants the session."""
        directory = os.path.dirname(os.path.abspath(path))
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".zk-session-", dir=directory)
        try:
            with os.fdopen(fd, "w") as f:
                f.write(self.to_json())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    @classmethod
    def read(cls, path: str) -> "SessionCredentials":
        """Read a file written by write()."""
        with open(path) as f:
            return cls.from_json(f.read())


def expire_session(connect: str, creds: SessionCredentials, timeout: float = 10.0) -> bool:
    """Expire someone else's session by attaching to it and closing it; True if it was still alive.

    connect may carry a chroot (ignored: sessions are server-wide). Returns once ZooKeeper has closed the
    session, i.e. its ephemeral znodes are gone.
    """
    hosts = connect.split("/", 1)[0]
    client = KazooClient(hosts=hosts, client_id=(creds.session_id, creds.password), timeout=10.0,
                         connection_retry={"max_tries": -1, "delay": 0.05, "max_delay": 0.5})
    states: list[KazooState] = []
    lock = threading.Lock()

    def record(state: KazooState) -> None:
        with lock:
            states.append(state)

    client.add_listener(record)
    try:
        client.start(timeout=timeout)
        with lock:
            # An already-expired session shows up as LOST before kazoo opens a fresh one.
            alive = client.client_id is not None and client.client_id[0] == creds.session_id \
                and KazooState.LOST not in states
    finally:
        client.stop()  # sends closeSession and waits for the server's reply
        client.close()
    return alive


def ephemeral_owner(zk: object, path: str) -> int | None:
    """Session id owning an ephemeral znode (0 for persistent ones), or None if it does not exist."""
    stat = zk.exists(path)  # type: ignore[attr-defined]
    return None if stat is None else stat.ephemeralOwner
