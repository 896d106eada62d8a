"""Replication throttling (KIP-73): caps the bytes moved for replicas listed as throttled.

The leader throttles what it sends to followers of throttled replicas (leader.replication.
throttled.rate with the topic's leader.replication.throttled.replicas) and the follower what it
fetches (follower.replication.throttled.rate). Until a rate is configured this is a no-op.
"""

from __future__ import annotations

from typing import Any


class ReplicationThrottle:
    """Leader-side replication quota (refined by the reassignment work)."""

    def __init__(self, broker: Any) -> None:
        self.broker = broker

    async def before_leader_fetch(self, ctx: Any, req: Any) -> None:
        """Delay a follower fetch while the leader quota is exhausted."""

    def after_leader_fetch(self, req: Any, topics: list) -> None:
        """Account the throttled bytes just served to a follower."""
