"""Errors raised by pylog.zk.

The ZooKeeper result errors subclass both ZkError and the matching kazoo exception, so callers can
catch either. Domain errors (ControllerMovedError, BrokerIdInUseError) say what went wrong in Kafka's words.
"""

from __future__ import annotations

from kazoo import exceptions as kz


class ZkError(Exception):
    """Base class of every error raised by pylog.zk."""


class NoNodeError(ZkError, kz.NoNodeError):
    """The znode does not exist."""


class NodeExistsError(ZkError, kz.NodeExistsError):
    """The znode already exists."""


class BadVersionError(ZkError, kz.BadVersionError):
    """A conditional write's expected zkVersion did not match the znode's version."""


class NotEmptyError(ZkError, kz.NotEmptyError):
    """The znode has children and cannot be deleted."""


class ConnectionLossError(ZkError, kz.ConnectionLoss):
    """The connection dropped before the result arrived; the operation may or may not have happened."""


class SessionExpiredError(ZkError, kz.SessionExpiredError):
    """The session expired; its ephemeral znodes and watches are gone."""


class NoAuthError(ZkError, kz.NoAuthError):
    """The znode's ACL does not let this session do that (zookeeper.set.acl, another login or none)."""


class ClientClosedError(ZkError):
    """The client was closed (by us) while the operation was pending or before it started."""


class ZkTimeoutError(ZkError, TimeoutError):
    """Connecting, or waiting to be connected again, took longer than allowed."""


class ControllerMovedError(ZkError):
    """A controller-epoch-fenced write was refused: another controller has been elected since."""


class BrokerIdInUseError(NodeExistsError):
    """/brokers/ids/<id> is held by another live session (a second broker with the same id)."""


# kazoo's result exceptions -> ours; anything else passes through unchanged.
_TRANSLATE: dict[type[BaseException], type[ZkError]] = {
    kz.NoNodeError: NoNodeError,
    kz.NodeExistsError: NodeExistsError,
    kz.BadVersionError: BadVersionError,
    kz.NotEmptyError: NotEmptyError,
    kz.NoAuthError: NoAuthError,
    kz.ConnectionLoss: ConnectionLossError,
    kz.ConnectionClosedError: ClientClosedError,  # before SessionExpiredError: kazoo subclasses it
    kz.SessionExpiredError: SessionExpiredError,
}


# kazoo raises these without a message.
_DETAIL: dict[type[ZkError], str] = {
    NoAuthError: "Not authorized by the znode's ZooKeeper ACL (zookeeper.set.acl; log in with the JAAS Client "
                 "section named by -Djava.security.auth.login.config in KAFKA_OPTS)",
}


def translate(exc: BaseException, path: str | None = None) -> BaseException:
    """Map a kazoo exception to ours (same message plus the path), or return it unchanged."""
    if isinstance(exc, ZkError):
        return exc
    for kind, ours in _TRANSLATE.items():
        if isinstance(exc, kind):
            detail = str(exc) or _DETAIL.get(ours, kind.__name__)
            err = ours(f"{detail} for {path}" if path else detail)
            err.__cause__ = exc
            return err
    return exc
