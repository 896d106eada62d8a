"""AlterClientQuotas: v0-1 (KIP-546; flexible from v1).

Behavior: sets or removes quota keys of user, client-id and user/client-id entities (a null name is
the default entity) in /config/users and /config/clients, with a /config/changes notification, as
ZK-mode Kafka's ZkAdminManager does, so every broker enforces them at once. Per entry INVALID_REQUEST
with Kafka's message for an entity type other than user/client-id (ip quotas are not kept), a
repeated type, an unknown key or a fractional byte rate; validate_only checks without writing. ALTER_CONFIGS
on the cluster, else CLUSTER_AUTHORIZATION_FAILED for every entry.
"""

from __future__ import annotations

import asyncio

from pylog.broker.handlers import handler
from pylog.zk.quota_entities import InvalidQuota, stored_value, write, znode_of
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


def _entity(entry) -> dict[str, str | None]:
    entity: dict[str, str | None] = {}
    for e in entry.entity:
        if e.entity_type in entity:
            raise InvalidQuota(f"Duplicate {e.entity_type} entity in the request")
        entity[e.entity_type] = e.entity_name
    return entity


@handler(ApiKey.AlterClientQuotas, 0, 1)
async def handle_alter_client_quotas(ctx: HandlerContext, req):
    """Change client quotas."""
    cls = response_class(ApiKey.AlterClientQuotas)[ctx.header.api_version]
    may_alter = allowed(ctx, "ALTER_CONFIGS", "CLUSTER")
    loop = asyncio.get_running_loop()
    out = []
    for entry in req.entries:
        err, message = ErrorCode.NONE, None
        try:
            if not may_alter:
                raise PermissionError
            entity = _entity(entry)
            znode_of(entity)
            ops = [(op.key, None if op.remove else op.value) for op in entry.ops]
            for key, value in ops:
                stored_value(key, 0.0 if value is None else value)
            if not req.validate_only:
                await loop.run_in_executor(None, write, ctx.broker.zk, entity, ops)
        except PermissionError:
            err, message = ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED.message
        except InvalidQuota as exc:
            err, message = ErrorCode.INVALID_REQUEST, str(exc)
        out.append(cls.EntryData(error_code=int(err), error_message=message, entity=[
            cls.EntryData.EntityData(entity_type=e.entity_type, entity_name=e.entity_name) for e in entry.entity]))
    return cls(throttle_time_ms=0, entries=out)
