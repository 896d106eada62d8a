"""CreateAcls: v1-3 (KIP-290 pattern types from v1; flexible from v2).

Behavior: needs ALTER on the cluster; without an authorizer every creation gets SECURITY_DISABLED
(Kafka's answer when authorizer.class.name is unset); with one, each binding is validated and stored.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.handlers.describe_acls import NO_AUTHORIZER
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.CreateAcls, 1, 3)
async def handle_create_acls(ctx: HandlerContext, req):
    """Store the requested ACL bindings."""
    cls = response_class(ApiKey.CreateAcls)[ctx.header.api_version]
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return cls(throttle_time_ms=0, results=[
            cls.AclCreationResult(error_code=int(ErrorCode.SECURITY_DISABLED), error_message=NO_AUTHORIZER)
            for _ in req.creations])
    return await authorizer.create_acls_response(ctx, req, cls)
