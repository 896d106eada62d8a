"""SaslAuthenticate: v0-2 (KIP-152; v1 adds the session lifetime of KIP-368; flexible from v2).

Behavior: one round of the mechanism chosen by SaslHandshake (on other listeners ILLEGAL_SASL_STATE,
as Kafka answers a SaslAuthenticate that reaches its request handlers). A failure answers
SASL_AUTHENTICATION_FAILED with the reason (never a secret) and closes the connection; success
reports connections.max.reauth.ms as the session lifetime (v1+), after which the client must
re-authenticate on the connection or lose it.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.sasl import SaslFailure


@handler(ApiKey.SaslAuthenticate, 0, 2)
async def handle_sasl_authenticate(ctx: HandlerContext, req):
    """Feed the client's SASL bytes to the mechanism and answer its reply."""
    cls = response_class(ApiKey.SaslAuthenticate)[ctx.header.api_version]
    security = ctx.security
    sasl = None if security is None else security.sasl
    if sasl is None:  # not a SASL listener: Kafka's KafkaApis answer, the connection stays
        return cls(error_code=int(ErrorCode.ILLEGAL_SASL_STATE),
                   error_message="SaslAuthenticate request received after successful authentication",
                   auth_bytes=b"", session_lifetime_ms=0)
    try:
        reply, lifetime = sasl.authenticate(req.auth_bytes)
    except SaslFailure as exc:
        security.close_after_reply = True
        return cls(error_code=exc.code, error_message=exc.message, auth_bytes=b"", session_lifetime_ms=0)
    return cls(error_code=0, error_message=None, auth_bytes=reply, session_lifetime_ms=lifetime)
