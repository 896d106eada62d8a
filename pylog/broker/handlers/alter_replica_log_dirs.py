"""AlterReplicaLogDirs: v1-2 (KIP-113; v2 is flexible; v0, the same request, left Kafka in 4.0).

Behavior: for each (dir, partition) the broker moves its replica of the partition to that log
dir: a `-future` copy is made there and swapped in once complete (see log_dir_mover), while the
replica keeps serving. A dir not in log.dirs is LOG_DIR_NOT_FOUND; a partition this broker does not
host yet is REPLICA_NOT_AVAILABLE, and the dir is remembered for when it is created (Kafka's
behavior, which lets the reassignment tool place new replicas). Asking for the dir the replica is
already in cancels a move in progress. DescribeLogDirs shows the copy as a future replica.
With an authorizer the principal needs ALTER on the cluster; otherwise every partition is
CLUSTER_AUTHORIZATION_FAILED and nothing moves (Kafka's KafkaApis.handleAlterReplicaLogDirsRequest).
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.AlterReplicaLogDirs, 1, 2)
async def handle_alter_replica_log_dirs(ctx: HandlerContext, req):
    """Move this broker's replicas between its log dirs."""
    cls = response_class(ApiKey.AlterReplicaLogDirs)[ctx.header.api_version]
    topic_cls = cls.AlterReplicaLogDirTopicResult
    results: dict[str, list] = {}
    may_alter = allowed(ctx, "ALTER", "CLUSTER")
    for d in req.dirs:
        for t in d.topics:
            for partition in t.partitions:
                err = ctx.broker.replicas.log_dir_mover.request(t.name, partition, d.path) if may_alter else \
                    ErrorCode.CLUSTER_AUTHORIZATION_FAILED
                results.setdefault(t.name, []).append(topic_cls.AlterReplicaLogDirPartitionResult(
                    partition_index=partition, error_code=int(err)))
    return cls(throttle_time_ms=0, results=[topic_cls(topic_name=t, partitions=ps) for t, ps in results.items()])
