"""Znode paths are Kafka's (ZkData.scala)."""

from __future__ import annotations

import pytest

from pylog.zk import paths
from pylog.zk.uuids import METADATA_TOPIC_ID, ZERO_UUID, base64_to_uuid, is_valid_uuid, random_uuid, uuid_to_base64


def test_paths() -> None:
    assert paths.broker_id(1) == "/brokers/ids/1"
    assert paths.topic("foo") == "/brokers/topics/foo"
    assert paths.topic_partitions("foo") == "/brokers/topics/foo/partitions"
    assert paths.partition_state("foo", 2) == "/brokers/topics/foo/partitions/2/state"
    assert (paths.controller(), paths.controller_epoch()) == ("/controller", "/controller_epoch")
    assert paths.config_entity("topics", "foo") == "/config/topics/foo"
    assert paths.config_entity("brokers", paths.DEFAULT_ENTITY) == "/config/brokers/<default>"
    assert paths.config_entity("users", "alice/clients/c1") == "/config/users/alice/clients/c1"
    assert paths.config_change_prefix() == "/config/changes/config_change_"
    assert paths.cluster_id() == "/cluster/id"
    assert paths.delete_topic("foo") == "/admin/delete_topics/foo"
    assert paths.reassign_partitions() == "/admin/reassign_partitions"
    assert paths.preferred_replica_election() == "/admin/preferred_replica_election"
    assert paths.shutdown_broker(3) == "/admin/shutdown_brokers/3"  # pylog's, not Kafka's
    assert paths.isr_change_prefix() == "/isr_change_notification/isr_change_"
    assert paths.isr_change_notification("0000000003") == "/isr_change_notification/isr_change_0000000003"
    assert paths.log_dir_event_prefix() == "/log_dir_event_notification/log_dir_event_"
    assert paths.broker_seqid() == "/brokers/seqid"
    assert paths.latest_producer_id_block() == "/latest_producer_id_block"
    assert paths.feature() == "/feature"
    assert paths.sequence_number("config_change_0000000007") == 7


def test_persistent_paths_exactly_kafkas() -> None:
    assert paths.PERSISTENT_PATHS == (
        "/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
        "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification",
        "/config/topics", "/config/clients", "/config/users", "/config/brokers", "/config/ips")


@pytest.mark.parametrize("bad", ["", "a/b", ".", ".."])
def test_names_cannot_escape_their_znode(bad: str) -> None:
    with pytest.raises(ValueError, match="Invalid topic name"):
        paths.topic(bad)


def test_bad_ids() -> None:
    with pytest.raises(ValueError):
        paths.broker_id(-1)
    with pytest.raises(ValueError):
        paths.partition_state("t", True)  # type: ignore[arg-type]


def test_uuids() -> None:
    ids = {random_uuid() for _ in range(200)}
    assert len(ids) == 200
    for u in ids:
        assert len(u) == 22 and is_valid_uuid(u) and not u.startswith("-") and "=" not in u
        assert uuid_to_base64(base64_to_uuid(u)) == u
    assert base64_to_uuid(ZERO_UUID) == bytes(16)
    assert base64_to_uuid(METADATA_TOPIC_ID) == bytes(15) + b"\x01"
    assert not is_valid_uuid("pC-Mn-Q4TV2l0TtBmqcSK=")


def test_prefixes_lists_ancestors_parents_first():
    from pylog.zk.paths import prefixes
    assert prefixes("/config/users/alice") == ["/config", "/config/users", "/config/users/alice"]
    assert prefixes("/pylog/") == ["/pylog"] and prefixes("/") == []
