"""DescribeClientQuotas: v0-1 (KIP-546; flexible from v1).

Behavior: the quota entities stored in /config/users and /config/clients (read fresh, as ZK-mode
Kafka's ZkAdminManager does) that match every filter component: match type 0 the exact name, 1 the
default entity, 2 any entity of that type; with `strict` only entities of no other type. A component
type other than user/client-id, or one given twice, is INVALID_REQUEST. DESCRIBE_CONFIGS on the
cluster, else CLUSTER_AUTHORIZATION_FAILED.
"""

from __future__ import annotations

import asyncio

from pylog.broker.handlers import handler
from pylog.zk.quota_entities import CLIENT_ID, USER, read_all
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

EXACT, DEFAULT, SPECIFIED = 0, 1, 2


def _matches(entity: dict, components: list, strict: bool) -> bool:
    for c in components:
        if c.entity_type not in entity:
            return False
        name = entity[c.entity_type]
        if c.match_type == EXACT and name != c.match or c.match_type == DEFAULT and name is not None:
            return False
    return not strict or set(entity) == {c.entity_type for c in components}


@handler(ApiKey.DescribeClientQuotas, 0, 1)
async def handle_describe_client_quotas(ctx: HandlerContext, req):
    """List the quota entities matching the filter."""
    cls = response_class(ApiKey.DescribeClientQuotas)[ctx.header.api_version]
    types = [c.entity_type for c in req.components]
    if not allowed(ctx, "DESCRIBE_CONFIGS", "CLUSTER"):
        err = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return cls(throttle_time_ms=0, error_code=int(err), error_message=err.message, entries=None)
    bad = next((t for t in types if t not in (USER, CLIENT_ID)), None)
    if bad is not None or len(set(types)) != len(types) or any(
            c.match_type not in (EXACT, DEFAULT, SPECIFIED) for c in req.components):
        message = f"Invalid entity type {bad}" if bad is not None else "Invalid quota filter components"
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.INVALID_REQUEST), error_message=message,
                   entries=None)
    found = await asyncio.get_running_loop().run_in_executor(None, read_all, ctx.broker.zk)
    return cls(throttle_time_ms=0, error_code=0, error_message=None, entries=[
        cls.EntryData(entity=[cls.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
                      values=[cls.EntryData.ValueData(key=k, value=v) for k, v in sorted(values.items())])
        for entity, values in found if _matches(entity, req.components, req.strict)])
