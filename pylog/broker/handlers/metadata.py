"""Metadata: v0-12.

Behavior: brokers, controller and partition states come from the metadata cache the controller
keeps current with UpdateMetadata. Leader epochs are reported (v7+) so clients can validate
their positions after a leader change. Unknown topics are created on request when
auto.create.topics.enable is set and the client allows it (v4+), answering LEADER_NOT_AVAILABLE
until the controller has elected leaders. A broker the controller has not yet told about the
cluster (just started, perhaps still waiting to register) knows no topic: it names only itself, and
requested topics get LEADER_NOT_AVAILABLE (auto-creation) or UNKNOWN_TOPIC_OR_PARTITION, never
part of a topic's partitions.
Version notes: v0 asks for all topics with an empty list, v1+ with null; v10+ carry topic ids, and a
topic asked for by id alone is answered with its name (UNKNOWN_TOPIC_ID for an id no topic has);
authorized operations are reported as "not requested" (bit 31, as Kafka).
"""

from __future__ import annotations

import uuid

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.common.internal_topics import is_internal
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed, authorized_operations

_ZERO_UUID = uuid.UUID(int=0)


@handler(ApiKey.Metadata, 0, 12)
async def handle_metadata(ctx: HandlerContext, req):
    """Describe brokers and the requested topics."""
    broker = ctx.broker
    cache = broker.metadata
    version = ctx.header.api_version
    cls = response_class(ApiKey.Metadata)[version]
    all_topics = req.topics is None or (version == 0 and not req.topics)
    unknown_ids: list[uuid.UUID] = []
    if all_topics:  # unauthorised topics are left out, as Kafka does
        names = [n for n in sorted(cache.topics) if allowed(ctx, "DESCRIBE", "TOPIC", n)]
    else:  # v10+ may name a topic by id alone (KIP-516; KIP-848 consumers learn their topics' ids first)
        by_id = {tid: n for n, tid in cache.topic_ids.items()} if version >= 10 else {}
        names = [t.name if t.name is not None else by_id.get(t.topic_id) for t in req.topics]
        unknown_ids = [t.topic_id for t, n in zip(req.topics, names) if n is None and version >= 10
                       and t.topic_id is not None and t.topic_id.int != 0]
        names = [n for n in names if n is not None]
    auto_create = version < 4 or req.allow_auto_topic_creation
    want_topic_ops = version >= 8 and req.include_topic_authorized_operations
    topics = []
    for name in names:
        parts = cache.topics.get(name)
        if not all_topics and not allowed(ctx, "DESCRIBE", "TOPIC", name):
            topics.append(cls.MetadataResponseTopic(
                error_code=int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), name=name, topic_id=_ZERO_UUID,
                is_internal=False, partitions=[], authorized_operations=None))
            continue
        if parts is None and auto_create and not (allowed(ctx, "CREATE", "CLUSTER")
                                                  or allowed(ctx, "CREATE", "TOPIC", name)):
            topics.append(cls.MetadataResponseTopic(
                error_code=int(ErrorCode.TOPIC_AUTHORIZATION_FAILED), name=name, topic_id=_ZERO_UUID,
                is_internal=False, partitions=[], authorized_operations=None))
            continue
        if parts is None:
            err = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            if auto_create and broker.config.get("auto.create.topics.enable"):
                err = await broker.topic_admin.auto_create(name)
            topics.append(cls.MetadataResponseTopic(
                error_code=int(err), name=name, topic_id=_ZERO_UUID, is_internal=False, partitions=[],
                authorized_operations=None))
            continue
        plist = []
        for idx in sorted(parts):
            pi = parts[idx]
            alive = pi.leader >= 0 and cache.alive(pi.leader)
            plist.append(cls.MetadataResponseTopic.MetadataResponsePartition(
                error_code=0 if alive else int(ErrorCode.LEADER_NOT_AVAILABLE),
                partition_index=idx, leader_id=pi.leader if alive else -1, leader_epoch=pi.leader_epoch,
                replica_nodes=pi.replicas, isr_nodes=pi.isr,
                offline_replicas=[r for r in pi.replicas if not cache.alive(r) or r in pi.offline_replicas]))
        topics.append(cls.MetadataResponseTopic(
            error_code=0, name=name, topic_id=cache.topic_ids.get(name, _ZERO_UUID),
            is_internal=is_internal(name), partitions=plist,
            authorized_operations=authorized_operations(ctx, "TOPIC", name) if want_topic_ops else None))
    if not all_topics:
        topics.extend(cls.MetadataResponseTopic(error_code=int(ErrorCode.UNKNOWN_TOPIC_ID), name=None, topic_id=tid,
                                                is_internal=False, partitions=[], authorized_operations=None)
                      for tid in unknown_ids)
    listener = None if ctx.security is None else ctx.security.listener_name
    brokers = [cls.MetadataResponseBroker(node_id=b.id, host=b.host, port=b.port, rack=b.rack)
               for b in cache.brokers_on(listener)]
    if not brokers:
        # Before the controller's first UpdateMetadata, at least name ourselves so clients can retry here.
        host, port = broker.advertised_for(listener)
        brokers = [cls.MetadataResponseBroker(node_id=broker.broker_id, host=host, port=port, rack=broker.rack)]
    return cls(throttle_time_ms=0, brokers=brokers, cluster_id=broker.cluster_id,
               controller_id=cache.controller_id, topics=topics,
               authorized_operations=authorized_operations(ctx, "CLUSTER")
               if 8 <= version <= 10 and req.include_cluster_authorized_operations else None)
