"""The broker's OffsetsLog seam: a leadership is identified by the epoch it began at, so a leader-epoch bump
without a change of leader (a follower died) keeps the coordinator's loaded state."""

from types import SimpleNamespace

from pylog.broker.group_host import GroupHost
from pylog.common.config import BrokerConfig
from support.fake_replicas import Replicas


def host() -> tuple[GroupHost, Replicas, list[int]]:
    replicas = Replicas("__consumer_offsets")
    h = GroupHost(BrokerConfig.from_props({"zookeeper.connect": "x:1"}), SimpleNamespace(topics={}), replicas,
                  None, None)
    seen: list[int] = []
    h.coordinator.on_leadership_change = seen.append  # the coordinator's reaction is tested on its own
    h.start()
    return h, replicas, seen


def test_leadership_terms():
    h, replicas, seen = host()
    assert h.leader_epoch(0) is None
    replicas.set(0, True, 3, notify=True)
    assert (h.leader_epoch(0), seen) == (3, [0])
    replicas.set(0, True, 4, notify=False)  # ISR change by the controller: same leader, new epoch
    assert h.leader_epoch(0) == 3
    replicas.set(0, False, 5, notify=True)
    assert h.leader_epoch(0) is None
    replicas.set(0, True, 6, notify=True)
    assert h.leader_epoch(0) == 6
    replicas.partitions[("__consumer_offsets", 0)].fenced = True  # ZooKeeper refused our ISR write
    assert h.leader_epoch(0) is None


def test_partition_count_is_the_topic_s_once_it_exists():
    h, _, _ = host()
    assert h.num_partitions() == 50
    h.metadata.topics["__consumer_offsets"] = {0: None, 1: None, 2: None}
    assert h.num_partitions() == 3


def test_commits_arriving_while_a_batch_waits_for_the_isr_go_out_together_in_order():
    import asyncio

    from pylog.broker.delayed_produce import AppendOutcome
    from pylog.broker.replica_manager import ReplicaManager
    from pylog.protocol import records
    from pylog.protocol.errors import ErrorCode

    async def go():
        loop = asyncio.get_running_loop()
        batches: list[list[bytes]] = []
        waiters: list[asyncio.Future] = []
        part = SimpleNamespace(add_produce_waiter=lambda offset: waiters.append(loop.create_future()) or waiters[-1],
                               check_enough_replicas=lambda offset: None)  # followers to wait for

        def append(p, buf, acks, from_coordinator=False, headers=None):
            assert from_coordinator  # our own keyed records
            assert headers == records.validate_batches(buf)  # built here: the headers are the batch's own
            keys = [r.key for h in records.iter_batches(bytes(buf))
                    for r in records.read_records(memoryview(bytes(buf))[h.position:h.position + h.size])]
            batches.append(keys)
            return AppendOutcome(ErrorCode.NONE, base_offset=sum(map(len, batches)) - len(batches[-1]),
                                 last_offset=sum(map(len, batches)) - 1)

        h, replicas, _ = host()
        replicas.leader_partition = lambda topic, index: (part, ErrorCode.NONE)
        replicas.append = append
        # the real acks=all bookkeeping over the stand-in's append
        replicas.append_records = lambda *args, **kw: ReplicaManager.append_records(replicas, *args, **kw)
        h.spawn = loop.create_task
        first = loop.create_task(h.append(0, [(b"a", b"1")]))
        await asyncio.sleep(0)
        rest = [loop.create_task(h.append(0, [(k, b"v")])) for k in (b"b", b"c", b"d")]
        await asyncio.sleep(0)
        assert batches == [[b"a"]]  # b, c and d wait for a's batch to be acknowledged
        waiters[0].set_result(ErrorCode.NONE)
        assert await first == ErrorCode.NONE
        await asyncio.sleep(0)
        assert batches == [[b"a"], [b"b", b"c", b"d"]] and not any(t.done() for t in rest)
        waiters[1].set_result(ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
        assert await asyncio.gather(*rest) == [ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND] * 3
        assert h._pending == {}
        def no_waiting(offset):
            raise AssertionError("an append that acks=all already covers needs no waiter")
        # a single-replica ISR: acknowledged on append
        done = SimpleNamespace(add_produce_waiter=no_waiting, check_enough_replicas=lambda offset: ErrorCode.NONE)
        replicas.leader_partition = lambda topic, index: (done, ErrorCode.NONE)
        assert await h.append(0, [(b"e", b"v")]) == ErrorCode.NONE and batches[-1] == [b"e"]
    asyncio.run(asyncio.wait_for(go(), 5))


def test_the_loader_sees_transactional_commits_with_their_producer_and_markers_as_entries():
    from pylog.broker.group_host import _stored
    from pylog.coordinator.group.store import StoredRecord
    from pylog.log.control import ControlType, Marker, build_marker
    from pylog.protocol.records import build_batch, parse_header

    def batch(raw: bytes):
        return parse_header(raw), memoryview(raw)

    txn = build_batch([(b"k1", b"v1", (), 1), (b"k2", None, (), 1)], 10, producer_id=7, producer_epoch=2,
                      is_transactional=True)
    assert _stored(*batch(txn), 10) == [StoredRecord(b"k1", b"v1", 10, 7, True),
                                            StoredRecord(b"k2", None, 10, 7, True)]
    assert _stored(*batch(txn), 11) == [StoredRecord(b"k2", None, 10, 7, True)]  # from a later offset on
    plain = build_batch([(b"k", b"v", (), 1)], 3)
    assert _stored(*batch(plain), 0) == [StoredRecord(b"k", b"v", 3, -1, False)]
    for kind, commit in ((ControlType.COMMIT, True), (ControlType.ABORT, False)):
        marker = build_marker(Marker(7, 2, kind, 0), base_offset=12)
        assert _stored(*batch(marker), 0) == [StoredRecord(None, None, 12, 7, True, commit)]
