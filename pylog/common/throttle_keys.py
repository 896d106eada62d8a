"""The config keys of replication throttling (KIP-73), shared by the broker that applies them and
the reassignment tool that sets them."""

from __future__ import annotations

# Broker configs (dynamic, per broker): bytes per second for throttled replicas.
LEADER_RATE = "leader.replication.throttled.rate"
FOLLOWER_RATE = "follower.replication.throttled.rate"
# Topic configs: which replicas ("partition:broker,..." or "*") the rates apply to.
LEADER_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_REPLICAS = "follower.replication.throttled.replicas"
