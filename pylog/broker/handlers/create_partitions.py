"""CreatePartitions: v0-3.

Behavior: grows topics; new replicas are placed like Kafka's AdminZkClient (deterministically,
starting after partition 0's leader) unless assignments are given; a decrease or no-op is
refused with INVALID_PARTITIONS and Kafka's message. Waits up to timeout_ms for new leaders.
"""

from __future__ import annotations

import asyncio

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.broker.topic_admin import TopicResult
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.CreatePartitions, 0, 3)
async def handle_create_partitions(ctx: HandlerContext, req):
    """Add partitions through ZooKeeper."""
    admin = ctx.broker.topic_admin
    cls = response_class(ApiKey.CreatePartitions)[ctx.header.api_version]
    async def one(t):
        if not allowed(ctx, "ALTER", "TOPIC", t.name):
            return TopicResult(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, None)
        return await admin.create_partitions(t.name, t.count, [list(a.broker_ids) for a in t.assignments]
                                             if t.assignments is not None else None, req.validate_only,
                                             req.timeout_ms)

    results = await asyncio.gather(*(one(t) for t in req.topics))
    return cls(throttle_time_ms=0, results=[
        cls.CreatePartitionsTopicResult(name=r.name, error_code=int(r.error), error_message=r.message)
        for r in results])
