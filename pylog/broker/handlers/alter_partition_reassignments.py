"""AlterPartitionReassignments: v0 (KIP-455; flexible).

Behavior: handled by the controller (any other broker answers the top-level NOT_CONTROLLER, and
clients retry at the controller). Each partition either starts moving to its replica list or,
with replicas=null, has its in-flight reassignment cancelled (back to the original replicas).
Per-partition errors, with Kafka's messages: INVALID_REPLICA_ASSIGNMENT (empty list, duplicate
or negative ids, new replicas on brokers that are not alive), NO_REASSIGNMENT_IN_PROGRESS
(cancelling nothing), UNKNOWN_TOPIC_OR_PARTITION. The response returns once every partition has
started; completion is observed with ListPartitionReassignments. A partition named twice takes
its last entry (Kafka builds a map).
"""

from __future__ import annotations

import logging

from pylog.broker.handlers import active_controller, handler
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.admin")


@handler(ApiKey.AlterPartitionReassignments, 0, 0)
async def handle_alter_partition_reassignments(ctx: HandlerContext, req):
    """Start or cancel reassignments on the controller."""
    cls = response_class(ApiKey.AlterPartitionReassignments)[ctx.header.api_version]
    requests = {}
    for t in req.topics:
        for p in t.partitions:
            requests[(t.name, p.partition_index)] = None if p.replicas is None else list(p.replicas)
    log.info("AlterPartitionReassignments v%d for %d partitions from %s", ctx.header.api_version, len(requests),
             ctx.header.client_id)
    if not allowed(ctx, "ALTER", "CLUSTER"):
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                   error_message=ErrorCode.CLUSTER_AUTHORIZATION_FAILED.message, responses=[])
    controller = active_controller(ctx)
    results = None if controller is None else await controller.alter_reassignments(requests)
    if results is None:
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.NOT_CONTROLLER),
                   error_message=ErrorCode.NOT_CONTROLLER.message, responses=[])
    by_topic: dict[str, list] = {}
    for (topic, p), (err, msg) in results.items():
        by_topic.setdefault(topic, []).append(cls.ReassignableTopicResponse.ReassignablePartitionResponse(
            partition_index=p, error_code=int(err), error_message=msg))
    return cls(throttle_time_ms=0, error_code=0, error_message=None, responses=[
        cls.ReassignableTopicResponse(name=t, partitions=ps) for t, ps in by_topic.items()])
