"""Fetch: v4-17.

Behavior: read_uncommitted consumers read up to the high watermark, read_committed ones
(isolation_level 1) up to the last stable offset, with the aborted transactions overlapping what
they read (from the same log, over the same range) so they drop aborted batches; read_uncommitted
gets a null list, as Kafka sends. Followers (replica_id >= 0) read up to the log end offset; a
follower's fetch offset is its log end offset, which advances the leader's high watermark and
may bring it back into the ISR. The request long-polls until min_bytes are available or
max_wait_ms passed. Record bytes are never decoded: the response carries file slices that the
server sends from the segment files, or, for a partition's read of up to INLINE_BYTES, the bytes.
Version notes: v7+ fetch sessions are answered with session id 0 (sessions unsupported, every
fetch is a full fetch); v9+ carries current_leader_epoch, checked for fencing; from v11 (KIP-392)
Kafka gives every consumer fetch client metadata, which lets a follower serve it up to the follower's
own high watermark (how kafka-replica-verification.sh reads each replica, as the debug consumer -2);
rack_id itself is ignored (no replica selector, so no preferred read replica is ever named); v12+
(flexible) carries the last fetched epoch: when the log diverges from it (that epoch ended before the fetch offset, or a smaller epoch ended where it did) the
partition answers DivergingEpoch (the epoch and end offset to truncate to, KIP-320) instead of
records, as Kafka's Partition.fetchRecords; v12+ answers NOT_LEADER_OR_FOLLOWER and
FENCED_LEADER_EPOCH with CurrentLeader, and v16+ with the leaders' NodeEndpoints (KIP-951); v13+ names
topics by id (KIP-516): an id the metadata does not know is UNKNOWN_TOPIC_ID, one that is not the id of
the log here INCONSISTENT_TOPIC_ID; v14 adds only the tiered-storage error, never sent without remote
storage; v15 moves the replica id into ReplicaState (KIP-903); v17's ReplicaDirectoryId is ignored.
Our own followers fetch at v11.
"""

from __future__ import annotations

import time
import uuid

from pylog.broker.handlers import handler
from pylog.broker.partition import wait_for_change
from pylog.broker.quotas import FETCH as FETCH_QUOTA, principal_user, record_request
from pylog.broker.services import HandlerContext
from pylog.common.clock import now_ms
from pylog.metrics.recorders import BROKER as BROKER_METRICS
from pylog.protocol import replica_fetch
from pylog.protocol.api import ApiKey
from pylog.protocol.codec import MalformedRequest, decode_request_body
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed
from pylog.protocol.fetch import (FLEXIBLE_FROM, READ_COMMITTED, TOPIC_IDS_FROM, FetchPartitionData,
                                  encode_fetch_response)

# A partition's records up to this size are read into the response (they leave with its other
# bytes in one write) instead of going as a file slice: each slice costs the server an open of
# the segment and a loop.sendfile (several event-loop turns), ~50 us of broker CPU, which a Fetch
# of many partitions holding a few KB each paid per partition (BENCHMARKS.md, record size:
# partition cost). Big reads keep sendfile.
INLINE_BYTES = 64 * 1024


def _resolve_topics(ctx, req, version: int) -> list[tuple[str | None, uuid.UUID | None, object]]:
    """(name, id, requested topic) per requested topic; from v13 the name comes from the id (None: unknown)."""
    if version < TOPIC_IDS_FROM:
        return [(ft.topic, None, ft) for ft in req.topics]
    names = {tid: name for name, tid in ctx.broker.metadata.topic_ids.items()}
    return [(names.get(ft.topic_id), ft.topic_id, ft) for ft in req.topics]


def _early_error(p, topic_id: uuid.UUID | None, fp) -> ErrorCode | None:
    """INCONSISTENT_TOPIC_ID when the log here belongs to another topic of the same name (KIP-516), and the
    outcome of the KIP-320 check: OFFSET_OUT_OF_RANGE when the last fetched epoch's end is unknown, else
    None (the divergence itself is reported by _diverging)."""
    if topic_id is not None and p.topic_id is not None and p.topic_id.int != 0 and p.topic_id != topic_id:
        return ErrorCode.INCONSISTENT_TOPIC_ID
    last_epoch = getattr(fp, "last_fetched_epoch", -1)
    if last_epoch >= 0:
        epoch, end = p.log.epoch_cache.end_offset_for(last_epoch)
        if epoch < 0 or end < 0 or fp.fetch_offset < p.log.log_start_offset:
            return ErrorCode.OFFSET_OUT_OF_RANGE
    return None


def _diverging(p, fp) -> tuple[int, int] | None:
    """KIP-320: (epoch, end offset) when the fetcher's last fetched epoch diverges from this log, else None."""
    last_epoch = getattr(fp, "last_fetched_epoch", -1)
    if last_epoch < 0:
        return None
    epoch, end = p.log.epoch_cache.end_offset_for(last_epoch)
    return (epoch, end) if epoch < last_epoch or end < fp.fetch_offset else None


def _read_all(ctx, req, wanted: list, replica_id: int, first_pass: bool,
              denied: frozenset = frozenset()) -> tuple[list, int, list]:
    """One pass over the requested partitions: (topics for the response, bytes found, partitions)."""
    rm = ctx.broker.replicas
    follower = replica_id >= 0
    remaining = req.max_bytes if req.max_bytes > 0 else 0x7FFFFFFF
    total = 0
    topics = []
    touched = []
    t = now_ms()
    read_committed = not follower and req.isolation_level == READ_COMMITTED
    leader_only = follower or ctx.header.api_version < 11  # Kafka's FetchParams.fetchOnlyLeader
    for name, topic_id, ft in wanted:
        parts = []
        for fp in ft.partitions:
            data = FetchPartitionData(fp.partition)
            if name is None:
                data.error_code = int(ErrorCode.UNKNOWN_TOPIC_ID)
                parts.append(data)
                continue
            if name in denied:
                data.error_code = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                parts.append(data)
                continue
            p, err = rm.leader_partition(name, fp.partition, fp.current_leader_epoch, leader_only)
            if p is None:
                data.error_code = int(err)
                parts.append(data)
                continue
            early = _early_error(p, topic_id, fp)
            if early is not None:
                data.error_code = int(early)
                parts.append(data)
                continue
            touched.append(p)
            plog = p.log
            if follower:
                if first_pass:
                    rm.on_follower_fetch(p, replica_id, fp.fetch_offset, t, getattr(fp, "log_start_offset", -1))
                max_offset = plog.log_end_offset
            else:
                max_offset = plog.last_stable_offset if read_committed else p.high_watermark
            data.high_watermark = p.high_watermark
            data.last_stable_offset = plog.last_stable_offset
            data.log_start_offset = plog.log_start_offset
            if read_committed:
                data.aborted_transactions = []  # an empty list, not null, even when nothing is read (as Kafka)
            data.diverging_epoch = _diverging(p, fp)
            if data.diverging_epoch is not None:
                parts.append(data)  # no records: the fetcher truncates first
                continue
            if fp.fetch_offset < plog.log_start_offset or fp.fetch_offset > plog.log_end_offset:
                data.error_code = int(ErrorCode.OFFSET_OUT_OF_RANGE)
            elif fp.fetch_offset < max_offset and remaining > 0:
                limit = min(fp.partition_max_bytes, remaining)
                if follower:  # KIP-73: nothing for a throttled out-of-sync follower while the quota is used up
                    limit = rm.follower_read_limit(p, replica_id, limit)
                try:
                    slices = plog.read(fp.fetch_offset, limit, max_offset, min_one=total == 0,
                                       inline_bytes=INLINE_BYTES) if limit > 0 else []
                    if read_committed and slices:
                        data.aborted_transactions = [(t.producer_id, t.first_offset)
                                                     for t in plog.collect_aborted_txns(fp.fetch_offset, max_offset)]
                except OSError as exc:  # the log dir failed (KIP-112): it goes offline, the client looks elsewhere
                    ctx.broker.storage_failed(plog.dir, exc)
                    BROKER_METRICS.failed_fetch[ft.topic] += 1
                    data.error_code = int(ErrorCode.KAFKA_STORAGE_ERROR)
                    parts.append(data)
                    continue
                data.records = slices
                size = data.records_size
                remaining -= size
                total += size
                if size and not follower:
                    ctx.broker.stats.record_out(p, size)
            parts.append(data)
        topics.append((name or "", parts))
    return topics, total, touched


def _current_leaders(ctx, wanted: list, topics: list) -> list[tuple[int, str, int, str | None]]:
    """KIP-951: CurrentLeader on each NOT_LEADER_OR_FOLLOWER / FENCED_LEADER_EPOCH partition; the leaders' endpoints."""
    listener = None if ctx.security is None else ctx.security.listener_name
    nodes = {}
    for (name, _, _), (_, parts) in zip(wanted, topics):
        for d in parts:
            if d.error_code in _NOT_LEADER:
                leader, epoch, ep = ctx.broker.metadata.current_leader(name, d.partition, listener)
                d.current_leader = (leader, epoch)
                if ep is not None:
                    nodes[ep.id] = (ep.id, ep.host, ep.port, ep.rack)
    return [nodes[k] for k in sorted(nodes)]


_NOT_LEADER = (int(ErrorCode.NOT_LEADER_OR_FOLLOWER), int(ErrorCode.FENCED_LEADER_EPOCH))


def decode_fetch_request(header, frame):
    """v11 (our followers' version) by hand, the others with the schema codec."""
    if header.api_version != replica_fetch.VERSION:
        return decode_request_body(header, frame)
    try:
        return replica_fetch.decode_request(frame, header.size)
    except ValueError as exc:
        raise MalformedRequest(f"cannot decode Fetch v{header.api_version}: {exc}") from exc


@handler(ApiKey.Fetch, 4, 17, decode=decode_fetch_request)
async def handle_fetch(ctx: HandlerContext, req):
    """Serve records from the leader's log, long-polling for min_bytes."""
    version = ctx.header.api_version
    # KIP-903: from v15 a follower names itself in ReplicaState
    replica_id = req.replica_id if version < 15 or req.replica_state is None else req.replica_state.replica_id
    follower = replica_id >= 0
    deadline = time.monotonic() + max(req.max_wait_ms, 0) / 1000
    first = True
    wanted = _resolve_topics(ctx, req, version)
    # Followers need CLUSTER_ACTION on the cluster, consumers READ on each topic (Kafka's checks).
    follower_ok = not follower or allowed(ctx, "CLUSTER_ACTION", "CLUSTER")
    denied = frozenset(name for name, _, _ in wanted if name is not None and (
        not follower_ok or (not follower and not allowed(ctx, "READ", "TOPIC", name))))
    while True:
        topics, total, touched = _read_all(ctx, req, wanted, replica_id, first, denied)
        first = False
        has_error = any(d.error_code for _, ps in topics for d in ps)
        wait = deadline - time.monotonic()
        if total >= req.min_bytes or has_error or wait <= 0 or not touched:
            break
        await wait_for_change(touched, wait)
    if follower:
        ctx.broker.replicas.follower_fetch_served(topics)
    nodes = _current_leaders(ctx, wanted, topics) if version >= FLEXIBLE_FROM else []
    parts = encode_fetch_response(ctx.header, topics, session_id=0, node_endpoints=nodes,
                                  topic_ids=[tid for _, tid, _ in wanted] if version >= TOPIC_IDS_FROM else None)
    return parts if follower else _within_quota(ctx, parts)


def _within_quota(ctx: HandlerContext, parts: list) -> list:
    """A consumer over its consumer_byte_rate gets an empty response with the throttle time, the bytes it would
    have had taken back, and a muted connection (Kafka's throttled fetch, KIP-219)."""
    size = sum(len(p) if isinstance(p, bytes) else p.size for p in parts)
    principal = ctx.security and ctx.security.principal
    now = now_ms()
    throttle = record_request(ctx.broker.quotas, principal, ctx.header.client_id, FETCH_QUOTA, size, now)
    if throttle <= 0:
        return parts
    ctx.broker.quotas.unrecord(FETCH_QUOTA, principal_user(principal), ctx.header.client_id or "", size, now)
    ctx.throttle_ms = throttle
    return encode_fetch_response(ctx.header, [], throttle_time_ms=throttle, session_id=0)
