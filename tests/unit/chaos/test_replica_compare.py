"""The chaos verifier's replica comparison (every mode): the ISR's segment files, batch for batch, below the HW."""

from types import SimpleNamespace

from pylog.chaos.verify import PartitionCheck, compare_isr, divergences
from pylog.protocol.records import build_batch
from pylog.zk.codecs import TopicPartition


def _segment(d, epochs):
    """A partition dir holding one record per batch at offsets 0.., each batch at the given leader epoch."""
    d.mkdir(parents=True)
    (d / "00000000000000000000.log").write_bytes(b"".join(
        build_batch([(None, b"v%d" % i, (), 1000 + i)], base_offset=i, leader_epoch=e) for i, e in enumerate(epochs)))


class Zk:
    def __init__(self, isr):
        self.isr = isr

    def get_partition_states(self, tps):
        return {TopicPartition(t, p): SimpleNamespace(isr=self.isr[p]) for t, p in tps}


def _cluster(tmp_path, n):
    return SimpleNamespace(brokers={b: SimpleNamespace(data_dir=tmp_path / f"b{b}") for b in range(n)})


def test_identical_below_the_high_watermark_passes_and_a_longer_follower_is_fine(tmp_path):
    for b, epochs in enumerate([[0, 0, 1], [0, 0, 1, 1]]):
        _segment(tmp_path / f"b{b}" / "logs" / "t-0", epochs)
    checks = {0: PartitionCheck(0, high_watermark=3)}
    compare_isr(_cluster(tmp_path, 2), Zk({0: [0, 1]}), "t", checks, settle_s=0)
    assert (checks[0].replicas, checks[0].batches, checks[0].divergence) == ([0, 1], 3, "")
    assert divergences("t", checks) == []


def test_a_replica_that_differs_is_named(tmp_path):
    for b, epochs in enumerate([[0, 0, 1], [0, 1, 1]]):
        _segment(tmp_path / f"b{b}" / "logs" / "t-0", epochs)
    checks = {0: PartitionCheck(0, high_watermark=3)}
    compare_isr(_cluster(tmp_path, 2), Zk({0: [0, 1]}), "t", checks, settle_s=0)
    (finding,) = divergences("t", checks)
    assert finding.startswith("replicas-diverged: t-0: broker 1 differs from broker 0 at batch 1: offsets 1-1 epoch 1")


def test_no_isr_is_a_divergence(tmp_path):
    checks = {0: PartitionCheck(0, high_watermark=3)}
    compare_isr(_cluster(tmp_path, 1), Zk({0: []}), "t", checks, settle_s=0)
    assert divergences("t", checks) == ["replicas-diverged: t-0: no partition state or an empty ISR in ZooKeeper"]
