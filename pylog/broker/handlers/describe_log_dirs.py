"""DescribeLogDirs: v1-4 (KIP-113; flexible from v2).

Behavior: every log dir of this broker with the partitions it holds (all, or those asked for),
each with its size on disk and its offset lag (high watermark minus log end offset, at least
0, as Kafka computes it). The reassignment tools read replica sizes here to show bytes copied.
A replica being moved to another log dir (AlterReplicaLogDirs) also shows its copy there, with
is_future_key set and the copy's lag behind the replica's log end offset. A failed (offline) log
dir is listed with KAFKA_STORAGE_ERROR and no partitions (KIP-112).
Version notes: v3 adds the top-level error code; v4 the volume's total and usable bytes.
"""

from __future__ import annotations

import shutil

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


def _volume(path: str) -> tuple[int, int]:
    try:
        usage = shutil.disk_usage(path)
    except OSError:
        return -1, -1
    return usage.total, usage.free


@handler(ApiKey.DescribeLogDirs, 1, 4)
async def handle_describe_log_dirs(ctx: HandlerContext, req):
    """Sizes and lags of this broker's replicas, per log dir."""
    cls = response_class(ApiKey.DescribeLogDirs)[ctx.header.api_version]
    logs = ctx.broker.logs
    if not allowed(ctx, "DESCRIBE", "CLUSTER"):  # Kafka: no log dirs (v3+: with the error code)
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED), results=[])
    wanted = None if req.topics is None else {(t.topic, p) for t in req.topics for p in t.partitions}
    by_dir: dict[str, dict[str, list]] = {d: {} for d in logs.log_dirs}
    futures = [(plog, True) for plog in logs.future_logs()]
    for plog, is_future in [(plog, False) for plog in logs.all_logs()] + futures:
        key = (plog.topic, plog.partition)
        if wanted is not None and key not in wanted:
            continue
        current = logs.get(*key) if is_future else None
        # Kafka's getLogEndOffsetLag: a copy lags its replica's log end, a replica its high watermark.
        lag = (current.log_end_offset - plog.log_end_offset if current is not None
               else max(0, plog.high_watermark - plog.log_end_offset))
        by_dir.setdefault(logs.log_dir_of(plog), {}).setdefault(plog.topic, []).append(
            cls.DescribeLogDirsResult.DescribeLogDirsTopic.DescribeLogDirsPartition(
                partition_index=plog.partition, partition_size=plog.size_bytes, offset_lag=lag,
                is_future_key=is_future))
    results = []
    for root, topics in sorted(by_dir.items()):
        if root in logs.offline_dirs:  # Kafka: the dir with KAFKA_STORAGE_ERROR, nothing else
            results.append(cls.DescribeLogDirsResult(error_code=int(ErrorCode.KAFKA_STORAGE_ERROR), log_dir=root,
                                                     total_bytes=-1, usable_bytes=-1, topics=[]))
            continue
        total, usable = _volume(root)
        results.append(cls.DescribeLogDirsResult(
            error_code=int(ErrorCode.NONE), log_dir=root, total_bytes=total, usable_bytes=usable,
            topics=[cls.DescribeLogDirsResult.DescribeLogDirsTopic(name=t, partitions=sorted(
                ps, key=lambda p: p.partition_index)) for t, ps in sorted(topics.items())]))
    return cls(throttle_time_ms=0, error_code=int(ErrorCode.NONE), results=results)
