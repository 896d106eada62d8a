"""InitProducerId: v0-5 (Kafka 3.9's range; flexible from v2).

Behavior: a producer without a transactional id (the idempotent producer) gets a fresh producer id
with epoch 0, as Kafka's coordinator answers it: no log write, and a re-initialising producer
(v3+, KIP-360, sending its current id and epoch) simply gets a new id. Ids come from blocks
reserved in ZooKeeper (pylog/broker/producer_ids.py); while none can be reserved (ZooKeeper
unreachable) the answer is COORDINATOR_NOT_AVAILABLE. A transactional producer is served by the
transaction coordinator of its id (NOT_COORDINATOR elsewhere): its epoch is bumped, fencing older
producers of the id; an open transaction of the id is aborted first (CONCURRENT_TRANSACTIONS
until that is done, and the client retries). A producer id without an epoch, or an epoch without
an id, is INVALID_REQUEST; an empty transactional id too. ACLs as Kafka's KafkaApis: WRITE on the
transactional id (TRANSACTIONAL_ID_AUTHORIZATION_FAILED), or without one IDEMPOTENT_WRITE on the
cluster or WRITE on some topic (CLUSTER_AUTHORIZATION_FAILED).
Version notes: v3 adds ProducerId/ProducerEpoch; v4 may answer PRODUCER_FENCED, which older
versions get as INVALID_PRODUCER_EPOCH; v5 (KIP-890) may answer TRANSACTION_ABORTABLE, which older
versions get as INVALID_TXN_STATE. librdkafka sends 0-4, kafka-python up to 4, aiokafka v0.
"""

from __future__ import annotations

import logging

from pylog.broker.handlers import handler, txn_coordinator_of
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import older_as
from pylog.coordinator.transaction.coordinator import InitResult
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed, allowed_any

log = logging.getLogger("pylog.producer_ids")

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


@handler(ApiKey.InitProducerId, 0, 5)
async def handle_init_producer_id(ctx: HandlerContext, req):
    """Hand a producer its id and epoch."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.InitProducerId)[version]
    tid = req.transactional_id
    pid, epoch = (req.producer_id, req.producer_epoch) if version >= 3 else (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    if (pid == NO_PRODUCER_ID) != (epoch == NO_PRODUCER_EPOCH) or tid == "":
        result = InitResult(ErrorCode.INVALID_REQUEST)
    elif tid is not None:
        result = (await txn_coordinator_of(ctx).init_producer_id(tid, req.transaction_timeout_ms, pid, epoch)
                  if allowed(ctx, "WRITE", "TRANSACTIONAL_ID", tid)
                  else InitResult(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED))
    elif not (allowed(ctx, "IDEMPOTENT_WRITE", "CLUSTER") or allowed_any(ctx, "WRITE", "TOPIC")):
        result = InitResult(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    else:
        result = await _idempotent(ctx)
    return cls(throttle_time_ms=0, error_code=int(older_as(result.error, version, 4, 5)), producer_id=result.producer_id,
               producer_epoch=result.producer_epoch)


async def _idempotent(ctx: HandlerContext) -> InitResult:
    try:
        return InitResult(ErrorCode.NONE, await ctx.broker.producer_ids.generate(), 0)
    except Exception as exc:  # ZooKeeper unreachable or the block malformed: retriable for the client
        log.warning("Could not reserve a producer id block: %s", exc)
        return InitResult(ErrorCode.COORDINATOR_NOT_AVAILABLE)
