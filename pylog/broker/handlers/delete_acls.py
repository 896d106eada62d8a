"""DeleteAcls: v1-3 (KIP-290 pattern types from v1; flexible from v2).

Behavior: needs ALTER on the cluster; without an authorizer every filter gets SECURITY_DISABLED
(Kafka's answer when authorizer.class.name is unset); with one, the matching bindings are removed
and returned per filter.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.handlers.describe_acls import NO_AUTHORIZER
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.DeleteAcls, 1, 3)
async def handle_delete_acls(ctx: HandlerContext, req):
    """Remove the ACL bindings matching each filter."""
    cls = response_class(ApiKey.DeleteAcls)[ctx.header.api_version]
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return cls(throttle_time_ms=0, filter_results=[
            cls.DeleteAclsFilterResult(error_code=int(ErrorCode.SECURITY_DISABLED), error_message=NO_AUTHORIZER,
                                       matching_acls=[])
            for _ in req.filters])
    return await authorizer.delete_acls_response(ctx, req, cls)
