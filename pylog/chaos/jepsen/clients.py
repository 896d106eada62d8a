"""One queue process's clients: a confluent-kafka producer and consumer, and the operations they run.

Producers keep confluent-kafka's defaults (acks=all, retries) and add only what makes their kind: nothing
(`plain`), enable.idempotence (`idempotent`), or a transactional.id (`transactional`, one per process slot, so a
replacement process fences its predecessor and aborts what it left open); `kafka-python` is kafka-python's
KafkaProducer at its defaults (in kafka-python 3.x: idempotent, acks=all), a second implementation of the
protocol. Consumers set what Jepsen's safe mode sets: no auto-commit (a subscribed poll commits synchronously, as Jepsen's commitSync) and auto.offset.reset
earliest; the isolation level stays the default, read_committed.

Each operation returns (type, value, error): type ok, fail (definitely not applied) or info (unknown); value is
the completed micro-ops as history.py describes them. Exceptions escape to the workload, which records info.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable

import confluent_kafka as ck

from pylog.chaos.jepsen.history import FAIL, INFO, OK, POLL, SEND

# Delivery errors after which the record was certainly not written (Jepsen: InvalidTopic, UnknownTopicOrPartition
# fail; timeouts and disconnects are info).
DEFINITE = {ck.KafkaError.UNKNOWN_TOPIC_OR_PART, ck.KafkaError._UNKNOWN_TOPIC, ck.KafkaError._UNKNOWN_PARTITION,
            ck.KafkaError.TOPIC_AUTHORIZATION_FAILED, ck.KafkaError.MSG_SIZE_TOO_LARGE,
            ck.KafkaError.TOPIC_EXCEPTION, ck.KafkaError.INVALID_RECORD}
# librdkafka's own log lines (connection refused while a broker is down, ...) go here, not to stderr: the harness
# may write them to the run folder (chaos_run.py does, clients.log).
CLIENT_LOG = logging.getLogger("pylog.chaos.jepsen.librdkafka")
CLIENT_LOG.addHandler(logging.NullHandler())
CLIENT_LOG.propagate = False
Key = tuple[str, int]
Result = tuple[str, list, str]


class Timeout(Exception):
    """A client call did not finish in time: the operation's outcome is unknown."""


class Clients:
    """The producer and consumer of one process (created on first use)."""

    def __init__(self, bootstrap: str, keys: list[Key], kind: str, group_id: str, slot: int, seed: int,
                 op_timeout: float) -> None:
        self.bootstrap, self.keys, self.kind, self.group_id = bootstrap, keys, kind, group_id
        self.txn_id = f"pylog-jepsen-{seed}-{slot}"
        self.op_timeout = op_timeout
        self.key_of = {k: i for i, k in enumerate(keys)}
        self._producer: Any = None
        self._consumer: Any = None
        self.via = ""  # subscribe or assign, once either ran
        self.assigned: list[int] = []
        self.next_offset: dict[int, int] = {}  # key -> the offset after the last record this process read
        self.rebalance_log: list[dict] = []  # filled by the callbacks during an operation

    # -- clients ----------------------------------------------------------------------------------

    def producer(self) -> Any:
        """The producer; a transactional one has run init_transactions."""
        if self._producer is None and self.kind == "kafka-python":
            from kafka import KafkaProducer
            self._producer = KafkaProducer(bootstrap_servers=self.bootstrap.split(","))
        if self._producer is None:
            conf: dict[str, Any] = {"bootstrap.servers": self.bootstrap, "logger": CLIENT_LOG}
            if self.kind == "idempotent":
                conf["enable.idempotence"] = True
            elif self.kind == "transactional":
                conf["transactional.id"] = self.txn_id
            p = ck.Producer(conf)
            if self.kind == "transactional":
                p.init_transactions(self.op_timeout)
            self._producer = p
        return self._producer

    def consumer(self) -> Any:
        """The consumer (not yet assigned or subscribed)."""
        if self._consumer is None:
            self._consumer = ck.Consumer({"bootstrap.servers": self.bootstrap, "group.id": self.group_id,
                                          "enable.auto.commit": False, "auto.offset.reset": "earliest",
                                          "logger": CLIENT_LOG})
        return self._consumer

    def close(self) -> None:
        """Close both clients in the background: a close may wait on a dead broker, a process must not."""
        p, c = self._producer, self._consumer
        self._producer = self._consumer = None

        def close() -> None:
            if p is not None and self.kind == "kafka-python":
                p.close(timeout=0)
            elif p is not None:
                p.purge()
                p.flush(0)
            if c is not None:
                c.close()
        threading.Thread(target=_quietly(close), name="jepsen-close", daemon=True).start()

    # -- operations --------------------------------------------------------------------------------

    def send(self, k: int, v: int) -> Result:
        """A single send outside a transaction: produce, then wait for its delivery report."""
        if self.kind == "kafka-python":
            return self._send_kafka_python(k, v)
        p = self.producer()
        got: list[Any] = []
        topic, part = self.keys[k]
        p.produce(topic, value=str(v).encode(), partition=part, on_delivery=lambda err, msg: got.append((err, msg)))
        if p.flush(self.op_timeout) > 0 or not got:
            raise Timeout("no delivery report within the operation timeout")
        err, msg = got[0]
        if err is None:
            return OK, [[SEND, k, [msg.offset(), v]]], ""
        return (FAIL if err.code() in DEFINITE else INFO), [[SEND, k, [None, v]]], err.name()

    def _send_kafka_python(self, k: int, v: int) -> Result:
        from kafka.errors import KafkaError, KafkaTimeoutError, UnknownTopicOrPartitionError

        topic, part = self.keys[k]
        future = self.producer().send(topic, value=str(v).encode(), partition=part)
        try:
            md = future.get(timeout=self.op_timeout)
        except KafkaTimeoutError as exc:
            raise Timeout(f"kafka-python: {exc}") from None
        except UnknownTopicOrPartitionError as exc:
            return FAIL, [[SEND, k, [None, v]]], type(exc).__name__
        except KafkaError as exc:
            return INFO, [[SEND, k, [None, v]]], type(exc).__name__
        return OK, [[SEND, k, [md.offset, v]]], ""

    def _reads(self, timeout: float) -> dict[int, list[list[int]]]:
        reads: dict[int, list[list[int]]] = {}
        for m in self.consumer().consume(500, timeout):
            if m.error() is None:
                k = self.key_of.get((m.topic(), m.partition()))
                if k is not None:
                    reads.setdefault(k, []).append([m.offset(), int(m.value())])
                    self.next_offset[k] = m.offset() + 1
        return reads

    def poll(self, timeout: float) -> Result:
        """A poll; under subscribe its offsets are then committed synchronously (Jepsen's commitSync)."""
        reads = self._reads(timeout)
        value = [[POLL, reads]]
        if self.via == "subscribe" and reads:
            try:
                self.consumer().commit(asynchronous=False)
            except ck.KafkaException as exc:
                return INFO, value, f"commit: {exc.args[0].name()}"
        return OK, value, ""

    def txn(self, mops: list[list], poll_timeout: float) -> Result:
        """Sends and polls in one transaction, committed with the consumer's offsets when it subscribes."""
        p = self.producer()
        p.begin_transaction()
        out: list[list] = []
        reports: dict[int, Any] = {}
        for mop in mops:
            if mop[0] == SEND:
                _, k, v = mop
                topic, part = self.keys[k]
                i = len(out)
                p.produce(topic, value=str(v).encode(), partition=part,
                          on_delivery=lambda err, msg, i=i: reports.__setitem__(i, (err, msg)))
                out.append([SEND, k, [None, v]])
            else:
                out.append([POLL, self._reads(poll_timeout)])
        if p.flush(self.op_timeout) > 0:
            raise Timeout("transaction records not delivered within the operation timeout")
        for i, (err, msg) in reports.items():
            if err is not None:
                return self._abort(out, f"delivery: {err.name()}")
            out[i][2][0] = msg.offset()
        try:
            if self.via == "subscribe" and any(m[0] == POLL and m[1] for m in out):
                c = self.consumer()
                p.send_offsets_to_transaction(c.position(c.assignment()), c.consumer_group_metadata(),
                                              self.op_timeout)
            p.commit_transaction(self.op_timeout)
        except ck.KafkaException as exc:
            err = exc.args[0]
            if err.txn_requires_abort():
                return self._abort(out, err.name())
            return INFO, out, err.name()
        return OK, out, ""

    def _abort(self, out: list[list], why: str) -> Result:
        try:
            self._producer.abort_transaction(self.op_timeout)
        except ck.KafkaException as exc:
            return INFO, out, f"{why}; abort: {exc.args[0].name()}"
        return FAIL, out, why

    def assign(self, keys: list[int], seek_to_beginning: bool = False) -> Result:
        """Consume exactly these keys; kept keys keep their position (as Java's assign does), new ones start
        at the committed offset or the earliest."""
        c = self.consumer()
        if self.via == "subscribe":
            c.unsubscribe()
        # Our own record of where each kept key is: librdkafka's position() is unknown again after an assign until
        # a record arrives, and an unknown offset would restart the key from the group's committed offset.
        kept = set(self.assigned) if self.via == "assign" and not seek_to_beginning else set()
        tps = []
        for k in keys:
            topic, part = self.keys[k]
            if seek_to_beginning:
                offset = ck.OFFSET_BEGINNING
            else:
                offset = self.next_offset.get(k, ck.OFFSET_INVALID) if k in kept else ck.OFFSET_INVALID
            tps.append(ck.TopicPartition(topic, part, offset))
        c.assign(tps)
        self.via, self.assigned = "assign", list(keys)
        return OK, list(keys), ""

    def subscribe(self, keys: list[int], log: Callable[[dict], None]) -> Result:
        """Subscribe to the topics of these keys in the group; rebalances are reported to `log`."""
        c = self.consumer()
        if self.via == "assign":
            c.unassign()
        topics = sorted({self.keys[k][0] for k in keys})

        def changed(kind: str) -> Callable[[Any, list], None]:
            return lambda _c, tps: log({"type": kind, "keys": [self.key_of[(tp.topic, tp.partition)] for tp in tps
                                                               if (tp.topic, tp.partition) in self.key_of]})
        c.subscribe(topics, on_assign=changed("assign"), on_revoke=changed("revoke"), on_lost=changed("lost"))
        self.via, self.assigned = "subscribe", list(keys)
        return OK, list(keys), ""


def _quietly(fn: Callable[[], None]) -> Callable[[], None]:
    def run() -> None:
        try:
            fn()
        except Exception:  # closing a client of a crashed process: nothing to report
            pass
    return run
