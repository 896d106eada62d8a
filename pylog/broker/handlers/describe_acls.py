"""DescribeAcls: v1-3 (KIP-290 pattern types from v1; flexible from v2).

Behavior: without an authorizer (authorizer.class.name unset) the request gets SECURITY_DISABLED,
as a Kafka broker without one answers; with the ACL authorizer, the bindings matching the filter.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.acl import AclEntry, ResourcePattern
from pylog.security.acl_wire import binding_filter, code_of
from pylog.security.authorizer import allowed

NO_AUTHORIZER = "No Authorizer is configured."  # Kafka's AclApis message, the same for all three ACL APIs


@handler(ApiKey.DescribeAcls, 1, 3)
async def handle_describe_acls(ctx: HandlerContext, req):
    """The ACL bindings that match the request's filter."""
    cls = response_class(ApiKey.DescribeAcls)[ctx.header.api_version]
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.SECURITY_DISABLED), error_message=NO_AUTHORIZER,
                   resources=[])
    if not allowed(ctx, "DESCRIBE", "CLUSTER"):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                   error_message="Cluster authorization failed.", resources=[])
    f = binding_filter(req.resource_type_filter, req.resource_name_filter, req.pattern_type_filter,
                       req.principal_filter, req.host_filter, req.operation, req.permission_type)
    by_pattern: dict[ResourcePattern, list[AclEntry]] = {}
    for b in await authorizer.matching_acls(f):
        by_pattern.setdefault(b.pattern, []).append(b.entry)
    r = cls.DescribeAclsResource
    return cls(throttle_time_ms=0, error_code=int(ErrorCode.NONE), error_message=None, resources=[
        r(resource_type=code_of(p.resource_type), resource_name=p.name, pattern_type=code_of(p.pattern_type),
          acls=[r.AclDescription(principal=e.principal, host=e.host, operation=code_of(e.operation),
                                 permission_type=code_of(e.permission)) for e in entries])
        for p, entries in by_pattern.items()])
