"""Checkpoint files: Kafka's text format byte for byte, its reader errors, atomic writes."""

import os

import pytest

from pylog.log import CheckpointError, EpochEntry, LeaderEpochCheckpoint, OffsetCheckpoint, PartitionMetadataFile


def read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def test_offset_checkpoint_matches_kafka_formats_example(tmp_path):
    path = str(tmp_path / "replication-offset-checkpoint")
    OffsetCheckpoint(path).write({("foo", 0): 1523, ("__consumer_offsets", 12): 0})
    # kafka-formats.md's example has the same lines; we sort entries for stable files
    assert read(path) == b"0\n2\n__consumer_offsets 12 0\nfoo 0 1523\n"
    assert OffsetCheckpoint(path).read() == {("foo", 0): 1523, ("__consumer_offsets", 12): 0}
    assert not os.path.exists(path + ".tmp")


def test_offset_checkpoint_reads_kafka_written_file(tmp_path):
    path = tmp_path / "recovery-point-offset-checkpoint"
    path.write_bytes(b"0\n2\nfoo 0 1523\n__consumer_offsets 12 0\n")
    assert OffsetCheckpoint(str(path)).read() == {("foo", 0): 1523, ("__consumer_offsets", 12): 0}


def test_leader_epoch_checkpoint_matches_kafka_formats_example(tmp_path):
    path = str(tmp_path / "leader-epoch-checkpoint")
    LeaderEpochCheckpoint(path).write([EpochEntry(0, 0), EpochEntry(2, 1500)])
    assert read(path) == b"0\n2\n0 0\n2 1500\n"
    assert LeaderEpochCheckpoint(path).read() == [(0, 0), (2, 1500)]


def test_missing_file_is_created_and_empty_means_no_entries(tmp_path):
    path = tmp_path / "log-start-offset-checkpoint"
    assert OffsetCheckpoint(str(path)).read() == {}
    assert path.exists() and path.read_bytes() == b""


@pytest.mark.parametrize("content, message", [
    (b"1\n0\n", "Unrecognised version:1, expected version: 0 in checkpoint file at: {path}"),
    (b"0\n3\nfoo 0 1\n", "Expected [3] entries in checkpoint file [{path}], but found only [1]"),
    (b"0\n1\nfoo 0\n", "Malformed line in checkpoint file [{path}]: foo 0"),
    (b"0\n1\nfoo x 1\n", "Malformed line in checkpoint file [{path}]: foo x 1"),
    (b"zero\n", "Malformed line in checkpoint file [{path}]: zero"),
])
def test_reader_errors_use_kafkas_messages(tmp_path, content, message):
    path = tmp_path / "replication-offset-checkpoint"
    path.write_bytes(content)
    with pytest.raises(CheckpointError) as e:
        OffsetCheckpoint(str(path)).read()
    assert str(e.value) == message.format(path=str(path))


def test_write_replaces_atomically_leaving_old_file_on_failure(tmp_path, monkeypatch):
    path = str(tmp_path / "replication-offset-checkpoint")
    cp = OffsetCheckpoint(path)
    cp.write({("a", 0): 1})

    def boom(fd):
        raise OSError("disk gone")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        cp.write({("a", 0): 2})
    assert cp.read() == {("a", 0): 1}  # the old file is untouched until the rename


def test_partition_metadata(tmp_path):
    path = str(tmp_path / "partition.metadata")
    f = PartitionMetadataFile(path)
    f.write("Q3d0tlcKRqmP8CEmlQ1Tyg")
    assert read(path) == b"version: 0\ntopic_id: Q3d0tlcKRqmP8CEmlQ1Tyg"
    assert f.read() == "Q3d0tlcKRqmP8CEmlQ1Tyg"
    (tmp_path / "partition.metadata").write_bytes(b"version: 1\ntopic_id: x")
    with pytest.raises(CheckpointError, match="Unrecognized version of partition metadata file"):
        f.read()
    (tmp_path / "partition.metadata").write_bytes(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(CheckpointError, match="Invalid topic ID"):
        f.read()
