"""DescribeUserScramCredentials: v0 (KIP-554; flexible).

Behavior: the mechanisms and iteration counts of the users' SCRAM credentials as stored in
ZooKeeper (/config/users/<user>), never a salt or key; all users with credentials when the list is
null or empty; RESOURCE_NOT_FOUND for a user without any, DUPLICATE_RESOURCE for a user asked twice.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.zk_calls import ZooKeeperTimeout, run_zk
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed
from pylog.security.scram_admin import describe_credentials


@handler(ApiKey.DescribeUserScramCredentials, 0, 0)
async def handle_describe_user_scram_credentials(ctx: HandlerContext, req):
    """Which SCRAM mechanisms (and iterations) each user has."""
    cls = response_class(ApiKey.DescribeUserScramCredentials)[ctx.header.api_version]
    if not allowed(ctx, "DESCRIBE", "CLUSTER"):
        # Kafka's getErrorResponse (librdkafka 2.16 crashes on this answer, from Kafka too: see the test)
        return cls(throttle_time_ms=0, error_code=int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED),
                   error_message="Cluster authorization failed.", results=[])
    users = None if req.users is None else [u.name for u in req.users]
    try:
        rows = await run_zk(ctx.broker.zk.connect, describe_credentials, ctx.broker.zk, users)
    except ZooKeeperTimeout as err:
        return cls(throttle_time_ms=0, error_code=int(err.code), error_message=str(err), results=[])
    result = cls.DescribeUserScramCredentialsResult
    return cls(throttle_time_ms=0, error_code=int(ErrorCode.NONE), error_message=None, results=[
        result(user=user, error_code=code, error_message=message, credential_infos=[
            result.CredentialInfo(mechanism=mech, iterations=iterations) for mech, iterations in infos])
        for user, code, message, infos in rows])
