"""InitProducerId: v0-4 (flexible from v2).

Behavior: a producer without a transactional id (the idempotent producer) gets a fresh producer id
with epoch 0, as Kafka's coordinator answers it: no log write, and a re-initialising producer
(v3+, KIP-360, sending its current id and epoch) simply gets a new id. Ids come from blocks
reserved in ZooKeeper (pylog/broker/producer_ids.py). A producer id without an epoch, or an epoch
without an id, is INVALID_REQUEST; an empty transactional id too.
Transactions are not served yet: a non-empty transactional id gets COORDINATOR_NOT_AVAILABLE, as
does any producer while no id block can be reserved (ZooKeeper unreachable).
Version notes: v3 adds ProducerId/ProducerEpoch; v4 only allows PRODUCER_FENCED in answers to
transactional producers. librdkafka sends 0-4, kafka-python up to 4, aiokafka v0.
"""

from __future__ import annotations

import logging

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.producer_ids")

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1


@handler(ApiKey.InitProducerId, 0, 4)
async def handle_init_producer_id(ctx: HandlerContext, req):
    """Hand an idempotent producer its id."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.InitProducerId)[version]
    pid, epoch = (req.producer_id, req.producer_epoch) if version >= 3 else (NO_PRODUCER_ID, NO_PRODUCER_EPOCH)
    err = ErrorCode.NONE
    if (pid == NO_PRODUCER_ID) != (epoch == NO_PRODUCER_EPOCH) or req.transactional_id == "":
        err = ErrorCode.INVALID_REQUEST
    elif req.transactional_id is not None:
        err = ErrorCode.COORDINATOR_NOT_AVAILABLE
    if err != ErrorCode.NONE:
        return cls(throttle_time_ms=0, error_code=int(err), producer_id=NO_PRODUCER_ID,
                   producer_epoch=NO_PRODUCER_EPOCH)
    try:
        new_pid = await ctx.broker.producer_ids.generate()
    except Exception as exc:  # ZooKeeper unreachable or the block malformed: retriable for the client
        log.warning("Could not reserve a producer id block: %s", exc)
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.COORDINATOR_NOT_AVAILABLE),
                   producer_id=NO_PRODUCER_ID, producer_epoch=NO_PRODUCER_EPOCH)
    return cls(throttle_time_ms=0, error_code=0, producer_id=new_pid, producer_epoch=0)
