"""Golden tests: our znode JSON must be byte-identical to Kafka's (examples from kafka-formats.md section 1)."""

from __future__ import annotations

import json

import pytest

from pylog.zk.codecs import (RECOVERING, BrokerRegistration, ClusterId, ConfigChangeNotification, ConfigEntity,
                             ControllerInfo, EndPoint, PartitionState, ProducerIdBlock, TopicAssignment,
                             TopicPartition, decode_controller_epoch, encode_controller_epoch)
from pylog.zk.codecs_admin import (FeatureZNodeData, IsrChangeNotification, LogDirEventNotification, ShutdownRequest,
                                   PreferredReplicaElection, ReassignPartitions)

BROKER_V5 = (b'{"features":{},"listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},'
             b'"endpoints":["PLAINTEXT://localhost:9092"],"jmx_port":-1,"port":9092,"host":"localhost",'
             b'"version":5,"timestamp":"1633024800000"}')
TOPIC_V3 = (b'{"removing_replicas":{},"partitions":{"2":[3,1,2],"1":[2,3,1],"0":[1,2,3]},'
            b'"topic_id":"pC-Mn-Q4TV2l0TtBmqcSKg","adding_replicas":{},"version":3}')
STATE = b'{"controller_epoch":1,"leader":1,"version":1,"leader_epoch":0,"isr":[1,2,3]}'


def reordered(data: bytes) -> bytes:
    """Same JSON object with its top-level keys reversed (Kafka's key order is not fixed)."""
    obj = json.loads(data)
    return json.dumps(dict(reversed(list(obj.items())))).encode()


def test_broker_v5_matches_kafka_bytes() -> None:
    reg = BrokerRegistration(0, [EndPoint("PLAINTEXT", "localhost", 9092)], timestamp_ms=1633024800000)
    assert reg.encode() == BROKER_V5


def test_broker_decode_is_key_order_independent() -> None:
    for data in (BROKER_V5, reordered(BROKER_V5)):
        reg = BrokerRegistration.decode(7, data)
        assert reg.broker_id == 7
        assert reg.endpoints == (EndPoint("PLAINTEXT", "localhost", 9092, "PLAINTEXT"),)
        assert (reg.rack, reg.jmx_port, reg.timestamp_ms, reg.version, dict(reg.features)) == \
            (None, -1, 1633024800000, 5, {})


def test_broker_with_rack_features_and_no_plaintext_listener() -> None:
    reg = BrokerRegistration(1, [EndPoint("CLIENT", "host1", 9092, "SSL"),
                                 EndPoint("REPLICATION", "host1", 9093, "SASL_SSL")],
                             rack="dc1", timestamp_ms=5, features={"feature1": (1, 2)})
    data = reg.encode()
    obj = json.loads(data)
    assert obj["host"] is None and obj["port"] == -1  # no PLAINTEXT endpoint: Kafka writes null/-1
    assert obj["rack"] == "dc1" and obj["timestamp"] == "5"
    assert obj["listener_security_protocol_map"] == {"CLIENT": "SSL", "REPLICATION": "SASL_SSL"}
    assert obj["features"] == {"feature1": {"min_version": 1, "max_version": 2}}
    assert list(obj) == ["features", "listener_security_protocol_map", "endpoints", "rack", "jmx_port", "port",
                         "host", "version", "timestamp"]
    assert BrokerRegistration.decode(1, data) == reg


def test_broker_rack_only_when_set() -> None:
    data = BrokerRegistration(1, [EndPoint("PLAINTEXT", "h", 1)], timestamp_ms=1).encode()
    assert b"rack" not in data


def test_broker_old_versions_decode() -> None:
    v1 = BrokerRegistration.decode(3, b'{"version":1,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1"}')
    assert v1.endpoints == (EndPoint("PLAINTEXT", "h", 9092, "PLAINTEXT"),) and v1.version == 1
    v3 = BrokerRegistration.decode(3, b'{"version":3,"host":"h","port":9092,"jmx_port":-1,"timestamp":"1",'
                                      b'"endpoints":["SSL://h:9093"],"rack":"r1"}')
    assert v3.endpoints == (EndPoint("SSL", "h", 9093, "SSL"),) and v3.rack == "r1"


def test_endpoint_ipv6_and_empty_host() -> None:
    ep = EndPoint.parse("PLAINTEXT://[::1]:9092")
    assert ep == EndPoint("PLAINTEXT", "::1", 9092) and ep.connection_string() == "PLAINTEXT://[::1]:9092"
    assert EndPoint.parse("PLAINTEXT://:9092").host is None
    assert EndPoint("PLAINTEXT", None, 9092).connection_string() == "PLAINTEXT://:9092"


@pytest.mark.parametrize("data, message", [
    (b"not json", "Malformed /brokers/ids/1: not valid JSON"),
    (b"[1]", "Malformed /brokers/ids/1: expected a JSON object"),
    (b'{"version":5,"endpoints":"x"}', "field 'endpoints' must be a list"),
    (b'{"version":5}', "field 'endpoints' is missing"),
    (b'{"version":5,"endpoints":["nonsense"]}', "unable to parse 'nonsense' to a broker endpoint"),
    (b'{"version":5,"endpoints":["CLIENT://h:1"],"listener_security_protocol_map":{}}',
     "no security protocol defined for listener CLIENT"),
    (b'{"version":true,"endpoints":[]}', "field 'version' must be an integer"),
])
def test_broker_malformed(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("(", r"\(")):
        BrokerRegistration.decode(1, data)


def test_controller_and_epoch() -> None:
    assert ControllerInfo(0, 1633024800123).encode() == b'{"version":1,"brokerid":0,"timestamp":"1633024800123"}'
    assert ControllerInfo.decode(b'{"timestamp":"9","brokerid":4,"version":1}') == ControllerInfo(4, 9)
    assert encode_controller_epoch(1) == b"1"
    assert decode_controller_epoch(b"17") == 17
    with pytest.raises(ValueError, match="Malformed /controller_epoch: expected an integer"):
        decode_controller_epoch(b'{"epoch":1}')
    with pytest.raises(ValueError, match="Malformed /controller: field 'brokerid' is missing"):
        ControllerInfo.decode(b'{"version":1}')


def test_topic_v3_matches_kafka_bytes_and_reads_any_order() -> None:
    ta = TopicAssignment({0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}, "pC-Mn-Q4TV2l0TtBmqcSKg")
    assert ta.encode() == TOPIC_V3
    for data in (TOPIC_V3, reordered(TOPIC_V3)):
        assert TopicAssignment.decode(data) == ta


def test_topic_reassignment_only_non_empty_lists() -> None:
    ta = TopicAssignment({0: [3, 4, 1, 2], 1: [1, 2]}, None, adding_replicas={0: [3, 4], 1: []},
                         removing_replicas={0: [1, 2]})
    obj = json.loads(ta.encode())
    assert obj == {"removing_replicas": {"0": [1, 2]}, "partitions": {"1": [1, 2], "0": [3, 4, 1, 2]},
                   "adding_replicas": {"0": [3, 4]}, "version": 3}
    assert "topic_id" not in obj
    assert ta.adding(1) == () and ta.removing(0) == (1, 2) and ta.replicas(0) == (3, 4, 1, 2)


def test_topic_readers_default_missing_fields() -> None:
    ta = TopicAssignment.decode(b'{"version":1,"partitions":{"0":[1]}}')
    assert ta.partitions == {0: (1,)} and ta.adding_replicas == {} and ta.removing_replicas == {}
    assert ta.topic_id is None


@pytest.mark.parametrize("data, message", [
    (b'{"version":3,"partitions":{"x":[1]}}', "field 'partitions' has a non-numeric partition id 'x'"),
    (b'{"version":3,"partitions":{"0":[1,"2"]}}', "field 'partitions.0' must be a list of integers"),
    (b'{"version":3,"partitions":{},"topic_id":"short"}', "field 'topic_id' Not a base64url UUID"),
])
def test_topic_malformed(data: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=f"Malformed /brokers/topics/foo: {message}"):
        TopicAssignment.decode(data, "/brokers/topics/foo")


def test_partition_state_matches_kafka_bytes() -> None:
    st = PartitionState(leader=1, leader_epoch=0, isr=[1, 2, 3], controller_epoch=1)
    assert st.encode() == STATE
    assert PartitionState.decode(reordered(STATE), zk_version=7) == PartitionState(1, 0, (1, 2, 3), 1,
                                                                                  partition_epoch=7)


def test_partition_state_recovery_state_only_when_recovering() -> None:
    st = PartitionState(2, 5, [2], 3, leader_recovery_state=RECOVERING)
    assert st.encode() == (b'{"controller_epoch":3,"leader":2,"version":1,"leader_recovery_state":1,'
                           b'"leader_epoch":5,"isr":[2]}')
    assert PartitionState.decode(st.encode()).leader_recovery_state == RECOVERING


def test_partition_state_malformed_names_path_and_field() -> None:
    with pytest.raises(ValueError, match=r"Malformed /brokers/topics/t/partitions/0/state: field 'isr'"):
        PartitionState.decode(b'{"controller_epoch":1,"leader":1,"leader_epoch":0,"isr":1}',
                              path="/brokers/topics/t/partitions/0/state")


def test_config_entity() -> None:
    ce = ConfigEntity({"retention.ms": "1000", "min.insync.replicas": "2"})
    assert ce.encode() == b'{"version":1,"config":{"retention.ms":"1000","min.insync.replicas":"2"}}'
    assert ConfigEntity().encode() == b'{"version":1,"config":{}}'
    assert ConfigEntity.decode(b'{"config":{"a":"1"},"version":1}') == ConfigEntity({"a": "1"})
    assert ConfigEntity.decode(b"") == ConfigEntity({})
    with pytest.raises(ValueError, match="values must be strings, not for a"):
        ConfigEntity.decode(b'{"version":1,"config":{"a":1}}')
    with pytest.raises(ValueError):
        ConfigEntity({"a": 1})  # type: ignore[dict-item]


def test_config_change_notification_v2_and_v1() -> None:
    n = ConfigChangeNotification("topics/foo")
    assert n.encode() == b'{"version":2,"entity_path":"topics/foo"}'
    assert ConfigChangeNotification.decode(b'{"entity_path":"brokers/<default>","version":2}').entity_name == \
        "<default>"
    v1 = ConfigChangeNotification.decode(b'{"version":1,"entity_type":"topics","entity_name":"foo"}')
    assert v1 == n and (v1.entity_type, v1.entity_name) == ("topics", "foo")
    nested = ConfigChangeNotification("users/alice/clients/c1")
    assert (nested.entity_type, nested.entity_name) == ("users", "alice/clients/c1")
    with pytest.raises(ValueError, match="field 'version' has unsupported value 3"):
        ConfigChangeNotification.decode(b'{"version":3,"entity_path":"topics/foo"}')


def test_cluster_id_version_is_a_string() -> None:
    assert ClusterId("AbCdEfGhIjKlMnOpQrStUv").encode() == b'{"version":"1","id":"AbCdEfGhIjKlMnOpQrStUv"}'
    assert ClusterId.decode(b'{"id":"x","version":"1"}').id == "x"


def test_reassign_and_preferred_election() -> None:
    r = ReassignPartitions({TopicPartition("foo", 0): [1, 2, 3]})
    assert r.encode() == b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2,3]}]}'
    assert ReassignPartitions.decode(b'{"partitions":[{"replicas":[1,2,3],"partition":0,"topic":"foo",'
                                     b'"log_dirs":["any","any","any"]}],"version":1}') == r
    p = PreferredReplicaElection((("foo", 0), ("bar", 1), ("foo", 0)))
    assert p.encode() == b'{"version":1,"partitions":[{"topic":"foo","partition":0},{"topic":"bar","partition":1}]}'
    assert PreferredReplicaElection.decode(p.encode()).partitions == (("foo", 0), ("bar", 1))
    with pytest.raises(ValueError, match=r"Malformed /admin/preferred_replica_election \(partitions\[0\]\): "
                                         "field 'partition' is missing"):
        PreferredReplicaElection.decode(b'{"version":1,"partitions":[{"topic":"foo"}]}')


def test_notifications_and_bookkeeping() -> None:
    assert IsrChangeNotification([("foo", 0)]).encode() == b'{"version":1,"partitions":[{"topic":"foo","partition":0}]}'
    assert LogDirEventNotification(1).encode() == b'{"version":1,"broker":1,"event":1}'
    assert LogDirEventNotification.decode(b'{"event":1,"broker":2,"version":1}') == LogDirEventNotification(2)
    assert ShutdownRequest(4294967301).encode() == b'{"version":1,"broker_epoch":4294967301}'
    assert ShutdownRequest.decode(b'{"broker_epoch":7,"version":1}') == ShutdownRequest(7)
    with pytest.raises(ValueError, match="broker_epoch"):
        ShutdownRequest.decode(b'{"version":1}')
    block = ProducerIdBlock(0, 0, 999)
    assert block.encode() == b'{"version":1,"broker":0,"block_start":"0","block_end":"999"}'
    assert ProducerIdBlock.decode(block.encode()) == block
    feat = FeatureZNodeData({"metadata.version": 7})
    assert feat.encode() == b'{"version":2,"status":1,"features":{"metadata.version":{"max_version_level":7}}}'
    assert FeatureZNodeData.decode(feat.encode()) == feat
    with pytest.raises(ValueError, match="field 'features.f' has invalid levels"):
        FeatureZNodeData.decode(b'{"version":1,"status":1,"features":{"f":{"min_version_level":3,'
                                b'"max_version_level":2}}}')


def test_topic_partition_prints_like_kafka() -> None:
    assert str(TopicPartition("foo", 3)) == "foo-3"
    assert TopicPartition("foo", 3) == ("foo", 3)
