"""AlterConfigs: v0-2 (the legacy, non-incremental API; v2 is flexible).

Behavior (ZooKeeper mode, ZkAdminManager.alterConfigs): the entries of a resource replace all of
its stored overrides: a key left out returns to its default, so an empty list clears them all.
Topics and broker resources are handled as IncrementalAlterConfigs handles them (this broker's id,
or "" for the cluster-wide default; /config/changes notifications; validate_only), with the same
per-resource errors; a null value is INVALID_REQUEST ("Null value not supported for : <keys>").
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.broker.handlers.incremental_alter_configs import Update, alter_resources
from pylog.protocol.api import ApiKey


@handler(ApiKey.AlterConfigs, 0, 2)
async def handle_alter_configs(ctx: HandlerContext, req):
    """Replace topic and broker config overrides through ZooKeeper."""
    def update_for(res) -> Update:
        entries = {c.name: c.value for c in res.configs}
        return lambda current, keys: dict(entries)
    return await alter_resources(ctx, req, update_for, incremental=False)
