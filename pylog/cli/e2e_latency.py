"""pylog-e2e-latency: kafka-e2e-latency.sh (EndToEndLatency) on librdkafka.

`pylog-e2e-latency.sh broker_list topic num_messages producer_acks message_size_bytes [properties_file]`:
sends one record at a time (linger 0, acks 1 or all), waits for its acknowledgement, then polls a consumer
positioned at the end of every partition for that same record; the time from send to receipt is one
sample. Prints Kafka's progress line every 1000 records, then `Avg latency` and `Percentiles`. Both
clients are confluent-kafka (librdkafka): the figures are the cluster's round trip plus a C client's.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import click

from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.cli.perf_common import jfloat
from pylog.common import properties

POLL_TIMEOUT_S = 60.0
USAGE = ("USAGE: java org.apache.kafka.tools.EndToEndLatency broker_list topic num_messages producer_acks "
         "message_size_bytes [optional] properties_file")


class JavaRandom:
    """java.util.Random, so the payloads are the ones Kafka's tool sends (Random(0))."""

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ 0x5DEECE66D) & ((1 << 48) - 1)

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        value = self.seed >> (48 - bits)
        return value - (1 << bits) if value >= 1 << (bits - 1) and bits == 32 else value

    def next_int(self, bound: int) -> int:
        """Random.nextInt(bound) for a bound that is not a power of two."""
        while True:
            u = self._next(31)
            r = u % bound
            if u - r + (bound - 1) < (1 << 31):
                return r


class E2eError(Exception):
    """A failed round trip, with Kafka's text."""


def _configs(brokers: str, acks: str, props_file: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
    base: dict[str, Any] = dict(properties.load(props_file)) if props_file else {}
    base["bootstrap.servers"] = brokers
    consumer = librdkafka_config({**base, "group.id": f"test-group-{int(time.time() * 1000)}",
                                  "enable.auto.commit": "false", "auto.offset.reset": "latest",
                                  "fetch.max.wait.ms": "0"})
    producer = librdkafka_config({**base, "linger.ms": "0", "acks": acks})
    return producer, consumer


def _create_topic(brokers: str, topic: str) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    click.echo(f'Topic "{topic}" does not exist. Will create topic with 1 partition(s) and replication factor = 1')
    admin = AdminClient({"bootstrap.servers": brokers})  # kept alive until the future is done
    future = admin.create_topics([NewTopic(topic, 1, 1)])[topic]
    try:
        future.result(30)
    except Exception:
        click.echo(f"Creation of topic {topic} failed")
        raise


def _round_trip(producer: Any, consumer: Any, topic: str, message: bytes) -> float:
    begin = time.perf_counter_ns()
    failure: list[Any] = []
    producer.produce(topic, message, on_delivery=lambda err, _m: failure.append(err) if err else None)
    producer.flush()
    if failure:
        raise E2eError(f"org.apache.kafka.common.KafkaException: {failure[0].str()}")
    first = consumer.poll(POLL_TIMEOUT_S)
    elapsed = time.perf_counter_ns() - begin
    if first is None:
        _commit_quietly(consumer)
        raise E2eError(f"poll() timed out before finding a result (timeout:[{int(POLL_TIMEOUT_S * 1000)}])")
    if first.error() is not None:
        raise E2eError(first.error().str())
    more = consumer.consume(100, 0)
    read, sent = first.value().decode("utf-8", "replace"), message.decode("utf-8", "replace")
    if read != sent:
        raise E2eError(f"The message read [{read}] did not match the message sent [{sent}]")
    if more:
        raise E2eError(f"Only one result was expected during this test. We found [{1 + len(more)}]")
    return float(elapsed)


def _led_topic(consumer: Any, topic: str, timeout_s: float = 30.0) -> Any:
    """Metadata showing every partition of the topic with a leader (a new topic's first answers may not)."""
    deadline = time.monotonic() + timeout_s
    while True:
        meta = consumer.list_topics(topic, timeout=10)
        t = meta.topics.get(topic)
        if t is not None and t.error is None and t.partitions and all(p.leader >= 0 for p in t.partitions.values()):
            return meta
        if time.monotonic() > deadline:
            raise E2eError(f"Topic {topic} has no leader for every partition after {timeout_s:.0f} s")
        time.sleep(0.2)


def _end_offset(consumer: Any, tp: Any, timeout_s: float = 30.0) -> int:
    """The partition's log end offset, waiting (bounded) for a new topic's leader to answer."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            end = consumer.get_watermark_offsets(tp, timeout=5)[1]
            if end >= 0:
                return end
        except KafkaException:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise E2eError(f"No end offset for {tp.topic}-{tp.partition} within {timeout_s:.0f} s")
        time.sleep(0.2)


def _commit_quietly(consumer: Any) -> None:
    """Kafka commits before giving up; nothing consumed means nothing to commit, which is no error."""
    try:
        consumer.commit(asynchronous=False)
    except Exception:
        pass


def run(brokers: str, topic: str, num: int, acks: str, size: int, props_file: str | None) -> None:
    """EndToEndLatency.execute."""
    from confluent_kafka import Consumer, Producer, TopicPartition

    if acks not in ("1", "all"):
        raise E2eError("Latency testing requires synchronous acknowledgement. Please use 1 or all")
    producer_cfg, consumer_cfg = _configs(brokers, acks, props_file)
    consumer = make_client(Consumer, consumer_cfg)
    producer = make_client(Producer, producer_cfg)
    try:
        meta = consumer.list_topics(timeout=30)
        if topic not in meta.topics or meta.topics[topic].error is not None:
            _create_topic(brokers, topic)
        meta = _led_topic(consumer, topic)
        # Kafka's seekToEnd + position(): the end offsets are looked up now, before the first send, so the
        # consumer cannot start after the record it waits for.
        ends = [_end_offset(consumer, TopicPartition(topic, p)) for p in sorted(meta.topics[topic].partitions)]
        consumer.assign([TopicPartition(topic, p, end) for p, end in zip(sorted(meta.topics[topic].partitions), ends)])
        rng, total, latencies = JavaRandom(0), 0.0, []
        for i in range(num):
            message = bytes([rng.next_int(26) + 65]) * size
            elapsed = _round_trip(producer, consumer, topic, message)
            if i % 1000 == 0:
                click.echo(f"{i}\t{elapsed / 1000.0 / 1000.0!r}")
            total += elapsed
            latencies.append(int(elapsed // 1_000_000))
        click.echo(f"Avg latency: {jfloat(total / num / 1000.0 / 1000.0, 4)} ms")
        latencies.sort()
        p50, p99, p999 = (latencies[int(len(latencies) * q)] for q in (0.5, 0.99, 0.999))
        click.echo(f"Percentiles: 50th = {p50}, 99th = {p99}, 99.9th = {p999}")
    finally:
        consumer.close()
        producer.flush(5)


def main(argv: list[str] | None = None) -> int:
    """Console entry point (bin/pylog-e2e-latency.sh, `pylog-e2e-latency`): Kafka's positional arguments."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        click.echo(USAGE + "\n\n" + (__doc__ or "").strip())
        return 0
    try:
        if len(args) not in (5, 6):
            raise E2eError(USAGE)
        try:
            num, size = int(args[2]), int(args[4])
        except ValueError as exc:
            raise E2eError(f'For input string: "{str(exc).rsplit(" ", 1)[-1].strip(chr(39))}"') from None
        run(args[0], args[1], num, args[3], size, args[5] if len(args) > 5 and args[5].strip() else None)
        return 0
    except Exception as exc:  # Kafka's mainNoExit: the message on stderr, exit 1
        click.echo(str(exc), err=True)
        return 1


if __name__ == "__main__":
    sys.exit(main())
