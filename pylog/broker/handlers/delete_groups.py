"""DeleteGroups: v0-2.

Behavior: an Empty group's offsets and metadata are removed (tombstones in `__consumer_offsets`);
a group with members gets NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND, one without DELETE on it
GROUP_AUTHORIZATION_FAILED.
Version notes: v2 is flexible.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.DeleteGroups, 0, 2)
async def handle_delete_groups(ctx: HandlerContext, req):
    """Delete groups."""
    cls = response_class(ApiKey.DeleteGroups)[ctx.header.api_version]
    coord = coordinator_of(ctx)
    results = []
    for gid in dict.fromkeys(g or "" for g in req.groups_names or []):
        err = (await coord.delete_group(gid) if allowed(ctx, "DELETE", "GROUP", gid)
               else ErrorCode.GROUP_AUTHORIZATION_FAILED)
        results.append(cls.DeletableGroupResult(group_id=gid, error_code=int(err)))
    return cls(throttle_time_ms=0, results=results)
