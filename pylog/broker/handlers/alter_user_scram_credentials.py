"""AlterUserScramCredentials: v0 (KIP-554; flexible).

Behavior: upserts (from the client's salt and salted password) and deletions of SCRAM credentials,
written to /config/users/<user> with a /config/changes notification as ZK-mode Kafka does, so every
broker authenticates with them at once. One result per user; Kafka's checks and messages (empty
name, unknown mechanism, too few/many iterations, deleting what is not there, a mechanism twice).
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.zk_calls import ZooKeeperTimeout, run_zk
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed
from pylog.security.scram_admin import Deletion, Upsertion, alter_credentials


@handler(ApiKey.AlterUserScramCredentials, 0, 0)
async def handle_alter_user_scram_credentials(ctx: HandlerContext, req):
    """Create, replace or delete users' SCRAM credentials."""
    cls = response_class(ApiKey.AlterUserScramCredentials)[ctx.header.api_version]
    changes = [Deletion(d.name, d.mechanism) for d in req.deletions]
    changes += [Upsertion(u.name, u.mechanism, u.iterations, bytes(u.salt or b""), bytes(u.salted_password or b""))
                for u in req.upsertions]
    if not allowed(ctx, "ALTER", "CLUSTER"):  # CLUSTER_AUTHORIZATION_FAILED for every user named
        results = {c.user: (ErrorCode.CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed.") for c in changes}
    else:
        try:
            results = await run_zk(ctx.broker.zk.connect, alter_credentials, ctx.broker.zk, changes)
        except ZooKeeperTimeout as err:
            results = {c.user: (err.code, str(err)) for c in changes}
    return cls(throttle_time_ms=0, results=[
        cls.AlterUserScramCredentialsResult(user=user, error_code=code, error_message=message)
        for user, (code, message) in results.items()])
