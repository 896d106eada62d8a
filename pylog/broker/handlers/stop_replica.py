"""StopReplica: v3 (controller -> broker).

Behavior: stop replicating (and, with delete_partition, delete the log of) each listed partition,
unless the request's leader epoch is older than ours (FENCED_LEADER_EPOCH); epoch -2 marks a
topic deletion and always applies. Refused with STALE_BROKER_EPOCH when addressed to an earlier
registration of this broker.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.StopReplica, 3, 3)
async def handle_stop_replica(ctx: HandlerContext, req):
    """Stop and possibly delete replicas."""
    cls = response_class(ApiKey.StopReplica)[ctx.header.api_version]
    if await ctx.broker.is_broker_epoch_stale(req.broker_epoch):
        return cls(error_code=int(ErrorCode.STALE_BROKER_EPOCH), partition_errors=[])
    err, results = await ctx.broker.replicas.stop_replicas(req)
    return cls(error_code=int(err), partition_errors=[
        cls.StopReplicaPartitionError(topic_name=t, partition_index=i, error_code=e) for t, i, e in results])
