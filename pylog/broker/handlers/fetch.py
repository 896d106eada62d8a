"""Fetch: v4-11.

Behavior: read_uncommitted consumers read up to the high watermark, read_committed ones
(isolation_level 1) up to the last stable offset, with the aborted transactions overlapping what
they read (from the same log, over the same range) so they drop aborted batches; read_uncommitted
gets a null list, as Kafka sends. Followers (replica_id >= 0) read up to the log end offset; a
follower's fetch offset is its log end offset, which advances the leader's high watermark and
may bring it back into the ISR. The request long-polls until min_bytes are available or
max_wait_ms passed. Record bytes are never decoded: the response carries file slices that the
server sends from the segment files, or, for a partition's read of up to INLINE_BYTES, the bytes.
Version notes: v7+ fetch sessions are answered with session id 0 (sessions unsupported, every
fetch is a full fetch); v9+ carries current_leader_epoch, checked for fencing. From v11 (KIP-392)
Kafka gives every consumer fetch client metadata, which lets a follower serve it up to the follower's
own high watermark (how kafka-replica-verification.sh reads each replica, as the debug consumer -2);
rack_id itself is ignored (no replica selector, so no preferred read replica is ever named).
"""

from __future__ import annotations

import time

from pylog.broker.handlers import handler
from pylog.broker.partition import wait_for_change
from pylog.broker.services import HandlerContext
from pylog.common.clock import now_ms
from pylog.metrics.recorders import BROKER as BROKER_METRICS
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed
from pylog.protocol.fetch import READ_COMMITTED, FetchPartitionData, encode_fetch_response

# A partition's records up to this size are read into the response (they leave with its other
# bytes in one write) instead of going as a file slice: each slice costs the server an open of
# the segment and a loop.sendfile (several event-loop turns), ~50 us of broker CPU, which a Fetch
# of many partitions holding a few KB each paid per partition (BENCHMARKS.md, record size:
# partition cost). Big reads keep sendfile.
INLINE_BYTES = 64 * 1024


def _read_all(ctx, req, follower: bool, first_pass: bool, denied: frozenset = frozenset()) -> tuple[list, int, list]:
    """One pass over the requested partitions: (topics for the response, bytes found, partitions)."""
    rm = ctx.broker.replicas
    remaining = req.max_bytes if req.max_bytes > 0 else 0x7FFFFFFF
    total = 0
    topics = []
    touched = []
    t = now_ms()
    read_committed = not follower and req.isolation_level == READ_COMMITTED
    leader_only = follower or ctx.header.api_version < 11  # Kafka's FetchParams.fetchOnlyLeader
    for ft in req.topics:
        parts = []
        for fp in ft.partitions:
            data = FetchPartitionData(fp.partition)
            if ft.topic in denied:
                data.error_code = int(ErrorCode.TOPIC_AUTHORIZATION_FAILED)
                parts.append(data)
                continue
            p, err = rm.leader_partition(ft.topic, fp.partition, fp.current_leader_epoch, leader_only)
            if p is None:
                data.error_code = int(err)
                parts.append(data)
                continue
            touched.append(p)
            plog = p.log
            if follower:
                if first_pass:
                    rm.on_follower_fetch(p, req.replica_id, fp.fetch_offset, t, getattr(fp, "log_start_offset", -1))
                max_offset = plog.log_end_offset
            else:
                max_offset = plog.last_stable_offset if read_committed else p.high_watermark
            data.high_watermark = p.high_watermark
            data.last_stable_offset = plog.last_stable_offset
            data.log_start_offset = plog.log_start_offset
            if read_committed:
                data.aborted_transactions = []  # an empty list, not null, even when nothing is read (as Kafka)
            if fp.fetch_offset < plog.log_start_offset or fp.fetch_offset > plog.log_end_offset:
                data.error_code = int(ErrorCode.OFFSET_OUT_OF_RANGE)
            elif fp.fetch_offset < max_offset and remaining > 0:
                limit = min(fp.partition_max_bytes, remaining)
                if follower:  # KIP-73: nothing for a throttled out-of-sync follower while the quota is used up
                    limit = rm.follower_read_limit(p, req.replica_id, limit)
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
        topics.append((ft.topic, parts))
    return topics, total, touched


@handler(ApiKey.Fetch, 4, 11)
async def handle_fetch(ctx: HandlerContext, req):
    """Serve records from the leader's log, long-polling for min_bytes."""
    follower = req.replica_id >= 0
    deadline = time.monotonic() + max(req.max_wait_ms, 0) / 1000
    first = True
    # Followers need CLUSTER_ACTION on the cluster, consumers READ on each topic (Kafka's checks).
    follower_ok = not follower or allowed(ctx, "CLUSTER_ACTION", "CLUSTER")
    denied = frozenset(ft.topic for ft in req.topics
                       if not follower_ok or (not follower and not allowed(ctx, "READ", "TOPIC", ft.topic)))
    while True:
        topics, total, touched = _read_all(ctx, req, follower, first, denied)
        first = False
        has_error = any(d.error_code for _, ps in topics for d in ps)
        wait = deadline - time.monotonic()
        if total >= req.min_bytes or has_error or wait <= 0 or not touched:
            break
        await wait_for_change(touched, wait)
    if follower:
        ctx.broker.replicas.follower_fetch_served(topics)
    return encode_fetch_response(ctx.header, topics, session_id=0)
