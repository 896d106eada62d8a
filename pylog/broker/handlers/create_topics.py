"""CreateTopics: v0-7.

Behavior: each topic is validated (name, partitions/replication factor or a manual assignment,
configs), placed with Kafka's algorithm over the live brokers, written to ZooKeeper and waited
for until its leaders are elected (up to timeout_ms); errors are per topic. -1 partitions or
replication factor (v4+) take the broker defaults.
A client with a controller_mutation_rate quota (KIP-599) spends a token per partition created: from v6
a topic is refused with THROTTLING_QUOTA_EXCEEDED while its bucket is in debt (strict), before v6 it is
created and the response carries the throttle time (permissive).
Version notes: v1 adds validate_only, v5+ return the resulting partition count, replication
factor and configs, v7 the topic id.
"""

from __future__ import annotations

import asyncio
import base64
import uuid

from pylog.broker.handlers import handler
from pylog.broker.quotas import mutation_allowed
from pylog.broker.services import HandlerContext
from pylog.broker.topic_admin import TopicResult
from pylog.common.config import describe_topic_config
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

_ZERO = uuid.UUID(int=0)


@handler(ApiKey.CreateTopics, 0, 7)
async def handle_create_topics(ctx: HandlerContext, req):
    """Create topics through ZooKeeper, like a ZK-mode Kafka broker."""
    admin = ctx.broker.topic_admin
    version = ctx.header.api_version
    cls = response_class(ApiKey.CreateTopics)[version]
    seen: dict[str, int] = {}
    for t in req.topics:
        seen[t.name] = seen.get(t.name, 0) + 1

    may_create_any = allowed(ctx, "CREATE", "CLUSTER")

    async def one(t):
        if not may_create_any and not allowed(ctx, "CREATE", "TOPIC", t.name):
            return TopicResult(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Authorization failed.")
        if seen[t.name] > 1:
            return TopicResult(t.name, ErrorCode.INVALID_REQUEST, "Create topics request from client contains a "
                               f"duplicate topic with the name: {t.name}")
        manual = {a.partition_index: list(a.broker_ids) for a in t.assignments} or None
        if manual and (t.num_partitions != -1 or t.replication_factor != -1):
            return TopicResult(t.name, ErrorCode.INVALID_REQUEST,
                               "Both numPartitions or replicationFactor and replicasAssignments were set. "
                               "Both cannot be used at the same time.")
        configs = {c.name: c.value for c in t.configs if c.value is not None}
        validate_only = bool(getattr(req, "validate_only", False))
        partitions = len(manual) if manual else t.num_partitions if t.num_partitions > 0 else \
            int(ctx.broker.config.get("num.partitions"))
        if not validate_only and not mutation_allowed(ctx, partitions, strict=version >= 6):
            return TopicResult(t.name, ErrorCode.THROTTLING_QUOTA_EXCEEDED, ErrorCode.THROTTLING_QUOTA_EXCEEDED.message)
        return await admin.create_topic(t.name, t.num_partitions, t.replication_factor, manual, configs,
                                        bool(getattr(req, "validate_only", False)), req.timeout_ms)

    results = await asyncio.gather(*(one(t) for t in req.topics))
    out = []
    base = ctx.broker.topic_configs.broker_config()
    for t, r in zip(req.topics, results):
        configs = None
        if version >= 5 and r.error == ErrorCode.NONE:
            overrides = {c.name: c.value for c in t.configs if c.value is not None}
            configs = [cls.CreatableTopicResult.CreatableTopicConfigs(
                name=e.name, value=e.value, read_only=e.read_only, config_source=int(e.source),
                is_sensitive=e.is_sensitive) for e in describe_topic_config(overrides, base)]
        out.append(cls.CreatableTopicResult(
            name=r.name, topic_id=uuid.UUID(bytes=_b64(r.topic_id)) if r.topic_id else _ZERO,
            error_code=int(r.error), error_message=r.message, topic_config_error_code=0,
            num_partitions=r.num_partitions if r.error == ErrorCode.NONE else -1,
            replication_factor=r.replication_factor if r.error == ErrorCode.NONE else -1, configs=configs))
    return cls(throttle_time_ms=ctx.throttle_ms, topics=out)


def _b64(topic_id: str) -> bytes:
    return base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4))
