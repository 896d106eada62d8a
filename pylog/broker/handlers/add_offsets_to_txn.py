"""AddOffsetsToTxn: v0-4 (Kafka 3.9's range; flexible from v3).

Behavior: the consumer group's `__consumer_offsets` partition joins the producer's transaction, so
the offsets it then commits with TxnOffsetCommit become visible with the transaction's COMMIT
marker (and vanish with an ABORT). Errors as AddPartitionsToTxn's. As in Kafka's KafkaApis, WRITE
on the transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and READ on the group
(GROUP_AUTHORIZATION_FAILED) are needed.
Version notes: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2; v4 (KIP-890) may answer
TRANSACTION_ABORTABLE, which older versions get as INVALID_TXN_STATE.
"""

from __future__ import annotations

from pylog.broker.group_host import OFFSETS_TOPIC
from pylog.broker.handlers import handler, txn_coordinator_of
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import older_as
from pylog.coordinator.ownership import partition_for
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.AddOffsetsToTxn, 0, 4)
async def handle_add_offsets_to_txn(ctx: HandlerContext, req):
    """Add the group's offsets partition to the transaction."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.AddOffsetsToTxn)[version]
    if not allowed(ctx, "WRITE", "TRANSACTIONAL_ID", req.transactional_id):
        err = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    elif not allowed(ctx, "READ", "GROUP", req.group_id):
        err = ErrorCode.GROUP_AUTHORIZATION_FAILED
    else:
        groups = ctx.broker.groups
        count = groups.num_partitions() if groups is not None else int(ctx.broker.config.get("offsets.topic.num.partitions"))
        offsets_partition = partition_for(req.group_id, count)
        err = await txn_coordinator_of(ctx).add_partitions(
            req.transactional_id, req.producer_id, req.producer_epoch, frozenset({(OFFSETS_TOPIC, offsets_partition)}))
    return cls(throttle_time_ms=0, error_code=int(older_as(err, version, 2, 4)))
