"""Fetch and ListOffsets under read_committed: the LSO bounds what consumers see, aborted ranges are listed."""

import asyncio
from types import SimpleNamespace

from pylog.broker.handlers.fetch import _read_all
from pylog.broker.handlers.list_offsets import handle_list_offsets
from pylog.log.control import ControlType, Marker, build_marker
from pylog.protocol import api
from pylog.protocol.errors import ErrorCode
from pylog.protocol.records import build_batch, validate_batches


def _append(plog, raw):
    buf = bytearray(raw)
    plog.append_as_leader(buf, validate_batches(buf), 0)


def _ctx(plog, version=11):
    part = SimpleNamespace(log=plog, high_watermark=plog.log_end_offset)
    rm = SimpleNamespace(leader_partition=lambda t, i, e=-1, leader_only=True: (part, ErrorCode.NONE))
    plog.high_watermark = plog.log_end_offset
    broker = SimpleNamespace(replicas=rm, stats=SimpleNamespace(record_out=lambda p, n: None))
    return SimpleNamespace(broker=broker, header=SimpleNamespace(api_version=version))


def _fetch(ctx, isolation):
    part = SimpleNamespace(partition=0, fetch_offset=0, partition_max_bytes=1 << 20, current_leader_epoch=-1)
    req = SimpleNamespace(max_bytes=1 << 20, isolation_level=isolation, replica_id=-1,
                          topics=[SimpleNamespace(topic="t", partitions=[part])])
    topics, _, _ = _read_all(ctx, req, [(t.topic, None, t) for t in req.topics], -1, first_pass=True)
    return topics[0][1][0]


def _txn(pid):
    return build_batch([(None, b"v", (), 0)], producer_id=pid, producer_epoch=0, base_sequence=0,
                       is_transactional=True)


def test_read_committed_stops_at_the_lso_and_lists_aborts(make_log):
    plog = make_log()
    _append(plog, _txn(1))                                          # 0: aborted below
    _append(plog, build_marker(Marker(1, 0, ControlType.ABORT, 0)))  # 1
    _append(plog, _txn(2))                                          # 2: still open
    _append(plog, build_batch([(None, b"plain", (), 0)]))           # 3
    ctx = _ctx(plog)
    committed = _fetch(ctx, 1)
    assert (committed.high_watermark, committed.last_stable_offset) == (4, 2)
    assert committed.aborted_transactions == [(1, 0)]
    assert committed.records_size < _fetch(ctx, 0).records_size
    uncommitted = _fetch(ctx, 0)
    assert uncommitted.aborted_transactions is None and uncommitted.last_stable_offset == 2

    async def latest(isolation):
        cls = api.request_class(2)[5]
        req = cls(replica_id=-1, isolation_level=isolation, topics=[cls.ListOffsetsTopic(name="t", partitions=[
            cls.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1, current_leader_epoch=-1)])])
        return (await handle_list_offsets(ctx, req)).topics[0].partitions[0].offset
    ctx.header.api_version = 5
    assert asyncio.run(latest(1)) == 2 and asyncio.run(latest(0)) == 4
    plog.close()


def test_read_committed_at_the_lso_gets_an_empty_list(make_log):
    plog = make_log()
    _append(plog, _txn(3))
    ctx = _ctx(plog)
    data = _fetch(ctx, 1)
    assert (data.last_stable_offset, data.records, data.aborted_transactions) == (0, [], [])
    plog.close()
