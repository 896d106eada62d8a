"""UpdateFeatures: v0-1 (KIP-584; flexible).

Behavior: the controller finalizes feature levels in /feature (pylog.broker.features.update): each
update is checked against what the brokers support and what is finalized (an upgrade must raise the
level, a downgrade needs allow_downgrade (v0) or a downgrade upgrade_type (v1); level 0 removes the
feature), with Kafka's INVALID_REQUEST messages; one invalid update fails the request with nothing
written. validate_only (v1) checks only. A broker that is not the active controller answers
NOT_CONTROLLER; ALTER on the cluster is needed (CLUSTER_AUTHORIZATION_FAILED).
Version notes: v1 replaces allow_downgrade with upgrade_type (1 upgrade, 2 safe, 3 unsafe downgrade).
"""

from __future__ import annotations

import asyncio

from pylog.broker.features import SAFE_DOWNGRADE, UPGRADE, update
from pylog.broker.handlers import active_controller, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.UpdateFeatures, 0, 1)
async def handle_update_features(ctx: HandlerContext, req):
    """Finalize feature levels."""
    cls = response_class(ApiKey.UpdateFeatures)[ctx.header.api_version]
    v1 = ctx.header.api_version >= 1
    updates = [(u.feature, u.max_version_level,
                u.upgrade_type if v1 else SAFE_DOWNGRADE if u.allow_downgrade else UPGRADE)
               for u in req.feature_updates]

    def answer(err: ErrorCode, message: str | None, results: dict) -> object:
        return cls(throttle_time_ms=0, error_code=int(err), error_message=message, results=[
            cls.UpdatableFeatureResult(feature=n, error_code=int(e), error_message=m) for n, (e, m) in results.items()])

    if not allowed(ctx, "ALTER", "CLUSTER"):
        err = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
        return answer(err, err.message, {n: (err, err.message) for n, _, _ in updates})
    if active_controller(ctx) is None:
        err = ErrorCode.NOT_CONTROLLER
        return answer(err, err.message, {n: (err, err.message) for n, _, _ in updates})
    if len({n for n, _, _ in updates}) != len(updates):
        err = ErrorCode.INVALID_REQUEST
        return answer(err, "The request contains multiple updates of the same feature.", {})
    results = await asyncio.get_running_loop().run_in_executor(
        None, update, ctx.broker.zk, updates, bool(v1 and req.validate_only))
    return answer(ErrorCode.NONE, None, results)
