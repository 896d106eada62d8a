"""FindCoordinator: v0-4 (Kafka 3.7's range; v5-6 belong to later releases).

Behavior: a group's coordinator is the leader of `__consumer_offsets` partition
abs(javaHash(group)) % partitions; the topic is created on the first lookup (COORDINATOR_NOT_AVAILABLE
until its leaders exist). Transaction coordinators (key type 1) are not hosted yet:
COORDINATOR_NOT_AVAILABLE. Share-group keys (2) are INVALID_REQUEST. A group key needs DESCRIBE on the group
(GROUP_AUTHORIZATION_FAILED), as in Kafka.
Version notes: v4+ batch the keys (KIP-699); v3+ are flexible; v0 has no key type.
"""

from __future__ import annotations

from pylog.broker.group_host import OFFSETS_TOPIC
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

GROUP, TRANSACTION = 0, 1


@handler(ApiKey.FindCoordinator, 0, 4)
async def handle_find_coordinator(ctx: HandlerContext, req):
    """Tell the client which broker coordinates each key."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.FindCoordinator)[version]
    key_type = getattr(req, "key_type", GROUP) if version >= 1 else GROUP
    keys = [k or "" for k in (req.coordinator_keys or [])] if version >= 4 else [req.key or ""]
    # Kafka checks DESCRIBE on the group before looking at the key.
    found = [(ErrorCode.GROUP_AUTHORIZATION_FAILED, -1, "", -1)
             if key_type == GROUP and not allowed(ctx, "DESCRIBE", "GROUP", k) else _find(ctx, key_type, k)
             for k in keys]
    if version >= 4:
        return cls(throttle_time_ms=0, coordinators=[
            cls.Coordinator(key=k, node_id=n, host=h, port=p, error_code=int(e), error_message=_message(e))
            for k, (e, n, h, p) in zip(keys, found)])
    e, n, h, p = found[0]
    return cls(throttle_time_ms=0, error_code=int(e), error_message=_message(e), node_id=n, host=h, port=p)


def _find(ctx: HandlerContext, key_type: int, key: str) -> tuple[ErrorCode, int, str, int]:
    if key_type == GROUP:
        if not key:
            return ErrorCode.INVALID_REQUEST, -1, "", -1
        groups = ctx.broker.groups
        if groups is None:
            return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
        return groups.find(key, None if ctx.security is None else ctx.security.listener_name)
    if key_type == TRANSACTION:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    return ErrorCode.INVALID_REQUEST, -1, "", -1


def _message(err: ErrorCode) -> str | None:
    if err == ErrorCode.NONE:
        return None
    if err == ErrorCode.COORDINATOR_NOT_AVAILABLE:
        return f"The coordinator is not available ({OFFSETS_TOPIC} is being created or has no leader)."
    return err.name
