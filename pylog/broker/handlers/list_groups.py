"""ListGroups: v0-5 (Kafka 3.9's range).

Behavior: the groups this broker coordinates (clients ask every broker), optionally filtered by
state (v4+, case-insensitive) and type (v5+: "classic", or "consumer" for KIP-848 groups, whose protocol
type is "consumer" and whose states are Kafka's consumer-group ones: Empty, Assigning, Reconciling, Stable).
COORDINATOR_LOAD_IN_PROGRESS while an offsets partition is still loading. DESCRIBE on the cluster lists
every group; without it, only those the principal may DESCRIBE (as Kafka).
Version notes: v3+ flexible; v4 adds the state, v5 the type.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.group.state import parse_state
from pylog.protocol.api import ApiKey, response_class
from pylog.security.authorizer import allowed


@handler(ApiKey.ListGroups, 0, 5)
async def handle_list_groups(ctx: HandlerContext, req):
    """List groups."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.ListGroups)[version]
    names = [n or "" for n in req.states_filter or []] if version >= 4 else []
    states = {s for s in map(parse_state, names) if s is not None} if names else None
    types = {(t or "").lower() for t in (req.types_filter or [])} if version >= 5 else set()
    coord = coordinator_of(ctx)
    err, classic = coord.list_groups(states)
    if names and not states or types and "classic" not in types:
        classic = []
    wanted = {n.lower() for n in names}
    consumer = [(g, "consumer", s) for g, s in coord.list_consumer_groups()
                if (not wanted or s.lower() in wanted) and (not types or "consumer" in types)]
    groups = [(g, t, s, "classic") for g, t, s in classic] + [(g, t, s, "consumer") for g, t, s in consumer]
    if not allowed(ctx, "DESCRIBE", "CLUSTER"):  # Kafka: without it, only the groups the principal may describe
        groups = [g for g in groups if allowed(ctx, "DESCRIBE", "GROUP", g[0])]
    return cls(throttle_time_ms=0, error_code=int(err), groups=[
        cls.ListedGroup(group_id=g, protocol_type=t, group_state=s, group_type=k) for g, t, s, k in sorted(groups)])
