"""Client quotas (KIP-13/55/219/546): stored as ZK-mode Kafka stores them, enforced on real clients.

A librdkafka producer and consumer with client-id quotas are measured at their quota (within 10 %)
once the first window's allowance is spent, and librdkafka's throttle_cb reports the broker's
throttle times. The brokers measure rates over 3 samples of 1 s (quota.window.num, a broker key) so a
few seconds show the steady rate; the APIs are exercised on the wire (no client in reach has them).
"""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as CkTopicPartition

from pylog.cli.configs import configs_command
from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode
from support.clients import create_topic, wait_for
from support.quotas import rate_over_whole_periods

pytestmark = pytest.mark.integration

PRODUCE_QUOTA = 4 * 1024 * 1024  # bytes/s: many times a full request (1 MB), so a few seconds average well
FETCH_QUOTA = 4 * 1024 * 1024
RUN_S = 8.0
VALUE = b"x" * 1000


def _alter(k: KafkaClient, entity: dict, ops: dict, validate_only: bool = False):
    return k.call(ApiKey.AlterClientQuotas, lambda cls, v: cls(entries=[cls.EntryData(
        entity=[cls.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
        ops=[cls.EntryData.OpData(key=key, value=float(val or 0), remove=val is None) for key, val in ops.items()])],
        validate_only=validate_only)).entries[0]


def _describe(k: KafkaClient, components: list[tuple[str, int, str | None]], strict: bool = False) -> dict:
    resp = k.call(ApiKey.DescribeClientQuotas, lambda cls, v: cls(components=[
        cls.ComponentData(entity_type=t, match_type=m, match=n) for t, m, n in components], strict=strict))
    assert resp.error_code == 0, resp.error_message
    return {tuple((e.entity_type, e.entity_name) for e in entry.entity): {v.key: v.value for v in entry.values}
            for entry in resp.entries}


def _controller_mutation_rate(c) -> None:
    """KIP-599: 2 partitions/s, a bucket of 2 * 3 samples; CreateTopics v7 is strict, v5 permissive."""
    with KafkaClient(c.bootstrap) as k:
        assert _alter(k, {"client-id": "mut"}, {"controller_mutation_rate": 2.0}).error_code == 0
    wait_for(lambda: "Updated quotas of clients/mut" in c.brokers[0].log_path.read_text(), 30, "the quota applied")

    def create(k: KafkaClient, name: str, partitions: int, version: int):
        resp = k.call(ApiKey.CreateTopics, lambda cls, v: cls(topics=[cls.CreatableTopic(
            name=name, num_partitions=partitions, replication_factor=1, assignments=[], configs=[])],
            timeout_ms=30000, validate_only=False), max_version=version)
        return resp.topics[0].error_code, resp.throttle_time_ms

    with KafkaClient(c.bootstrap, client_id="mut") as k:
        assert create(k, "m1", 12, 7) == (0, 0)  # 6 tokens, 12 taken: accepted all the same (strict)
        err, throttle = create(k, "m2", 1, 7)  # in debt (about 6 tokens, refilling at 2/s): refused
        assert err == ErrorCode.THROTTLING_QUOTA_EXCEEDED and 1000 <= throttle <= 3100, throttle
        err, throttle = create(k, "m3", 1, 5)  # permissive: created, with the throttle time
        assert err == 0 and throttle > 0


def _produce_flat_out(bootstrap: str, client_id: str, topic: str) -> tuple[list[tuple[float, int]], list[int]]:
    """A librdkafka producer sending as fast as the broker lets it for RUN_S: (deliveries, throttle times)."""
    throttles: list[int] = []
    p = Producer({"bootstrap.servers": bootstrap, "client.id": client_id,
                  "throttle_cb": lambda ev: throttles.append(ev.throttle_time)})
    delivered: list[tuple[float, int]] = []
    on_delivery = lambda err, msg: err is None and delivered.append((time.monotonic(), len(msg.value())))  # noqa
    start = time.monotonic()
    while time.monotonic() - start < RUN_S:
        if len(p) < 5000:  # a backlog of a few full batches keeps it at its quota; more would only queue
            p.produce(topic, VALUE, partition=0, on_delivery=on_delivery)
            p.poll(0)
        else:
            p.poll(0.01)
    assert p.flush(30) == 0
    return delivered, throttles


def test_quotas_are_stored_as_kafka_stores_them_and_throttle_clients(cluster_factory, zk):
    c = cluster_factory(1, overrides={"quota.window.num": "3"})
    with KafkaClient(c.bootstrap) as k:
        assert _alter(k, {"client-id": "qp"}, {"producer_byte_rate": PRODUCE_QUOTA}).error_code == 0
        assert _alter(k, {"client-id": "qc"}, {"consumer_byte_rate": FETCH_QUOTA}).error_code == 0
        assert _alter(k, {"user": None}, {"request_percentage": 200.0}).error_code == 0  # the default user
        bad = _alter(k, {"client-id": "qp"}, {"producer_byte_rate": 1.5})
        assert (bad.error_code, bad.error_message) == (ErrorCode.INVALID_REQUEST,
                                                       "Configuration producer_byte_rate must be a LONG value")
        assert _alter(k, {"client-id": "qp"}, {"nope": 1}).error_message == "Invalid configuration key nope"
        assert _describe(k, [("client-id", 2, None)], strict=True) == {
            (("client-id", "qc"),): {"consumer_byte_rate": FETCH_QUOTA},
            (("client-id", "qp"),): {"producer_byte_rate": PRODUCE_QUOTA}}
        assert _describe(k, [("user", 1, None)]) == {(("user", None),): {"request_percentage": 200.0}}
    # ZK-mode Kafka's znodes and change notifications
    stored = json.loads(zk.get("/config/clients/qp")[0])
    assert stored == {"version": 1, "config": {"producer_byte_rate": str(PRODUCE_QUOTA)}}
    notes = [json.loads(zk.get(f"/config/changes/{n}")[0]) for n in sorted(zk.get_children("/config/changes"))]
    assert {"version": 2, "entity_path": "clients/qp"} in notes and {"version": 2, "entity_path": "users/<default>"} \
        in notes
    wait_for(lambda: "Updated quotas of clients/qc" in c.brokers[0].log_path.read_text(), 30, "the broker applies them")
    create_topic(c.bootstrap, "quota")
    _controller_mutation_rate(c)

    delivered, throttles = _produce_flat_out(c.bootstrap, "qp", "quota")
    produced = rate_over_whole_periods(delivered, PRODUCE_QUOTA)
    assert throttles and max(throttles) > 0  # librdkafka's throttle_cb got the broker's throttle times
    assert abs(produced - PRODUCE_QUOTA) <= 0.1 * PRODUCE_QUOTA, (produced, PRODUCE_QUOTA)

    filler = Producer({"bootstrap.servers": c.bootstrap})  # unthrottled: enough for the consumer's whole run
    for _ in range(int(FETCH_QUOTA * RUN_S / len(VALUE))):
        while True:
            try:
                filler.produce("quota", VALUE, partition=0)
                break
            except BufferError:
                filler.poll(0.05)
    assert filler.flush(60) == 0
    received: list[tuple[float, int]] = []
    cons = Consumer({"bootstrap.servers": c.bootstrap, "group.id": "quota", "client.id": "qc"})
    cons.assign([CkTopicPartition("quota", 0, 0)])
    start = time.monotonic()
    try:
        while time.monotonic() - start < RUN_S:
            m = cons.poll(0.2)
            if m is not None and m.error() is None:
                received.append((time.monotonic(), len(m.value())))
    finally:
        cons.close()
    consumed = rate_over_whole_periods(received, FETCH_QUOTA)
    assert abs(consumed - FETCH_QUOTA) <= 0.1 * FETCH_QUOTA, (consumed, FETCH_QUOTA)


def test_a_user_client_pair_quota_throttles_its_client_instead_of_the_users(cluster_factory, zk):
    """Set with pylog-configs through the broker: user ANONYMOUS (every client without SASL) at a quarter of the
    <ANONYMOUS, qpair> pair's rate; client qpair is measured at the pair's rate, the more specific entity winning."""
    c = cluster_factory(1, overrides={"quota.window.num": "3"})
    user = ("--entity-type", "users", "--entity-name", "ANONYMOUS")
    for entity, rate in ((user, PRODUCE_QUOTA // 4), ((*user, "--entity-type", "clients", "--entity-name", "qpair"),
                                                      PRODUCE_QUOTA)):
        r = CliRunner().invoke(configs_command, ["--bootstrap-server", c.bootstrap, *entity, "--alter",
                                                 "--add-config", f"producer_byte_rate={rate}"])
        assert r.exit_code == 0, r.output
    assert zk.get_entity_config("users", "ANONYMOUS/clients/qpair") == {"producer_byte_rate": str(PRODUCE_QUOTA)}
    wait_for(lambda: "Updated quotas of users/ANONYMOUS/clients/qpair" in c.brokers[0].log_path.read_text(), 30,
             "the broker applies the pair's quota")
    create_topic(c.bootstrap, "pair")
    delivered, throttles = _produce_flat_out(c.bootstrap, "qpair", "pair")
    produced = rate_over_whole_periods(delivered, PRODUCE_QUOTA)
    assert throttles and max(throttles) > 0
    assert abs(produced - PRODUCE_QUOTA) <= 0.1 * PRODUCE_QUOTA, (produced, PRODUCE_QUOTA)
