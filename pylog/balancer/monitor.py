"""The load monitor: per-partition load from the brokers' `__pylog_metrics` samples and `__pylog_partition_load`.

Every metric.sampling.interval.ms a thread reads what the brokers published since the last round (a
plain consumer, no group: nothing is committed). It keeps, per partition, the samples of the last
num.partition.metrics.windows x partition.metrics.window.ms: a partition's load is the newest size of
its largest replica and the mean of its leader's rates over that span (Cruise Control averages its
windows too). A record of the Spark pipeline's compacted `__pylog_partition_load` (p95 rates) replaces
the samples' figures for its partition. pause_sampling stops the reading; samples published meanwhile
are skipped at resume, as Cruise Control takes none while paused.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from pylog.balancer.cluster import close_cluster, open_cluster
from pylog.common.metrics_format import LOAD_TOPIC, METRICS_TOPIC, decode_sample
from pylog.common.types import TP

log = logging.getLogger("pylog.balancer")
POLL_MS = 500
ROUND_S = 30.0  # one round reads at most this long (a huge backlog is read over several rounds)


@dataclass(frozen=True)
class PartitionLoad:
    """One partition's load: bytes on disk (largest replica) and the leader's rates per second."""

    size_bytes: int | None
    bytes_in: float
    bytes_out: float
    messages_in: float
    source: str


class _Samples:
    """One partition's samples within the retained span: the newest size per replica, and the leader's rates
    summed per window (Cruise Control's windows), so memory does not grow with the sampling rate."""

    def __init__(self, window_ms: int) -> None:
        self.window_ms = window_ms
        self.sizes: dict[int, tuple[int, int]] = {}  # broker -> (time, size) of its newest sample
        self.windows: dict[int, list[float]] = {}  # window start -> [sum in, sum out, sum msgs, samples]

    def add(self, broker: int, ts: int, size: int, leader: bool, rates: tuple[float, float, float]) -> None:
        if broker not in self.sizes or ts >= self.sizes[broker][0]:
            self.sizes[broker] = (ts, size)
        if leader:
            w = self.windows.setdefault(ts - ts % self.window_ms, [0.0, 0.0, 0.0, 0])
            w[0] += rates[0]
            w[1] += rates[1]
            w[2] += rates[2]
            w[3] += 1

    def trim(self, oldest: int) -> None:
        # Brokers publish on their own clocks, so samples arrive out of time order: whole windows are dropped.
        self.windows = {start: w for start, w in self.windows.items() if start + self.window_ms > oldest}
        self.sizes = {b: v for b, v in self.sizes.items() if v[0] >= oldest}

    def load(self) -> PartitionLoad | None:
        if not self.sizes and not self.windows:
            return None
        n = sum(w[3] for w in self.windows.values()) or 1
        mean = [sum(w[i] for w in self.windows.values()) / n for i in (0, 1, 2)]
        size = max((s for _, s in self.sizes.values()), default=None)
        return PartitionLoad(size, mean[0], mean[1], mean[2], METRICS_TOPIC)


def aggregate(records: list[tuple[int, bytes]], retained_ms: int, now_ms: int,
              window_ms: int = 1) -> dict[TP, PartitionLoad]:
    """Partition loads from (timestamp, value) sample records (for tests and one-shot reads)."""
    store: dict[TP, _Samples] = defaultdict(lambda: _Samples(window_ms))
    for _, value in records:
        s = decode_sample(value)
        store[(s.topic, s.partition)].add(s.broker_id, s.timestamp_ms, s.size_bytes, s.is_leader,
                                          (s.bytes_in_per_sec, s.bytes_out_per_sec, s.messages_in_per_sec))
    out = {}
    for tp, samples in store.items():
        samples.trim(now_ms - retained_ms)
        load = samples.load()
        if load is not None:
            out[tp] = load
    return out


class LoadMonitor:
    """A thread keeping the cluster's partition load; paused and resumed through the REST API."""

    def __init__(self, bootstrap: str, interval_ms: int, window_ms: int, windows: int) -> None:
        self.bootstrap = bootstrap
        self.interval_ms, self.window_ms, self.windows = interval_ms, window_ms, windows
        self.paused = False
        self.reason = "N/A"
        self.rounds = 0
        self.first_sample_ms: int | None = None
        self.error: str | None = None
        self._samples: dict[TP, _Samples] = defaultdict(lambda: _Samples(window_ms))
        self._spark: dict[TP, tuple[int, PartitionLoad]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._skip_to_end = False
        self._consumer = None
        self._thread = threading.Thread(target=self._loop, name="load-monitor", daemon=True)

    @property
    def retained_ms(self) -> int:
        """How far back samples count."""
        return self.window_ms * self.windows

    def start(self) -> None:
        """Begin sampling."""
        self._thread.start()

    def stop(self) -> None:
        """Stop sampling (the thread ends after its round)."""
        self._stop.set()

    def pause(self, reason: str) -> bool:
        """pause_sampling; False if it was already paused."""
        was, self.paused = self.paused, True
        self.reason = reason or "Paused by the pause_sampling request"
        return not was

    def resume(self, reason: str) -> bool:
        """resume_sampling; False if it was not paused. What was published meanwhile is skipped."""
        was, self.paused = self.paused, False
        self.reason = reason or "Resumed by the resume_sampling request"
        if was:
            self._skip_to_end = True
        return was

    def _loop(self) -> None:
        while not self._stop.is_set():
            if not self.paused:
                try:
                    self.sample_once()
                    self.error = None
                except Exception as exc:  # an unreachable cluster is retried next round
                    self.error = str(exc)
                    log.warning("load sampling failed: %s", exc)
            self._stop.wait(self.interval_ms / 1000)
        if self._consumer is not None:
            self._consumer.close()

    def _open(self):
        from kafka import KafkaConsumer
        if self._consumer is None:
            self._consumer = KafkaConsumer(bootstrap_servers=self.bootstrap.split(","), group_id=None,
                                           enable_auto_commit=False, client_id="pylog-balancer-monitor",
                                           auto_offset_reset="earliest", request_timeout_ms=30000,
                                           exclude_internal_topics=False)  # __pylog_metrics is internal
        return self._consumer

    def _assign(self, consumer) -> bool:
        """Assign every partition of the two topics that exist; new ones start at the retained span."""
        from kafka import TopicPartition
        cluster = open_cluster(self.bootstrap)
        try:  # asked without auto-creation (a consumer's metadata request could create the load topic uncompacted)
            md = cluster.admin.metadata([METRICS_TOPIC, LOAD_TOPIC])
        finally:
            close_cluster(cluster)
        wanted = [TopicPartition(t, p) for t, tm in sorted(md.topics.items()) for p in sorted(tm.partitions)]
        if set(wanted) == set(consumer.assignment()):
            return False
        new = [tp for tp in wanted if tp not in consumer.assignment()]
        consumer.assign(wanted)
        since = int(time.time() * 1000) - self.retained_ms
        starts = consumer.offsets_for_times({tp: since for tp in new if tp.topic == METRICS_TOPIC})
        for tp in new:
            found = starts.get(tp)
            if tp.topic == METRICS_TOPIC and found is not None:
                consumer.seek(tp, found.offset)
            elif tp.topic == METRICS_TOPIC:
                consumer.seek_to_end(tp)
            else:
                consumer.seek_to_beginning(tp)  # compacted: one record per partition
        return True

    def sample_once(self) -> int:
        """One round: read what is new in both topics; the number of records read."""
        consumer = self._open()
        self._assign(consumer)
        if self._skip_to_end:
            metrics = [tp for tp in consumer.assignment() if tp.topic == METRICS_TOPIC]
            if metrics:
                consumer.seek_to_end(*metrics)
            self._skip_to_end = False
        # Up to the ends seen now: brokers publish all the time, so "until a poll is empty" might never come.
        assigned = list(consumer.assignment())
        ends = consumer.end_offsets(assigned) if assigned else {}
        deadline = time.monotonic() + ROUND_S
        read = 0
        while any(consumer.position(tp) < end for tp, end in ends.items()) and time.monotonic() < deadline:
            batch = consumer.poll(timeout_ms=POLL_MS, max_records=10000)
            with self._lock:
                for tp, records in batch.items():
                    for r in records:
                        read += self.take(tp.topic, r.value)
        with self._lock:
            oldest = int(time.time() * 1000) - self.retained_ms
            for samples in self._samples.values():
                samples.trim(oldest)
        self.rounds += 1
        return read

    def take(self, topic: str, value: bytes | None) -> int:
        """Keep one record of either topic; 1 if it was used (a malformed one is skipped)."""
        if value is None:
            return 0
        try:
            if topic == METRICS_TOPIC:
                s = decode_sample(value)
                self._samples[(s.topic, s.partition)].add(
                    s.broker_id, s.timestamp_ms, s.size_bytes, s.is_leader,
                    (s.bytes_in_per_sec, s.bytes_out_per_sec, s.messages_in_per_sec))
                if self.first_sample_ms is None or s.timestamp_ms < self.first_sample_ms:
                    self.first_sample_ms = s.timestamp_ms
            else:
                d = json.loads(value)
                tp, to_ms = (str(d["topic"]), int(d["partition"])), int(d.get("to_ms") or 0)
                if tp not in self._spark or to_ms >= self._spark[tp][0]:
                    self._spark[tp] = (to_ms, PartitionLoad(
                        d.get("size_bytes"), float(d.get("bytes_in_per_sec") or 0),
                        float(d.get("bytes_out_per_sec") or 0), float(d.get("messages_in_per_sec") or 0), LOAD_TOPIC))
        except (ValueError, KeyError, TypeError) as exc:
            log.debug("skipped a malformed %s record: %s", topic, exc)
            return 0
        return 1

    def loads(self) -> dict[TP, PartitionLoad]:
        """The newest load of every partition sampled (the Spark pipeline's record when there is one)."""
        with self._lock:
            out = {tp: load for tp, s in self._samples.items() if (load := s.load()) is not None}
            out.update({tp: load for tp, (_, load) in self._spark.items()})
        return out

    def state(self, partitions: Mapping[TP, object]) -> dict:
        """MonitorState; `partitions` are the cluster's, for the coverage figures."""
        loads = self.loads()
        valid = sum(1 for tp in partitions if tp in loads)
        total = len(partitions)
        now = int(time.time() * 1000)
        windows = 0 if self.first_sample_ms is None else min(
            self.windows, max(1, (now - self.first_sample_ms) // self.window_ms + 1))
        body = {"state": "PAUSED" if self.paused else "RUNNING", "trained": False,
                "numMonitoredWindows": int(windows), "numValidPartitions": valid, "numTotalPartitions": total,
                "monitoringCoveragePct": round(100.0 * valid / max(total, 1), 2),
                "reasonOfLatestPauseOrResume": self.reason, "numSamplingRounds": self.rounds}
        if self.error:
            body["error"] = self.error
        return body
