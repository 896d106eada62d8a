"""ListPartitionReassignments: v0 (KIP-455; flexible).

Behavior: handled by the controller (top-level NOT_CONTROLLER elsewhere). Lists the partitions
with a reassignment in flight, all of them (topics=null) or among those asked for, with the full
replica set and the replicas being added and removed; partitions not being reassigned (or
unknown) are simply left out, as in Kafka.
"""

from __future__ import annotations

from pylog.broker.handlers import active_controller, handler
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.ListPartitionReassignments, 0, 0)
async def handle_list_partition_reassignments(ctx: HandlerContext, req):
    """Report in-flight reassignments from the controller's context."""
    cls = response_class(ApiKey.ListPartitionReassignments)[ctx.header.api_version]
    if not allowed(ctx, "DESCRIBE", "CLUSTER"):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                   error_message=ErrorCode.CLUSTER_AUTHORIZATION_FAILED.message, topics=[])
    controller = active_controller(ctx)
    wanted = None if req.topics is None else [(t.name, p) for t in req.topics for p in t.partition_indexes]
    found = None if controller is None else await controller.list_reassignments(wanted)
    if found is None:
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.NOT_CONTROLLER),
                   error_message=ErrorCode.NOT_CONTROLLER.message, topics=[])
    by_topic: dict[str, list] = {}
    for (topic, p), a in found.items():
        by_topic.setdefault(topic, []).append(cls.OngoingTopicReassignment.OngoingPartitionReassignment(
            partition_index=p, replicas=list(a.replicas), adding_replicas=list(a.adding),
            removing_replicas=list(a.removing)))
    return cls(throttle_time_ms=0, error_code=0, error_message=None, topics=[
        cls.OngoingTopicReassignment(name=t, partitions=ps) for t, ps in by_topic.items()])
