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
import logging
import threading
import time
from collections.abc import Iterator

from pylog.spark.options import SinkOptions
from pylog.spark.sink import send_rows

__all__ = ["ensure_commit_topic", "write_exactly_once", "task_batch", "fence_orphans"]

log = logging.getLogger(__name__)

_TIMEOUT_MS = 30_000
_ABORT_WAIT_S = 5  # best effort: a retry's init_transactions aborts what this attempt leaves open
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


_CLEARED: set[tuple[str, int]] = set()  # (query, writer's start) whose orphans this python worker cleared


def fence_orphans(opts: SinkOptions, identity: str, own: str, since_ms: int) -> list[str]:
    """Abort the transactions of this query that a run before `since_ms` left open (a killed driver's tasks).

    Every task reads the commit topic read_committed up to its high watermark, so one orphaned transaction there
    holds every task of the next run until the coordinator times it out (transaction.timeout.ms). A task's own
    init_transactions() fences only its own id, and a task whose id held the orphan may not run until others
    finish. So before its first batch each python worker fences the query's ids whose open transaction began
    before this run's writer was made (a live task of this run began after): InitProducerId bumps the epoch and
    the coordinator aborts. Once per worker and run. Assumes the driver's and the coordinator's clocks agree to
    within the restart's own duration. A live task that loses that race is fenced and retried by Spark.
    """
    from kafka import KafkaProducer
    from kafka.admin import KafkaAdminClient
    if (identity, since_ms) in _CLEARED:
        return []
    prefix = f"pylog-spark-{identity}-"
    security = {k: v for k, v in opts.client.items() if k.startswith(("security_", "sasl_", "ssl_"))}
    admin = KafkaAdminClient(bootstrap_servers=opts.bootstrap.split(","), client_id="pylog-spark", **security)
    try:
        listings = admin.list_transactions(state_filters=["Ongoing"])
        ids = sorted({t.transactional_id for found in listings.values() for t in found
                      if t.transactional_id.startswith(prefix) and t.transactional_id != own})
        described = admin.describe_transactions(ids) if ids else {}
    finally:
        admin.close()
    stale = sorted(tid for tid, d in described.items()
                   if d.state.value == "Ongoing" and 0 <= d.transaction_start_time_ms < since_ms)
    for tid in stale:
        fencer = KafkaProducer(bootstrap_servers=opts.bootstrap.split(","), transactional_id=tid, **opts.client)
        try:
            _retry_on_dead_coordinator(fencer)
            fencer.init_transactions()
        finally:
            fencer.close(timeout=_ABORT_WAIT_S)
    _CLEARED.add((identity, since_ms))
    return stale


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


def _within(call, seconds: float, what: str) -> None:
    """Run `call` in a helper thread; TimeoutError if it has not returned after `seconds` (its errors re-raised).

    kafka-python waits without bound in commit_transaction() and abort_transaction(), and loses the request when
    the coordinator's connection is refused (a kill -9'd coordinator): the task would then hang forever. Past the
    deadline the task fails instead, and Spark's retry fences the stuck attempt (init_transactions)."""
    outcome: list[BaseException | None] = []

    def run() -> None:
        try:
            call()
            outcome.append(None)
        except BaseException as e:  # handed to the task's thread
            outcome.append(e)
    worker = threading.Thread(target=run, name=f"pylog-spark-{what}", daemon=True)
    worker.start()
    worker.join(max(seconds, 0.0))
    if not outcome:
        raise TimeoutError(f"pylog data source: {what} did not finish within {seconds:.0f} s")
    if outcome[0] is not None:
        raise outcome[0]


def _retry_on_dead_coordinator(producer) -> None:
    """Make kafka-python 3.0's sender retry a transactional request whose coordinator refuses connections.

    Its sender asks `await_ready(coordinator)`, which raises when the node is down; the sender then looks the
    coordinator up again but drops the request (AddPartitionsToTxn, EndTxn), so the transaction stalls until
    it times out. Answering False instead takes the sender's own path for a node that is not ready: look the
    coordinator up, then send the request again (what Kafka's Java producer does)."""
    from kafka.errors import KafkaConnectionError
    client = getattr(getattr(producer, "_sender", None), "_client", None)
    await_ready = getattr(client, "await_ready", None)
    if await_ready is None:
        return

    def ready_or_false(node_id, timeout_ms=30_000):
        try:
            return await_ready(node_id, timeout_ms=timeout_ms)
        except KafkaConnectionError:
            return False
    client.await_ready = ready_or_false


def write_exactly_once(opts: SinkOptions, rows: Iterator, identity: str, partition: int, batch: int,
                       since_ms: int | None = None) -> int:
    """Write one task's rows and its marker in one transaction, unless the marker shows they already were.

    `since_ms`: when this run's writer was made; the query's transactions older than it are fenced first."""
    from kafka import KafkaProducer
    key = f"{identity}/{partition}".encode()
    own = f"pylog-spark-{identity}-{partition}"
    producer = KafkaProducer(bootstrap_servers=opts.bootstrap.split(","), transactional_id=own, **opts.client)
    _retry_on_dead_coordinator(producer)
    try:
        producer.init_transactions()
        if since_ms is not None:
            fenced = fence_orphans(opts, identity, own, since_ms)
            if fenced:
                log.warning("pylog data source: aborted %d transaction(s) a previous run of %s left open: %s",
                            len(fenced), identity, ", ".join(fenced))
        done = last_committed_batch(opts, key)
        if done is not None and done >= batch:
            for _ in rows:  # a replay: this task's rows of this batch are visible already
                pass
            return 0
        producer.begin_transaction()
        # The coordinator aborts a transaction older than transaction.timeout.ms: waiting longer is pointless.
        deadline = time.monotonic() + opts.client.get("transaction_timeout_ms", 60_000) / 1000
        failures: list[BaseException] = []
        count = send_rows(producer, opts, rows, failures)
        marker = {"batch": batch, "records": count}
        producer.send(opts.commit_topic, key=key, value=json.dumps(marker).encode(), partition=0)
        producer.flush(timeout=max(deadline - time.monotonic(), 0.0))
        if failures:
            raise RuntimeError(f"pylog data source: {len(failures)} of {count} records were not stored: "
                               f"{failures[0]!r}")
        _within(producer.commit_transaction, deadline - time.monotonic(), "the transaction's commit")
        return count
    except BaseException:
        with contextlib.suppress(Exception):  # at once, rather than holding read_committed readers until it times out
            _within(producer.abort_transaction, _ABORT_WAIT_S, "the transaction's abort")
        raise
    finally:
        producer.close(timeout=_ABORT_WAIT_S)
