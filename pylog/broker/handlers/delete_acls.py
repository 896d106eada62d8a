"""DeleteAcls: v1-3 (KIP-290 pattern types from v1; flexible from v2).

Behavior: needs ALTER on the cluster; without an authorizer every filter gets SECURITY_DISABLED
(Kafka's answer when authorizer.class.name is unset); with one, the matching bindings are removed
and returned per filter.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.zk_calls import UNREACHABLE, outage
from pylog.broker.handlers.describe_acls import NO_AUTHORIZER
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.acl_wire import binding_filter, code_of
from pylog.security.authorizer import allowed


@handler(ApiKey.DeleteAcls, 1, 3)
async def handle_delete_acls(ctx: HandlerContext, req):
    """Remove the ACL bindings matching each filter."""
    cls = response_class(ApiKey.DeleteAcls)[ctx.header.api_version]
    fr = cls.DeleteAclsFilterResult
    authorizer = ctx.broker.authorizer
    if authorizer is None:
        return cls(throttle_time_ms=0, filter_results=[
            fr(error_code=int(ErrorCode.SECURITY_DISABLED), error_message=NO_AUTHORIZER, matching_acls=[])
            for _ in req.filters])
    if not allowed(ctx, "ALTER", "CLUSTER"):
        return cls(throttle_time_ms=0, filter_results=[
            fr(error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), error_message="Cluster authorization failed.",
               matching_acls=[]) for _ in req.filters])
    filters = [binding_filter(f.resource_type_filter, f.resource_name_filter, f.pattern_type_filter,
                              f.principal_filter, f.host_filter, f.operation, f.permission_type) for f in req.filters]
    none = int(ErrorCode.NONE)
    try:
        removed_per_filter = await authorizer.delete_acls(filters)
    except UNREACHABLE as exc:  # answered, not a dropped connection (issue 25, edge 5)
        err = outage(ctx.broker.zk.connect, exc)
        return cls(throttle_time_ms=0, filter_results=[
            fr(error_code=int(err.code), error_message=str(err), matching_acls=[]) for _ in req.filters])
    return cls(throttle_time_ms=0, filter_results=[
        fr(error_code=none, error_message=None, matching_acls=[fr.DeleteAclsMatchingAcl(
            error_code=none, error_message=None, resource_type=code_of(b.pattern.resource_type),
            resource_name=b.pattern.name, pattern_type=code_of(b.pattern.pattern_type), principal=b.entry.principal,
            host=b.entry.host, operation=code_of(b.entry.operation), permission_type=code_of(b.entry.permission))
            for b in removed])
        for removed in removed_per_filter])
