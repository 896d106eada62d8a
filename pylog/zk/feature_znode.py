"""The `/feature` znode (KIP-584) as ZooKeeper-mode Kafka writes it (FeatureZNode).

`{"version":2,"status":1,"features":{"<name>":{"max_version_level":N}}}`; version 1 also carries
min_version_level (both are read). The controller creates it, enabled, on failover.
"""

from __future__ import annotations

import json
from typing import Any

from pylog.zk import errors
from pylog.zk._json import dumps

PATH = "/feature"
ZNODE_VERSION, ENABLED = 2, 1


def encode(levels: dict[str, int]) -> bytes:
    """The /feature znode's data for these finalized levels (level 0 features are left out)."""
    return dumps({"version": ZNODE_VERSION, "status": ENABLED,
                  "features": {n: {"max_version_level": lv} for n, lv in sorted(levels.items()) if lv > 0}})


def decode(data: bytes) -> dict[str, int]:
    """Finalized levels from the znode's data (version 1 or 2); disabled status means none."""
    doc = json.loads(data or b"{}")
    if doc.get("version") not in (1, 2):
        raise ValueError(f"unknown /feature version {doc.get('version')}")
    if doc.get("status") != ENABLED:
        return {}
    return {name: int(f["max_version_level"]) for name, f in (doc.get("features") or {}).items()}


def ensure_znode(zk: Any) -> None:
    """Create /feature (enabled, nothing finalized) if it is missing: the controller's failover step (blocking)."""
    try:
        zk.create(PATH, encode({}))
    except errors.NodeExistsError:
        pass
