"""The exactly-once writer of the `pylog` format: one Kafka transaction per task and batch, recognised on replay.

Protocol (README, "Spark"): the task of partition P of batch B of a query (or of one `df.write`) Q writes with
transactional.id `pylog-spark-Q-P`. `init_transactions()` fences every earlier attempt of that task and ends
its open transaction. The task then reads, read_committed, the last marker its id committed to the compacted
commit topic (key `Q/P`, value the batch id). A marker at B or later means this batch's rows are already
visible: the replay writes nothing. Otherwise the task sends its rows and the marker `B` in one transaction
and commits. The assumption: Spark replays a batch id with the same input split into the same tasks (its
offset log fixes the input; the source's planning is deterministic).
"""
from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator

from pylog.spark.options import SinkOptions
from pylog.spark.sink import send_rows

__all__ = ["ensure_commit_topic", "write_exactly_once", "task_batch"]

_TIMEOUT_MS = 30_000
QUERY_ID_KEY, BATCH_ID_KEY = "sql.streaming.queryId", "streaming.sql.batchId"  # Spark's local properties


def ensure_commit_topic(opts: SinkOptions) -> None:
    """Create the compacted commit topic if it is missing (on the driver, when the write is planned)."""
    from kafka.admin import KafkaAdminClient, NewTopic
    from kafka.errors import TopicAlreadyExistsError
    admin = KafkaAdminClient(bootstrap_servers=opts.bootstrap.split(","), client_id="pylog-spark")
    try:
        if opts.commit_topic in admin.list_topics():
            return
        brokers = len(admin.describe_cluster()["brokers"])
        # Small segments: the cleaner only compacts rolled ones, and every task reads the whole partition.
        configs = {"cleanup.policy": "compact", "segment.bytes": str(1 << 20)}
        topic = NewTopic(opts.commit_topic, 1, min(3, brokers), topic_configs=configs)
        try:
            admin.create_topics([topic], timeout_ms=_TIMEOUT_MS)
        except TopicAlreadyExistsError:
            pass
    finally:
        admin.close()


def task_batch() -> tuple[int, str | None, int | None]:
    """This task's partition id, and the streaming query id and batch id (None outside a stream)."""
    from pyspark import TaskContext
    tc = TaskContext.get()
    batch = tc.getLocalProperty(BATCH_ID_KEY)
    return tc.partitionId(), tc.getLocalProperty(QUERY_ID_KEY), None if batch is None else int(batch)


def last_committed_batch(opts: SinkOptions, key: bytes) -> int | None:
    """The batch id of the newest committed marker under `key` (None: none yet)."""
    from kafka import KafkaConsumer, TopicPartition
    tp = TopicPartition(opts.commit_topic, 0)
    common = {"bootstrap_servers": opts.bootstrap.split(","), "group_id": None, "enable_auto_commit": False,
              "request_timeout_ms": _TIMEOUT_MS}
    probe = KafkaConsumer(isolation_level="read_uncommitted", **common)
    try:  # the high watermark: markers of transactions still open past the LSO must be waited for, not missed
        end = probe.end_offsets([tp], _TIMEOUT_MS)[tp]
    finally:
        probe.close()
    c = KafkaConsumer(isolation_level="read_committed", auto_offset_reset="earliest", **common)
    found = None
    try:
        c.assign([tp])
        c.seek_to_beginning(tp)
        deadline = time.monotonic() + opts.client.get("transaction_timeout_ms", 60_000) / 1000 + 30
        while c.position(tp) < end:
            if time.monotonic() > deadline:
                raise TimeoutError(f"pylog data source: {opts.commit_topic} stayed unreadable up to offset {end}")
            for record in c.poll(timeout_ms=1000).get(tp, []):
                if record.key == key:
                    found = json.loads(record.value)["batch"]
    finally:
        c.close()
    return found


def write_exactly_once(opts: SinkOptions, rows: Iterator, identity: str, partition: int, batch: int) -> int:
    """Write one task's rows and its marker in one transaction, unless the marker shows they already were."""
    from kafka import KafkaProducer
    key = f"{identity}/{partition}".encode()
    producer = KafkaProducer(bootstrap_servers=opts.bootstrap.split(","),
                             transactional_id=f"pylog-spark-{identity}-{partition}", **opts.client)
    try:
        producer.init_transactions()
        done = last_committed_batch(opts, key)
        if done is not None and done >= batch:
            for _ in rows:  # a replay: this task's rows of this batch are visible already
                pass
            return 0
        producer.begin_transaction()
        failures: list[BaseException] = []
        count = send_rows(producer, opts, rows, failures)
        marker = {"batch": batch, "records": count}
        producer.send(opts.commit_topic, key=key, value=json.dumps(marker).encode(), partition=0)
        producer.flush()
        if failures:
            raise RuntimeError(f"pylog data source: {len(failures)} of {count} records were not stored: "
                               f"{failures[0]!r}")
        producer.commit_transaction()
        return count
    except BaseException:
        with contextlib.suppress(Exception):  # at once, rather than holding read_committed readers until it times out
            producer.abort_transaction()
        raise
    finally:
        producer.close()
