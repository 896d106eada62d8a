"""CreateAcls: v1-3 (KIP-290 pattern types from v1; flexible from v2).

Behavior: needs ALTER on the cluster; without an authorizer every creation gets SECURITY_DISABLED
(Kafka's answer when authorizer.class.name is unset); with one, each binding is validated and stored.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.zk_calls import UNREACHABLE, outage
from pylog.broker.handlers.describe_acls import NO_AUTHORIZER
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.acl_wire import creation_binding
from pylog.security.authorizer import allowed


@handler(ApiKey.CreateAcls, 1, 3)
async def handle_create_acls(ctx: HandlerContext, req):
    """Store the requested ACL bindings."""
    cls = response_class(ApiKey.CreateAcls)[ctx.header.api_version]
    result = cls.AclCreationResult
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return cls(throttle_time_ms=0, results=[
            result(error_code=int(ErrorCode.SECURITY_DISABLED), error_message=NO_AUTHORIZER) for _ in req.creations])
    if not allowed(ctx, "ALTER", "CLUSTER"):
        return cls(throttle_time_ms=0, results=[
            result(error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                   error_message="Cluster authorization failed.") for _ in req.creations])
    checked = [creation_binding(c) for c in req.creations]
    try:
        await authorizer.create_acls([binding for binding, problem in checked if problem is None])
    except UNREACHABLE as exc:  # answered, not a dropped connection (issue 25, edge 5)
        err = outage(ctx.broker.zk.connect, exc)
        return cls(throttle_time_ms=0, results=[result(error_code=int(err.code), error_message=str(err))
                                                for _ in req.creations])
    return cls(throttle_time_ms=0, results=[
        result(error_code=int(ErrorCode.INVALID_REQUEST if problem else ErrorCode.NONE), error_message=problem)
        for _, problem in checked])
