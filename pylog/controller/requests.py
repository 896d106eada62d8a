"""Build the controller's requests to brokers from its context (pure; no I/O)."""

from __future__ import annotations

import base64
import uuid
from typing import Iterable

from pylog.client.versions import INTER_BROKER
from pylog.common.types import TP
from pylog.controller.context import ControllerContext
from pylog.protocol.api import ApiKey, ApiMessage, request_class

LEADER_DURING_DELETE = -2
EPOCH_DURING_DELETE = -2
_SECURITY_PROTOCOL_IDS = {"PLAINTEXT": 0, "SSL": 1, "SASL_PLAINTEXT": 2, "SASL_SSL": 3}


def topic_uuid(topic_id: str | None) -> uuid.UUID:
    """Kafka's base64url topic id as a UUID (the zero UUID when unknown)."""
    if not topic_id:
        return uuid.UUID(int=0)
    return uuid.UUID(bytes=base64.urlsafe_b64decode(topic_id + "=" * (-len(topic_id) % 4)))


def leader_and_isr(ctx: ControllerContext, controller_id: int, broker_id: int, tps: Iterable[TP],
                   is_new: bool = False) -> tuple[ApiMessage, int]:
    """LeaderAndIsr for one broker about the given partitions (their current context state)."""
    v = INTER_BROKER[ApiKey.LeaderAndIsr]
    cls = request_class(ApiKey.LeaderAndIsr)[v]
    by_topic: dict[str, list] = {}
    leaders: set[int] = set()
    for tp in sorted(set(tps)):
        st = ctx.leaders.get(tp)
        a = ctx.assignments.get(tp)
        if st is None or a is None:
            continue
        leaders.add(st.leader)
        by_topic.setdefault(tp[0], []).append(cls.LeaderAndIsrPartitionState(
            partition_index=tp[1], controller_epoch=st.controller_epoch, leader=st.leader,
            leader_epoch=st.leader_epoch, isr=list(st.isr), partition_epoch=st.partition_epoch,
            replicas=list(a.replicas), adding_replicas=list(a.adding), removing_replicas=list(a.removing),
            is_new=is_new, leader_recovery_state=st.leader_recovery_state))
    live_leaders = []
    for b in sorted(leaders):
        lb = ctx.live.get(b)
        ep = lb.registration.endpoint("PLAINTEXT") if lb else None
        if ep is not None:
            live_leaders.append(cls.LeaderAndIsrLiveLeader(broker_id=b, host_name=ep.host or "", port=ep.port))
    broker = ctx.live.get(broker_id)
    msg = cls(controller_id=controller_id, controller_epoch=ctx.epoch,
              broker_epoch=broker.epoch if broker else -1, request_type=0,
              topic_states=[cls.LeaderAndIsrTopicState(topic_name=t, topic_id=topic_uuid(ctx.topic_ids.get(t)),
                                                       partition_states=ps) for t, ps in by_topic.items()],
              live_leaders=live_leaders)
    return msg, v


def update_metadata(ctx: ControllerContext, controller_id: int, broker_ids: Iterable[int], tps: Iterable[TP] | None,
                    deleting: Iterable[TP] = ()) -> dict[int, tuple[ApiMessage, int]]:
    """UpdateMetadata for each of `broker_ids`: all live brokers, and the given partitions (None: all).

    The partition states are built once and shared by every broker's request (only the broker
    epoch differs): after a controller failover that is every partition, once per broker.
    """
    v = INTER_BROKER[ApiKey.UpdateMetadata]
    cls = request_class(ApiKey.UpdateMetadata)[v]
    live = ctx.live_ids
    chosen = sorted(ctx.leaders) if tps is None else sorted(set(tps))
    by_topic: dict[str, list] = {}
    state_cls = cls.UpdateMetadataPartitionState
    for tp in chosen:
        st = ctx.leaders.get(tp)
        a = ctx.assignments.get(tp)
        if st is None or a is None:
            continue
        by_topic.setdefault(tp[0], []).append(state_cls(
            partition_index=tp[1], controller_epoch=st.controller_epoch, leader=st.leader,
            leader_epoch=st.leader_epoch, isr=list(st.isr), zk_version=st.partition_epoch,
            replicas=list(a.replicas),
            offline_replicas=[r for r in a.replicas if r not in live or tp in ctx.offline_replicas.get(r, ())]))
    for t, p in sorted(set(deleting)):
        by_topic.setdefault(t, []).append(state_cls(
            partition_index=p, controller_epoch=ctx.epoch, leader=LEADER_DURING_DELETE, leader_epoch=-1,
            isr=[], zk_version=0, replicas=[], offline_replicas=[]))
    topic_states = [cls.UpdateMetadataTopicState(topic_name=t, topic_id=topic_uuid(ctx.topic_ids.get(t)),
                                                 partition_states=ps) for t, ps in by_topic.items()]
    brokers = []
    for bid in sorted(ctx.live):
        reg = ctx.live[bid].registration
        brokers.append(cls.UpdateMetadataBroker(id=bid, rack=reg.rack, endpoints=[
            cls.UpdateMetadataBroker.UpdateMetadataEndpoint(
                port=e.port, host=e.host or "", listener=e.listener,
                security_protocol=_SECURITY_PROTOCOL_IDS.get(e.security_protocol, 0))
            for e in reg.endpoints]))
    out = {}
    for bid in broker_ids:
        broker = ctx.live.get(bid)
        out[bid] = (cls(controller_id=controller_id, controller_epoch=ctx.epoch,
                        broker_epoch=broker.epoch if broker else -1, topic_states=topic_states,
                        live_brokers=brokers), v)
    return out


def stop_replica(ctx: ControllerContext, controller_id: int, broker_id: int, tps: Iterable[TP],
                 delete: bool, deleting_topic: bool = False) -> tuple[ApiMessage, int]:
    """StopReplica for one broker; epochs guard against stopping a newer incarnation."""
    v = INTER_BROKER[ApiKey.StopReplica]
    cls = request_class(ApiKey.StopReplica)[v]
    by_topic: dict[str, list] = {}
    for tp in sorted(set(tps)):
        st = ctx.leaders.get(tp)
        epoch = EPOCH_DURING_DELETE if deleting_topic else (st.leader_epoch if st else -1)
        by_topic.setdefault(tp[0], []).append(cls.StopReplicaTopicState.StopReplicaPartitionState(
            partition_index=tp[1], leader_epoch=epoch, delete_partition=delete))
    broker = ctx.live.get(broker_id)
    msg = cls(controller_id=controller_id, controller_epoch=ctx.epoch,
              broker_epoch=broker.epoch if broker else -1,
              topic_states=[cls.StopReplicaTopicState(topic_name=t, partition_states=ps)
                            for t, ps in by_topic.items()])
    return msg, v
