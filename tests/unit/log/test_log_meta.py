"""meta.properties: Kafka's exact file, and the broker/cluster id checks with Kafka's messages."""

import calendar
import os
import time

import pytest

from pylog.log.meta import (
    InconsistentBrokerIdError,
    InconsistentBrokerMetadataError,
    InconsistentClusterIdError,
    check_cluster_id,
    check_version,
    load_broker_metadata,
    read_meta_properties,
    resolve_broker_id,
    write_meta_properties,
)

KAFKA_EXAMPLE = (
    "#\n"
    "#Thu Oct 14 10:00:00 UTC 2021\n"
    "cluster.id=Q3d0tlcKRqmP8CEmlQ1Tyg\n"
    "version=0\n"
    "broker.id=0\n"
)


@pytest.fixture
def utc(monkeypatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_written_file_is_byte_exact_kafka_format(tmp_path, utc):
    when = calendar.timegm((2021, 10, 14, 10, 0, 0))
    write_meta_properties(str(tmp_path), "Q3d0tlcKRqmP8CEmlQ1Tyg", 0, epoch_s=when)
    assert (tmp_path / "meta.properties").read_text() == KAFKA_EXAMPLE
    assert not (tmp_path / "meta.properties.tmp").exists()
    meta = read_meta_properties(str(tmp_path))
    assert (meta.cluster_id, meta.broker_id, meta.version) == ("Q3d0tlcKRqmP8CEmlQ1Tyg", 0, 0)


def test_missing_file_reads_as_none_and_stale_tmp_is_removed(tmp_path):
    (tmp_path / "meta.properties.tmp").write_text("junk")
    assert read_meta_properties(str(tmp_path)) is None
    assert not (tmp_path / "meta.properties.tmp").exists()


def test_copies_must_agree_across_log_dirs(tmp_path):
    a, b, c = (str(tmp_path / n) for n in "abc")
    for d in (a, b, c):
        os.makedirs(d)
    write_meta_properties(a, "C1", 1)
    write_meta_properties(b, "C1", 1)
    meta, offline = load_broker_metadata([a, b, c])  # c has none: fine
    assert meta.broker_id == 1 and offline == []
    write_meta_properties(b, "C1", 2)
    with pytest.raises(InconsistentBrokerMetadataError) as e:
        load_broker_metadata([a, b])
    assert str(e.value) == (
        "BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers shared a log "
        "directory (log.dirs) or partial data was manually copied from another broker. Found:\n"
        f"- {a} -> {{broker.id=1, cluster.id=C1, version=0}}\n"
        f"- {b} -> {{broker.id=2, cluster.id=C1, version=0}}\n"
    )


def test_broker_id_check(tmp_path):
    write_meta_properties(str(tmp_path), "C1", 3)
    meta = read_meta_properties(str(tmp_path))
    assert resolve_broker_id(3, meta) == 3
    assert resolve_broker_id(-1, meta) == 3
    with pytest.raises(InconsistentBrokerIdError) as e:
        resolve_broker_id(1, meta)
    assert str(e.value) == (
        "Configured broker.id 1 doesn't match stored broker.id Some(3) in meta.properties. If you moved your "
        "data, make sure your configured broker.id matches. If you intend to create a new broker, you should "
        "remove all data in your data directories (log.dirs)."
    )
    empty, _ = load_broker_metadata([str(tmp_path / "nowhere")])
    assert resolve_broker_id(-1, empty) is None and resolve_broker_id(5, empty) == 5


def test_cluster_id_check(tmp_path):
    write_meta_properties(str(tmp_path), "OLD", 0)
    meta = read_meta_properties(str(tmp_path))
    check_cluster_id("OLD", meta)
    with pytest.raises(InconsistentClusterIdError) as e:
        check_cluster_id("NEW", meta)
    assert str(e.value) == (
        "The Cluster ID NEW doesn't match stored clusterId Some(OLD) in meta.properties. The broker is trying "
        "to join the wrong cluster. Configured zookeeper.connect may be wrong."
    )


def test_kraft_version_is_refused(tmp_path):
    (tmp_path / "meta.properties").write_text("#\n#x\nnode.id=1\nversion=1\ncluster.id=C\n")
    with pytest.raises(RuntimeError, match="Zk-based brokers only support version 0"):
        check_version(read_meta_properties(str(tmp_path)))
