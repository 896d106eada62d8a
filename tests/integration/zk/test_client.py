"""ZkClient basics against real ZooKeeper: chroot, reads/writes, get_many, multi, watches."""

from __future__ import annotations

import queue
import time

import pytest

from pylog.zk import errors, paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import PartitionState, TopicPartition
from pylog.zk.core import parse_connect_string
from pylog.zk.ops import CheckOp, CreateOp, DeleteOp, SetDataOp
from pylog.zk.server import ZooKeeperProcess
from pylog.zk.testing import unique_chroot, wait_until

pytestmark = pytest.mark.integration


def test_connect_string_parsing() -> None:
    assert parse_connect_string("h1:1,h2:2/kafka/a") == ("h1:1,h2:2", "/kafka/a")
    assert parse_connect_string("h1:1") == ("h1:1", None)
    assert parse_connect_string("h1:1/") == ("h1:1", None)
    with pytest.raises(ValueError):
        parse_connect_string("/kafka")


def test_chroot_is_created_like_kafka(zk_server: ZooKeeperProcess, _zk_root: ZkClient) -> None:
    chroot = unique_chroot("nested") + "/kafka"
    with ZkClient(zk_server.connect_string + chroot, session_timeout_ms=6000) as zk:
        zk.create_top_level_paths()
        assert _zk_root.exists(chroot + "/brokers/ids") is not None
        assert sorted(zk.get_children("/")) == sorted({p.split("/")[1] for p in paths.PERSISTENT_PATHS})
    _zk_root.delete_recursive(chroot.rsplit("/", 1)[0])


def test_connect_timeout_is_bounded() -> None:
    started = time.monotonic()
    with pytest.raises(errors.ZkTimeoutError, match="Timed out after 1s connecting to ZooKeeper"):
        ZkClient("127.0.0.1:1", session_timeout_ms=6000, connection_timeout_ms=1000).start()
    assert time.monotonic() - started < 10


def test_basic_operations_and_errors(zk: ZkClient) -> None:
    path, stat = zk.create("/a/b", b"x", make_parents=True)
    assert path == "/a/b" and stat.version == 0
    assert zk.get("/a/b")[0] == b"x"
    assert zk.set("/a/b", b"y", version=0).version == 1
    with pytest.raises(errors.BadVersionError) as bad:
        zk.set("/a/b", b"z", version=0)
    assert "/a/b" in str(bad.value)
    with pytest.raises(errors.NodeExistsError):
        zk.create("/a/b")
    with pytest.raises(errors.NotEmptyError):
        zk.delete("/a")
    with pytest.raises(errors.NoNodeError):
        zk.get("/missing")
    assert zk.get_or_none("/missing") is None and zk.exists("/missing") is None
    seq_path, _ = zk.create("/a/n_", b"", sequence=True)
    assert paths.sequence_number(seq_path.rsplit("/", 1)[1]) >= 0
    assert zk.delete_recursive("/a") is True and zk.delete_recursive("/a") is False


def test_multi_reports_the_failing_op(zk: ZkClient) -> None:
    zk.create("/m", b"0")
    results = zk.multi([SetDataOp("/m", b"1", 0), CreateOp("/m/c", b"c"), CheckOp("/m", 1)])
    assert results[0].version == 1 and results[1] == "/m/c" and results[2] is True
    with pytest.raises(errors.BadVersionError) as err:
        zk.multi([CreateOp("/m/d"), SetDataOp("/m", b"2", 0), DeleteOp("/m/c")])
    assert err.value.op_index == 1  # type: ignore[attr-defined]
    assert zk.exists("/m/d") is None and zk.exists("/m/c") is not None  # atomic: nothing applied


@pytest.mark.parametrize("multi_read", [True, False])
def test_get_many_matches_single_reads(zk_connect: str, multi_read: bool) -> None:
    with ZkClient(zk_connect, session_timeout_ms=6000, multi_read=multi_read) as zk:
        zk.multi_many({i: [CreateOp(f"/n{i}", str(i).encode())] for i in range(2500)})
        wanted = [f"/n{i}" for i in range(2500)] + ["/nope", "/n7"]
        got = zk.get_many(wanted)
        assert list(got) == wanted[:-1]  # input order, duplicates once
        assert got["/nope"] is None
        assert all(got[f"/n{i}"][0] == str(i).encode() for i in range(2500))  # type: ignore[index]
        children = zk.get_children_many(["/", "/n1", "/nope"])
        assert sorted(children["/"]) == sorted(zk.get_children("/")) and len(children["/"]) == 2500  # type: ignore
        assert children["/n1"] == [] and children["/nope"] is None


def test_get_many_10k_partition_states_timing(zk: ZkClient) -> None:
    """Measures the bulk read the controller does at failover; prints the figure (no timing assert)."""
    topics, per_topic = 100, 100
    state = PartitionState(leader=1, leader_epoch=0, isr=[1, 2, 3], controller_epoch=1)
    zk.create_top_level_paths()
    states = {TopicPartition(f"t{t}", p): state for t in range(topics) for p in range(per_topic)}
    zk.multi_many({t: [CreateOp(paths.topic(f"t{t}"))] for t in range(topics)})
    created = zk.create_partition_states(states, None)
    assert all(isinstance(v, PartitionState) for v in created.values())

    started = time.perf_counter()
    raw = zk.get_many(paths.partition_state(t, p) for t, p in states)
    multi_read_s = time.perf_counter() - started
    started = time.perf_counter()
    decoded = zk.get_partition_states(states)
    decoded_s = time.perf_counter() - started
    zk.multi_read = False
    started = time.perf_counter()
    raw_async = zk.get_many(paths.partition_state(t, p) for t, p in states)
    async_s = time.perf_counter() - started
    print(f"\nget_many of {len(states)} partition states: {multi_read_s:.3f}s (multiRead batches), "
          f"{decoded_s:.3f}s decoded to PartitionState, {async_s:.3f}s (one get_async per znode)")
    assert len(raw) == len(states) == len(raw_async) and all(v is not None for v in raw.values())
    assert decoded[TopicPartition("t99", 99)] == state


def test_children_and_data_watches(zk: ZkClient) -> None:
    seen: queue.Queue = queue.Queue()
    zk.create_top_level_paths()
    handle = zk.watch_children(paths.broker_ids(), lambda ids: seen.put(("children", tuple(ids))))
    zk.watch_data("/watched", lambda data, stat: seen.put(("data", data)))
    assert seen.get(timeout=5) == ("children", ())
    assert seen.get(timeout=5) == ("data", None)
    zk.create(paths.broker_ids() + "/1", b"{}", ephemeral=True)
    zk.create("/watched", b"v1")
    got = {seen.get(timeout=5), seen.get(timeout=5)}
    assert got == {("children", ("1",)), ("data", b"v1")}
    zk.delete("/watched")
    assert seen.get(timeout=5) == ("data", None)
    handle.cancel()
    zk.create(paths.broker_ids() + "/2", b"{}", ephemeral=True)
    # Proof of absence without a sleep: kazoo runs watch callbacks one at a time in the order
    # ZooKeeper sent the events, so once this later data event arrives, a children event for /2
    # would already be in the queue ahead of it.
    zk.create("/watched", b"v2")
    assert seen.get(timeout=5) == ("data", b"v2")
    assert seen.empty()


def test_kafka_watch_helpers_decode(zk: ZkClient) -> None:
    seen: queue.Queue = queue.Queue()
    zk.create_top_level_paths()
    zk.watch_broker_ids(lambda ids: seen.put(ids))
    zk.watch_controller(lambda info: seen.put(info))
    assert seen.get(timeout=5) == [] and seen.get(timeout=5) is None
    zk.create(paths.broker_id(10), b"{}", ephemeral=True)
    zk.create(paths.broker_id(9), b"{}", ephemeral=True)
    wait_until(lambda: seen.get(timeout=5) == [9, 10], 10, "broker ids [9, 10]")
    assert zk.try_elect_controller(9) is not None
    info = seen.get(timeout=5)
    assert info.broker_id == 9


def test_start_is_idempotent_and_close_is_prompt(zk_connect: str) -> None:
    client = ZkClient(zk_connect, session_timeout_ms=6000)
    with client.start() as again:  # start() then __enter__: one session, one event thread
        assert again is client and client.connected
    started = time.monotonic()
    client.close()  # second close is a no-op
    assert time.monotonic() - started < 1
    with pytest.raises(errors.ClientClosedError):
        client.start()
