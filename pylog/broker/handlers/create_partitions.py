"""CreatePartitions: v0-3.

Behavior: grows topics; new replicas are placed like Kafka's AdminZkClient (deterministically,
starting after partition 0's leader) unless assignments are given; a decrease or no-op is
refused with INVALID_PARTITIONS and Kafka's message. Waits up to timeout_ms for new leaders.
The partitions added count against the client's controller_mutation_rate (KIP-599): strict from v3
(THROTTLING_QUOTA_EXCEEDED while in debt), permissive before (only the throttle time).
"""

from __future__ import annotations

import asyncio

from pylog.broker.handlers import handler
from pylog.broker.quotas import mutation_allowed
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.broker.topic_admin import TopicResult
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.CreatePartitions, 0, 3)
async def handle_create_partitions(ctx: HandlerContext, req):
    """Add partitions through ZooKeeper."""
    admin = ctx.broker.topic_admin
    version = ctx.header.api_version
    cls = response_class(ApiKey.CreatePartitions)[version]
    async def one(t):
        if not allowed(ctx, "ALTER", "TOPIC", t.name):
            return TopicResult(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
        added = t.count - len(ctx.broker.metadata.topics.get(t.name, {}))
        if not req.validate_only and added > 0 and not mutation_allowed(ctx, added, strict=version >= 3):
            return TopicResult(t.name, ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.THROTTLING_QUOTA_EXCEEDED.message)
        return await admin.create_partitions(t.name, t.count, [list(a.broker_ids) for a in t.assignments]
                                             if t.assignments is not None else None, req.validate_only,
                                             req.timeout_ms)

    results = await asyncio.gather(*(one(t) for t in req.topics))
    return cls(throttle_time_ms=ctx.throttle_ms, results=[
        cls.CreatePartitionsTopicResult(name=r.name, error_code=int(r.error), error_message=r.message)
        for r in results])
