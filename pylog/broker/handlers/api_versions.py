"""ApiVersions: v0-4.

Behavior: lists every registered handler's range (generated from the registry) at the finalized
feature levels (transaction.version 2 adds Produce 12 and EndTxn 5). The response
header is always v0 (the server encodes it so); an unknown ApiVersions version never reaches this
module -- the server answers it with UNSUPPORTED_VERSION encoded as v0.
From v3 it also lists the supported features (pylog.broker.features.SUPPORTED) and the finalized ones
from /feature with their epoch (KIP-584).
KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe are listed only when
group.coordinator.rebalance.protocols includes consumer (Kafka's rule).
Version notes: v3 is flexible and carries the client software name/version, which we ignore; v4
(KAFKA-17011) allows a supported feature's min version to be 0: below v4 such a feature is left out.
"""

from pylog.broker.features import SUPPORTED
from pylog.broker.handlers import advertised_ranges, handler
from pylog.broker.handlers.consumer_group_heartbeat import consumer_protocol_enabled
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class


@handler(ApiKey.ApiVersions, 0, 4)
async def handle_api_versions(ctx: HandlerContext, req):
    """Answer with the registry's ranges."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.ApiVersions)[version]
    hidden = set() if consumer_protocol_enabled(ctx) else {ApiKey.ConsumerGroupHeartbeat, ApiKey.ConsumerGroupDescribe}
    resp = cls(error_code=0, throttle_time_ms=0, api_keys=[
        cls.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in advertised_ranges(ctx.broker.features.levels)
        if k not in hidden])
    if version >= 3:
        features = ctx.broker.features
        resp.supported_features = [cls.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                                   for n, (lo, hi) in sorted(SUPPORTED.items()) if lo > 0 or version >= 4]
        resp.finalized_features_epoch = features.epoch
        resp.finalized_features = [cls.FinalizedFeatureKey(name=n, max_version_level=lv, min_version_level=lv)
                                   for n, lv in sorted(features.levels.items())]
    return resp
