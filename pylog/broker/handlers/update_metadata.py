"""UpdateMetadata: v7 (controller -> broker).

Behavior: replaces the live broker list and updates the listed partition states in the metadata
cache; partitions marked with leader -2 belong to deleted topics and are dropped, and every group
this broker coordinates loses its committed offsets for them (tombstones in `__consumer_offsets`). Refused with
STALE_CONTROLLER_EPOCH from an older controller, STALE_BROKER_EPOCH when addressed to an earlier
registration of this broker.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.UpdateMetadata, 7, 7)
async def handle_update_metadata(ctx: HandlerContext, req):
    """Refresh the metadata cache."""
    cls = response_class(ApiKey.UpdateMetadata)[ctx.header.api_version]
    broker = ctx.broker
    if await broker.is_broker_epoch_stale(req.broker_epoch):
        return cls(error_code=int(ErrorCode.STALE_BROKER_EPOCH))
    if req.controller_epoch < broker.replicas.controller_epoch:
        return cls(error_code=int(ErrorCode.STALE_CONTROLLER_EPOCH))
    broker.replicas.controller_epoch = req.controller_epoch
    deleted = broker.metadata.update(req)
    broker.on_metadata_updated()
    if deleted and broker.groups is not None:
        broker.groups.topics_deleted(deleted)
    return cls(error_code=0)
