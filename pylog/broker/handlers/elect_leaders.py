"""ElectLeaders: v0-2 (KIP-460; librdkafka and kafka-python's admin clients send up to v2).

Behavior: the controller runs the election (clients send this to the controller; any other
broker answers NOT_CONTROLLER for every partition, as a ZooKeeper-mode Kafka broker does).
PREFERRED (0) elects the first assigned replica where it is live, in the ISR and not already
leader; UNCLEAN (1) elects a leader for partitions without a live one, from outside the ISR if
it must. Per-partition results: NONE, ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, INVALID_TOPIC_EXCEPTION (topic being
deleted). topic_partitions=null means every partition this broker knows, and then
ELECTION_NOT_NEEDED results are dropped (KafkaApis.handleElectLeaders). Like Kafka's
DelayedElectLeader, the response waits (up to timeout_ms) until this broker's metadata shows the
new leaders, else REQUEST_TIMED_OUT for those partitions.
Version notes: v0 has no election type (always PREFERRED) and no top-level error; v2 is flexible.
"""

from __future__ import annotations

import logging

from pylog.broker.handlers import active_controller, handler
from pylog.broker.services import HandlerContext
from pylog.security.authorizer import allowed
from pylog.common.types import TP
from pylog.controller.preferred import ELECTION_TYPES, PREFERRED, ElectionResult
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode

log = logging.getLogger("pylog.admin")


def _requested(req, cache) -> list[TP]:
    if req.topic_partitions is None:
        return [(t, p) for t in sorted(cache.topics) for p in sorted(cache.topics[t])]
    return list(dict.fromkeys((t.topic, p) for t in req.topic_partitions for p in t.partitions))


@handler(ApiKey.ElectLeaders, 0, 2)
async def handle_elect_leaders(ctx: HandlerContext, req):
    """Ask the controller for preferred or unclean leader elections."""
    broker = ctx.broker
    version = ctx.header.api_version
    cls = response_class(ApiKey.ElectLeaders)[version]
    election_type = req.election_type if version >= 1 else PREFERRED
    tps = _requested(req, broker.metadata)
    log.info("ElectLeaders v%d (%s) for %s partitions from %s", version,
             ELECTION_TYPES.get(election_type, election_type),
             "all" if req.topic_partitions is None else len(tps), ctx.header.client_id)
    controller = active_controller(ctx)
    authorized = allowed(ctx, "ALTER", "CLUSTER")
    if not authorized:  # Kafka: the top-level error, every partition refused too
        results = {tp: ElectionResult(ErrorCode.CLUSTER_AUTHORIZATION_FAILED, None) for tp in tps}
    elif election_type not in ELECTION_TYPES:
        results = {tp: ElectionResult(ErrorCode.INVALID_REQUEST, f"Unknown election type {election_type}")
                   for tp in tps}
    elif controller is None:
        results = {tp: ElectionResult(ErrorCode.NOT_CONTROLLER, ErrorCode.NOT_CONTROLLER.message) for tp in tps}
    else:
        results = await controller.elect_leaders(tps, election_type)
        results = await _await_metadata(broker, results, req.timeout_ms)
    if req.topic_partitions is None:
        results = {tp: r for tp, r in results.items() if r.error != ErrorCode.ELECTION_NOT_NEEDED}
    by_topic: dict[str, list] = {}
    for (topic, p), r in results.items():
        by_topic.setdefault(topic, []).append(cls.ReplicaElectionResult.PartitionResult(
            partition_id=p, error_code=int(r.error), error_message=r.message))
    top = 0 if authorized else int(ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    return cls(throttle_time_ms=0, error_code=top, replica_election_results=[
        cls.ReplicaElectionResult(topic=t, partition_result=ps) for t, ps in by_topic.items()])


async def _await_metadata(broker, results: dict[TP, ElectionResult], timeout_ms: int) -> dict[TP, ElectionResult]:
    """DelayedElectLeader: wait until the local metadata cache shows the elected leaders."""
    expected = {tp: r.leader for tp, r in results.items() if r.error == ErrorCode.NONE}

    def visible() -> bool:
        for (t, p), leader in expected.items():
            info = broker.metadata.partition(t, p)
            if info is None or info.leader != leader:
                return False
        return True

    if not expected or await broker.topic_admin.wait_until(visible, max(timeout_ms, 0) / 1000):
        return results
    out = dict(results)
    for (t, p), leader in expected.items():
        info = broker.metadata.partition(t, p)
        if info is None or info.leader != leader:
            out[(t, p)] = ElectionResult(ErrorCode.REQUEST_TIMED_OUT, None)
    return out
