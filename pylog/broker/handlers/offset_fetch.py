"""OffsetFetch: v1-9.

Behavior: a group's committed offsets for the asked partitions (offset -1 where none is
committed), or every committed offset when the topics are null (v2+). A coordinator error is
reported for the group alone, with no partitions (v2+, as Kafka: no client can take a partition's -1
for "nothing committed" while the coordinator loads or moves), or on every partition (v1).
Version notes: v5 adds the leader epoch; v6+ flexible; v7 require_stable: an asked partition with an
offset commit still pending (a transaction's not yet settled by its marker, or a plain one being
written) gets UNSTABLE_OFFSET_COMMIT, and the client retries (librdkafka asks for it when
isolation.level=read_committed, its default); unlike Kafka (offset -1) the partition keeps its last
committed offset, which librdkafka starts from when that answer lands after its assignment changed
(bug 7 in docs/reliability.md); v8+ batch groups (librdkafka sends one); v9's member
id/epoch are checked against a KIP-848 group's member (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH), ignored for
classic groups. v10 (topic ids) is not served.
Authorization (as Kafka): DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED), then DESCRIBE on each
asked topic (else TOPIC_AUTHORIZATION_FAILED on its partitions); a fetch of all offsets leaves such topics out.
"""

from __future__ import annotations

from pylog.broker.handlers import coordinator_of, handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.group.api import FetchResult
from pylog.coordinator.group.records import OffsetValue
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

_NONE = OffsetValue(-1, -1, "")


@handler(ApiKey.OffsetFetch, 1, 9)
async def handle_offset_fetch(ctx: HandlerContext, req):
    """Return committed offsets."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.OffsetFetch)[version]
    coord = coordinator_of(ctx)
    if version >= 8:
        groups = []
        for g in req.groups or []:
            member = (g.member_id, g.member_epoch) if version >= 9 and g.member_id is not None else None
            err, topics = _one(ctx, coord, g.group_id or "", g.topics,
                               cls.OffsetFetchResponseGroup.OffsetFetchResponseTopics, version, req.require_stable,
                               member)
            groups.append(cls.OffsetFetchResponseGroup(group_id=g.group_id, topics=topics, error_code=int(err)))
        return cls(throttle_time_ms=0, groups=groups)
    err, topics = _one(ctx, coord, req.group_id or "", req.topics, cls.OffsetFetchResponseTopic, version,
                       version >= 7 and req.require_stable)
    return cls(throttle_time_ms=0, topics=topics, error_code=int(err))


def _one(ctx: HandlerContext, coord, group_id: str, req_topics, topic_cls, version: int, require_stable: bool,
         member: tuple[str, int] | None = None):
    """(group error, response topics) for one group: DESCRIBE on the group, then on each topic, as Kafka checks."""
    asked = None if req_topics is None else [(t.name or "", p) for t in req_topics for p in t.partition_indexes or []]
    denied: set[str] = set()
    if not allowed(ctx, "DESCRIBE", "GROUP", group_id):
        res = FetchResult(ErrorCode.GROUP_AUTHORIZATION_FAILED, {})
    else:
        denied = {name for name in {tp[0] for tp in asked or []} if not allowed(ctx, "DESCRIBE", "TOPIC", name)}
        res = coord.fetch(group_id, None if asked is None else [tp for tp in asked if tp[0] not in denied],
                          require_stable, member)
        if asked is None:  # all offsets: topics the principal may not describe are left out
            res = FetchResult(res.error, {tp: v for tp, v in res.offsets.items()
                                          if allowed(ctx, "DESCRIBE", "TOPIC", tp[0])})
    part_cls = getattr(topic_cls, "OffsetFetchResponsePartitions", None) or topic_cls.OffsetFetchResponsePartition
    if version >= 2 and res.error != ErrorCode.NONE:
        return res.error, []
    per_partition_error = res.error if version < 2 else ErrorCode.NONE
    keys = asked if asked is not None else list(res.offsets)
    topics: dict[str, list] = {}
    for tp in dict.fromkeys(keys):
        v = res.offsets.get(tp, _NONE)
        err = ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp[0] in denied else (
            ErrorCode.UNSTABLE_OFFSET_COMMIT if tp in res.unstable else per_partition_error)
        topics.setdefault(tp[0], []).append(part_cls(
            partition_index=tp[1], committed_offset=v.offset, committed_leader_epoch=v.leader_epoch, metadata=v.metadata,
            error_code=int(err)))
    return res.error, [topic_cls(name=n, partitions=ps) for n, ps in topics.items()]
