"""ApiVersions: v0-4.

Behavior: lists every registered handler's range (generated from the registry). The response
header is always v0 (the server encodes it so); an unknown ApiVersions version never reaches this
module -- the server answers it with UNSUPPORTED_VERSION encoded as v0.
Version notes: v3 is flexible and carries the client software name/version, which we ignore; v4
(KAFKA-17011) only allows a supported feature's min version to be 0.
"""

from pylog.broker.handlers import advertised_ranges, handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class


@handler(ApiKey.ApiVersions, 0, 4)
async def handle_api_versions(ctx: HandlerContext, req):
    """Answer with the registry's ranges."""
    cls = response_class(ApiKey.ApiVersions)[ctx.header.api_version]
    return cls(error_code=0, throttle_time_ms=0, api_keys=[
        cls.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in advertised_ranges()])
