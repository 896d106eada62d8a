"""DescribeAcls: v1-3 (KIP-290 pattern types from v1; flexible from v2).

Behavior: without an authorizer (authorizer.class.name unset) the request gets SECURITY_DISABLED,
as a Kafka broker without one answers; with the ACL authorizer, the bindings matching the filter.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode

NO_AUTHORIZER = "No Authorizer is configured."  # Kafka's AclApis message, the same for all three ACL APIs


@handler(ApiKey.DescribeAcls, 1, 3)
async def handle_describe_acls(ctx: HandlerContext, req):
    """The ACL bindings that match the request's filter."""
    cls = response_class(ApiKey.DescribeAcls)[ctx.header.api_version]
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.SECURITY_DISABLED), error_message=NO_AUTHORIZER,
                   resources=[])
    return await authorizer.describe_acls_response(ctx, req, cls)
