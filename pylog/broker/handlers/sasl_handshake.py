"""SaslHandshake: v0-1 (v1: the tokens follow in SaslAuthenticate requests, KIP-152).

Behavior: on a SASL listener, picks the mechanism for the connection's (re-)authentication and
lists the enabled ones; an unsupported mechanism gets UNSUPPORTED_SASL_MECHANISM and the connection
closes. On other listeners, or once authenticated without re-authentication enabled, ILLEGAL_SASL_STATE.
Version notes: v0 clients would send raw SASL tokens next; pylog serves those through SaslAuthenticate
framing only, so v0 is accepted for the mechanism list but a raw token closes the connection.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.sasl import SaslFailure


@handler(ApiKey.SaslHandshake, 0, 1)
async def handle_sasl_handshake(ctx: HandlerContext, req):
    """Choose the SASL mechanism of this connection."""
    cls = response_class(ApiKey.SaslHandshake)[ctx.header.api_version]
    security = ctx.security
    sasl = None if security is None else security.sasl
    if sasl is None:
        return cls(error_code=int(ErrorCode.ILLEGAL_SASL_STATE), mechanisms=[])
    try:
        code, mechanisms = sasl.handshake(ctx.header.api_version, req.mechanism)
    except SaslFailure as exc:
        security.close_after_reply = True
        return cls(error_code=exc.code, mechanisms=sasl.listener.mechanisms)
    return cls(error_code=code, mechanisms=mechanisms)
