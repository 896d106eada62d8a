"""DeleteGroups: v0-2.

Behavior: an Empty group's offsets and metadata are removed (tombstones in `__consumer_offsets`);
a group with members gets NON_EMPTY_GROUP, an unknown one GROUP_ID_NOT_FOUND.
Version notes: v2 is flexible.
"""

from __future__ import annotations

from pylog.broker.group_host import coordinator_of
from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class


@handler(ApiKey.DeleteGroups, 0, 2)
async def handle_delete_groups(ctx: HandlerContext, req):
    """Delete groups."""
    cls = response_class(ApiKey.DeleteGroups)[ctx.header.api_version]
    coord = coordinator_of(ctx)
    results = []
    for gid in dict.fromkeys(g or "" for g in req.groups_names or []):
        results.append(cls.DeletableGroupResult(group_id=gid, error_code=int(await coord.delete_group(gid))))
    return cls(throttle_time_ms=0, results=results)
