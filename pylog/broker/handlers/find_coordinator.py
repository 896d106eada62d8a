"""FindCoordinator: v0-6 (Kafka 3.9's range).

Behavior: a group's coordinator is the leader of `__consumer_offsets` partition
abs(javaHash(group)) % partitions, a transactional id's (key type 1) the leader of its `__transaction_state`
partition, computed the same way; each topic is created on its first lookup (COORDINATOR_NOT_AVAILABLE
until its leaders exist). Share-group keys (2) are INVALID_REQUEST. As in Kafka, a group key needs DESCRIBE on
the group (GROUP_AUTHORIZATION_FAILED), a transactional id DESCRIBE on it (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
Version notes: v4+ batch the keys (KIP-699); v3+ are flexible; v0 has no key type; v5 only allows
TRANSACTION_ABORTABLE (KIP-890), which lookups never return; v6 allows share-group keys (KIP-932),
INVALID_REQUEST here as on a 3.9 broker without share groups enabled.
"""

from __future__ import annotations

from pylog.broker.group_host import OFFSETS_TOPIC
from pylog.broker.handlers import handler
from pylog.broker.internal_topic import NOT_FOUND
from pylog.broker.txn_host import TRANSACTION_STATE_TOPIC
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

GROUP, TRANSACTION = 0, 1


@handler(ApiKey.FindCoordinator, 0, 6)
async def handle_find_coordinator(ctx: HandlerContext, req):
    """Tell the client which broker coordinates each key."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.FindCoordinator)[version]
    key_type = getattr(req, "key_type", GROUP) if version >= 1 else GROUP
    keys = [k or "" for k in (req.coordinator_keys or [])] if version >= 4 else [req.key or ""]
    found = [_refusal(ctx, key_type, k) or _find(ctx, key_type, k) for k in keys]
    if version >= 4:
        return cls(throttle_time_ms=0, coordinators=[
            cls.Coordinator(key=k, node_id=n, host=h, port=p, error_code=int(e), error_message=_message(e, key_type))
            for k, (e, n, h, p) in zip(keys, found)])
    e, n, h, p = found[0]
    return cls(throttle_time_ms=0, error_code=int(e), error_message=_message(e, key_type), node_id=n, host=h, port=p)


def _refusal(ctx: HandlerContext, key_type: int, key: str) -> tuple[ErrorCode, int, str, int] | None:
    """Kafka checks DESCRIBE on the group or transactional id before looking at the key."""
    if key_type == GROUP and not allowed(ctx, "DESCRIBE", "GROUP", key):
        return ErrorCode.GROUP_AUTHORIZATION_FAILED, -1, "", -1
    if key_type == TRANSACTION and not allowed(ctx, "DESCRIBE", "TRANSACTIONAL_ID", key):
        return ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, -1, "", -1
    return None


def _find(ctx: HandlerContext, key_type: int, key: str) -> tuple[ErrorCode, int, str, int]:
    if key_type not in (GROUP, TRANSACTION) or not key:
        return ErrorCode.INVALID_REQUEST, -1, "", -1
    host = ctx.broker.groups if key_type == GROUP else ctx.broker.transactions
    if host is None:
        return NOT_FOUND
    return host.find(key, None if ctx.security is None else ctx.security.listener_name)


def _message(err: ErrorCode, key_type: int = GROUP) -> str | None:
    if err == ErrorCode.NONE:
        return None
    if err == ErrorCode.COORDINATOR_NOT_AVAILABLE:
        topic = OFFSETS_TOPIC if key_type == GROUP else TRANSACTION_STATE_TOPIC
        return f"The coordinator is not available ({topic} is being created or has no leader)."
    return err.name
