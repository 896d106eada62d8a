"""DeleteTopics: v0-6.

Behavior: each topic is marked for deletion (/admin/delete_topics/<t>) and the response waits,
up to timeout_ms, until the controller has removed it; UNKNOWN_TOPIC_OR_PARTITION for unknown
topics, TOPIC_DELETION_DISABLED when delete.topic.enable is false. A topic's partitions count against
the client's controller_mutation_rate (KIP-599): strict from v5, permissive before.
Version notes: v6 names topics by name or id; deletion by id is resolved through the metadata cache.
"""

from __future__ import annotations

import asyncio

from pylog.broker.handlers import handler
from pylog.broker.quotas import mutation_allowed
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.DeleteTopics, 0, 6)
async def handle_delete_topics(ctx: HandlerContext, req):
    """Delete topics through ZooKeeper."""
    broker = ctx.broker
    version = ctx.header.api_version
    cls = response_class(ApiKey.DeleteTopics)[version]
    if version >= 6:
        by_id = {v: k for k, v in broker.metadata.topic_ids.items()}
        wanted = [(t.name if t.name is not None else by_id.get(t.topic_id), t.topic_id) for t in req.topics]
    else:
        wanted = [(n, None) for n in req.topic_names]

    async def one(name, topic_id):
        if name is None:
            return name, topic_id, ErrorCode.UNKNOWN_TOPIC_ID, None
        if not allowed(ctx, "DELETE", "TOPIC", name):
            return name, topic_id, ErrorCode.TOPIC_AUTHORIZATION_FAILED, None  # Kafka sets no message here
        partitions = len(broker.metadata.topics.get(name, {}))
        if partitions and not mutation_allowed(ctx, partitions, strict=version >= 5):  # KIP-599
            return name, topic_id, ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.THROTTLING_QUOTA_EXCEEDED.message
        r = await broker.topic_admin.delete_topic(name, req.timeout_ms)
        return name, broker.metadata.topic_ids.get(name, topic_id), r.error, r.message

    results = await asyncio.gather(*(one(n, i) for n, i in wanted))
    return cls(throttle_time_ms=ctx.throttle_ms, responses=[
        cls.DeletableTopicResult(name=n, topic_id=i, error_code=int(e), error_message=m)
        for n, i, e, m in results])
