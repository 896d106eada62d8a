"""The Produce handler on a real leader replica: acks=-1 appends at once and answers later (a Later)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from pylog.broker.quotas import ClientQuotas
from pylog.broker.handlers import Later
from pylog.broker.handlers.produce import handle_produce
from pylog.broker.partition import Partition
from pylog.log import LogConfig
from pylog.broker.replica_manager import ReplicaManager
from pylog.broker.server import RequestContext
from pylog.broker.stats import PartitionStats
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class
from pylog.protocol.codec import decode_response, encode_request, parse_request_header
from pylog.protocol.errors import ErrorCode
from pylog.protocol.produce import decode_produce_request

VERSION = 9


def leader_broker(make_log, isr=(1, 2), min_isr=1, name="t"):
    """A broker stand-in around a real ReplicaManager whose only partition, t-0, broker 1 leads."""
    broker = SimpleNamespace(broker_id=1, config=None, stats=PartitionStats(), metadata=None, quotas=ClientQuotas())
    broker.replicas = ReplicaManager(1, None, None, None, None, None, None, None, None)
    p = Partition("t", 0, 1, make_log(name))
    p.apply_state(1, 0, list(isr), [1, 2], 0, 1, [], [])
    p.log.update_config(LogConfig(min_insync_replicas=min_isr))
    p.make_leader(0)
    broker.replicas.partitions[("t", 0)] = p
    return broker, p


async def produce(broker, value: bytes, acks: int = -1, timeout_ms: int = 5000, corr: int = 1):
    """Handle one Produce request as the server would: (its header, what the handler returned)."""
    cls = request_class(ApiKey.Produce)[VERSION]
    msg = cls(transactional_id=None, acks=acks, timeout_ms=timeout_ms, topic_data=[cls.TopicProduceData(
        name="t", partition_data=[cls.TopicProduceData.PartitionProduceData(
            index=0, records=records.build_batch([(None, value, (), None)]))])])
    frame = bytearray(encode_request(msg, VERSION, corr, "unit")[4:])
    header = parse_request_header(frame)
    return await handle_produce(RequestContext(broker, header, "unit"), decode_produce_request(header, frame))


def outcome(out: bytes) -> tuple[int, int, int]:
    """(correlation id, error code, base offset) of an encoded Produce response."""
    corr, resp = decode_response(ApiKey.Produce, VERSION, out[4:])
    p = resp.responses[0].partition_responses[0]
    return corr, p.error_code, p.base_offset


def test_acks_all_appends_at_once_and_answers_once_the_follower_has_the_records(make_log):
    async def run():
        broker, p = leader_broker(make_log)
        first = await produce(broker, b"a", corr=1)
        second = await produce(broker, b"b", corr=2)
        assert isinstance(first, Later) and isinstance(second, Later)
        assert p.log.log_end_offset == 2  # both appended, in arrival order, before either answer
        done1, done2 = asyncio.ensure_future(first.finish()), asyncio.ensure_future(second.finish())
        await asyncio.sleep(0.01)
        assert not done1.done() and not done2.done()
        p.update_follower(2, 1, now_ms=1)  # the follower has offset 0: only the first is committed
        assert outcome(await done1) == (1, ErrorCode.NONE, 0)
        await asyncio.sleep(0.01)
        assert not done2.done()
        p.update_follower(2, 2, now_ms=2)
        assert outcome(await done2) == (2, ErrorCode.NONE, 1)
    asyncio.run(run())


def test_leadership_lost_or_isr_below_min_while_waiting(make_log):
    async def run():
        broker, p = leader_broker(make_log, min_isr=2)
        shrunk = await produce(broker, b"a", corr=1)
        p.isr = [1]  # the ISR shrank below min.insync.replicas after the append
        p.maybe_increment_high_watermark()
        assert outcome(await shrunk.finish()) == (1, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND, -1)
        broker2, p2 = leader_broker(make_log, name="t2")
        orphan = await produce(broker2, b"b", corr=2)
        p2.make_follower()
        assert outcome(await orphan.finish()) == (2, ErrorCode.NOT_LEADER_OR_FOLLOWER, -1)
    asyncio.run(run())


def test_timeout_counts_from_the_request_not_from_when_the_answer_is_awaited(make_log):
    async def run():
        broker, p = leader_broker(make_log)
        short = await produce(broker, b"a", timeout_ms=100, corr=1)
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        assert outcome(await short.finish()) == (1, ErrorCode.REQUEST_TIMED_OUT, -1)
        assert loop.time() - t0 >= 0.09
        late = await produce(broker, b"b", timeout_ms=50, corr=2)
        await asyncio.sleep(0.1)  # (as if queued behind a slower response)
        t0 = loop.time()
        assert outcome(await late.finish()) == (2, ErrorCode.REQUEST_TIMED_OUT, -1)
        assert loop.time() - t0 < 0.05
        assert p.log.log_end_offset == 2  # timed out is not undone
    asyncio.run(run())


def test_acks_1_acks_0_and_a_lone_in_sync_leader_answer_at_once(make_log):
    async def run():
        broker, p = leader_broker(make_log)
        assert outcome(await produce(broker, b"a", acks=1, corr=1)) == (1, ErrorCode.NONE, 0)
        assert await produce(broker, b"b", acks=0, corr=2) is None
        alone, _ = leader_broker(make_log, isr=(1,), name="t2")
        assert outcome(await produce(alone, b"c", acks=-1, corr=3)) == (3, ErrorCode.NONE, 0)
        assert p.log.log_end_offset == 2
    asyncio.run(run())
