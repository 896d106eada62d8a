"""The controller's UpdateMetadata: built once per change, one message per broker, exact on the wire."""

from __future__ import annotations

from pylog.client.versions import INTER_BROKER
from pylog.controller import requests as rq
from pylog.controller.context import Assignment, ControllerContext, LiveBroker
from pylog.protocol.api import ApiKey
from pylog.protocol.codec import encode_request, decode_request_body, parse_request_header
from pylog.zk.codecs import BrokerRegistration, EndPoint, PartitionState


def _ctx() -> ControllerContext:
    ctx = ControllerContext(epoch=7)
    for bid, epoch in ((0, 100), (1, 101), (2, 102)):
        reg = BrokerRegistration(bid, (EndPoint("PLAINTEXT", "127.0.0.1", 9092 + bid, "PLAINTEXT"),))
        ctx.live[bid] = LiveBroker(reg, epoch)
    ctx.topic_ids["t"] = None
    for p in range(3):
        ctx.assignments[("t", p)] = Assignment((p % 3, (p + 1) % 3, 5))  # broker 5 is not live
        ctx.leaders[("t", p)] = PartitionState(p % 3, 4, (p % 3, (p + 1) % 3), 6, partition_epoch=9)
    return ctx


def test_one_message_per_broker_with_its_own_epoch_and_the_same_partition_states():
    ctx = _ctx()
    out = rq.update_metadata(ctx, 0, [0, 1, 2], None)
    assert sorted(out) == [0, 1, 2]
    assert [out[b][0].broker_epoch for b in (0, 1, 2)] == [100, 101, 102]
    assert out[0][0].topic_states is out[1][0].topic_states  # built once
    v = INTER_BROKER[ApiKey.UpdateMetadata]
    frame = encode_request(out[2][0], v, 11, "controller-0")[4:]  # what broker 2 decodes
    msg = decode_request_body(parse_request_header(frame), frame)
    assert (msg.controller_id, msg.controller_epoch, msg.broker_epoch) == (0, 7, 102)
    states = {s.partition_index: s for s in msg.topic_states[0].partition_states}
    assert sorted(states) == [0, 1, 2]
    assert (states[1].leader, states[1].leader_epoch, list(states[1].isr), states[1].zk_version) == (1, 4, [1, 2], 9)
    assert list(states[1].replicas) == [1, 2, 5] and list(states[1].offline_replicas) == [5]
    assert sorted(b.id for b in msg.live_brokers) == [0, 1, 2]


def test_only_the_named_partitions_and_deletions():
    ctx = _ctx()
    out = rq.update_metadata(ctx, 0, [1], [("t", 2)], deleting=[("gone", 0)])
    (msg, _v), = out.values()
    by_topic = {ts.topic_name: ts.partition_states for ts in msg.topic_states}
    assert [s.partition_index for s in by_topic["t"]] == [2]
    assert [(s.partition_index, s.leader) for s in by_topic["gone"]] == [(0, rq.LEADER_DURING_DELETE)]
    assert rq.update_metadata(ctx, 0, [], None) == {}


def test_replicas_on_a_failed_log_dir_are_offline_in_update_metadata():
    ctx = _ctx()
    ctx.offline_replicas[2] = {("t", 1)}
    (msg, _v), = rq.update_metadata(ctx, 0, [0], [("t", 1), ("t", 2)]).values()
    states = {s.partition_index: s for s in msg.topic_states[0].partition_states}
    assert list(states[1].offline_replicas) == [2, 5] and list(states[2].offline_replicas) == [5]
