"""ControlledShutdown: v3 (broker -> controller).

Behavior: only the active controller answers (NOT_CONTROLLER elsewhere): it moves leadership off
the broker and returns the partitions it still leads; the broker retries until none remain.
A stale broker epoch is refused with STALE_BROKER_EPOCH.
"""

from __future__ import annotations

from pylog.broker.handlers import active_controller, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode


@handler(ApiKey.ControlledShutdown, 3, 3)
async def handle_controlled_shutdown(ctx: HandlerContext, req):
    """Ask the local controller (if active) to move leaders away from the broker."""
    cls = response_class(ApiKey.ControlledShutdown)[ctx.header.api_version]
    controller = active_controller(ctx)
    if controller is None:
        return cls(error_code=int(ErrorCode.NOT_CONTROLLER), remaining_partitions=[])
    err, remaining = await controller.controlled_shutdown(req.broker_id, req.broker_epoch)
    return cls(error_code=int(err), remaining_partitions=[
        cls.RemainingPartition(topic_name=t, partition_index=p) for t, p in remaining])
