"""The Prometheus collector: a broker snapshot and the recorders, as Kafka-named families.

Names follow Strimzi's JMX-exporter rules (kafka_<domain>_<type>_<name>, lowercased, `_total` for
Meters' counts, Timers and Histograms as summaries with Kafka's percentiles) and kafka_exporter's
for lag; docs/metrics.md lists every family with its type and labels (a test holds them to it).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Callable, Iterable

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from pylog.common.errors import ErrorCode
from pylog.metrics import recorders as rec
from pylog.metrics.snapshot import BROKER_STATES, BrokerSnapshot
from pylog.protocol.api import api_name

TXN_OPEN = ("Ongoing", "PrepareCommit", "PrepareAbort", "PrepareEpochFence")


def request_name(key: int) -> str:
    """Kafka's `request` label: the API's name, Fetch split into FetchConsumer and FetchFollower."""
    if key == rec.FETCH_FOLLOWER:
        return "FetchFollower"
    return "FetchConsumer" if key == 1 else api_name(key)


def _gauge(name: str, doc: str, value: float | None = None, labels: Iterable[str] = ()) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value, labels=None if value is not None else list(labels))


def _summary(name: str, doc: str) -> Metric:
    # Samples are added by hand: prometheus-client's SummaryMetricFamily has no quantile samples.
    return Metric(name, doc, "summary")


def _error_name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return str(code)


def _add_summary(m: Metric, labels: dict[str, str], reservoir: rec.Reservoir) -> None:
    count, total, quantiles = reservoir.summary()
    for q, v in quantiles:
        m.add_sample(m.name, {**labels, "quantile": str(q)}, v)
    m.add_sample(m.name + "_count", labels, count)
    m.add_sample(m.name + "_sum", labels, total)


class EventLoopClock:
    """CPU seconds the event loop's thread has used (its busy time), read from another thread."""

    def __init__(self, thread_id: int | None = None) -> None:
        ident = thread_id if thread_id is not None else threading.main_thread().ident
        self.clock = time.pthread_getcpuclockid(ident) if ident is not None else None
        self.last = (self.busy(), time.monotonic())
        self.idle_share = 1.0

    def busy(self) -> float:
        """Total CPU seconds of the loop thread so far."""
        return time.clock_gettime(self.clock) if self.clock is not None else 0.0

    def idle(self) -> float:
        """1 - the loop's busy share since the previous reading at least half a second ago."""
        busy, now = self.busy(), time.monotonic()
        if now - self.last[1] >= 0.5:
            share = (busy - self.last[0]) / (now - self.last[1])
            self.idle_share = min(max(1.0 - share, 0.0), 1.0)
            self.last = (busy, now)
        return self.idle_share


class BrokerCollector(Collector):
    """Yields every documented family from one snapshot per scrape."""

    def __init__(self, snapshot: Callable[[], BrokerSnapshot], loop_clock: EventLoopClock | None = None) -> None:
        self.snapshot = snapshot
        self.loop_clock = loop_clock or EventLoopClock()

    def collect(self) -> Iterable[Metric]:
        """Called by prometheus-client on each scrape (in the HTTP thread)."""
        s = self.snapshot()
        yield from self._state(s)
        yield from self._replica_manager(s)
        yield from self._controller(s)
        yield from self._topics(s)
        yield from self._requests()
        yield from self._logs(s)
        yield from self._zookeeper(s)
        yield from self._coordinators(s)
        yield from self._lag(s)

    def _state(self, s: BrokerSnapshot) -> Iterable[Metric]:
        yield _gauge("kafka_server_kafkaserver_brokerstate", "Kafka's BrokerState code (1 starting, 2 recovery or "
                     "fenced, 3 running, 7 shutting down)", BROKER_STATES[s.state])
        g = _gauge("pylog_broker_state", "1 for the broker's current state", labels=["state"])
        for name in BROKER_STATES:
            g.add_metric([name], 1.0 if name == s.state else 0.0)
        yield g
        g = _gauge("pylog_broker_info", "Always 1; the broker's id", labels=["broker_id"])
        g.add_metric([str(s.broker_id)], 1.0)
        yield g
        yield _gauge("pylog_metrics_snapshot_complete", "0 when the event loop did not answer the scrape in time",
                     1.0 if s.complete else 0.0)
        yield CounterMetricFamily("pylog_eventloop_busy_seconds", "CPU seconds the broker's event loop thread used",
                                  value=self.loop_clock.busy())
        yield _gauge("kafka_network_socketserver_networkprocessoravgidle_percent",
                     "Share of time the event loop was idle since the previous scrape (0-1)", self.loop_clock.idle())

    def _replica_manager(self, s: BrokerSnapshot) -> Iterable[Metric]:
        leaders = [p for p in s.partitions if p.leader]
        yield _gauge("kafka_server_replicamanager_partitioncount", "Replicas hosted here", len(s.partitions))
        yield _gauge("kafka_server_replicamanager_leadercount", "Partitions led here", len(leaders))
        yield _gauge("kafka_server_replicamanager_underreplicatedpartitions", "Partitions led here with ISR < replicas",
                     sum(1 for p in leaders if len(p.isr) < len(p.replicas)))
        yield _gauge("kafka_server_replicamanager_underminisrpartitioncount",
                     "Partitions led here with ISR < min.insync.replicas", sum(1 for p in leaders if len(p.isr) < p.min_isr))
        yield _gauge("kafka_server_replicamanager_atminisrpartitioncount",
                     "Partitions led here with ISR = min.insync.replicas", sum(1 for p in leaders if len(p.isr) == p.min_isr))
        yield _gauge("kafka_server_replicamanager_offlinereplicacount", "Replicas on failed log dirs", s.offline_replicas)
        yield _gauge("kafka_server_replicamanager_reassigningpartitions", "Partitions led here being reassigned",
                     sum(1 for p in leaders if p.adding))
        yield _gauge("kafka_server_replicamanager_produceridcount", "Producer ids held by hosted replicas",
                     sum(p.producer_ids for p in s.partitions))
        yield CounterMetricFamily("kafka_server_replicamanager_isrshrinks", "ISR shrinks written by this leader",
                                  value=rec.BROKER.isr_shrinks)
        yield CounterMetricFamily("kafka_server_replicamanager_isrexpands", "ISR expansions written by this leader",
                                  value=rec.BROKER.isr_expands)
        yield _gauge("pylog_reassignment_bytes_remaining", "Estimated bytes the new replicas of partitions led here "
                     "still have to copy", sum(p.bytes_to_add for p in leaders))
        g = _gauge("pylog_replication_throttle_bytes_per_second", "Replication throttle rate (-1: none)",
                   labels=["direction"])
        for direction, rate in sorted(s.throttle_rates.items()):
            g.add_metric([direction], rate)
        yield g

    def _controller(self, s: BrokerSnapshot) -> Iterable[Metric]:
        c = s.controller
        active = c is not None and c.active
        yield _gauge("kafka_controller_kafkacontroller_activecontrollercount", "1 on the active controller", int(active))
        for name, doc, attr in (
                ("offlinepartitionscount", "Partitions without a live leader", "offline_partitions"),
                ("preferredreplicaimbalancecount", "Partitions not led by their preferred replica", "preferred_imbalance"),
                ("globalpartitioncount", "Partitions in the cluster", "global_partitions"),
                ("globaltopiccount", "Topics in the cluster", "global_topics")):
            yield _gauge(f"kafka_controller_kafkacontroller_{name}", doc + " (active controller only)",
                         getattr(c, attr) if active else 0)
        yield _gauge("pylog_reassignment_partitions_remaining", "Partitions being reassigned (active controller only)",
                     c.reassigning_partitions if active else 0)
        yield CounterMetricFamily("kafka_controller_controllerstats_uncleanleaderelections",
                                  "Leaders elected from outside the ISR", value=rec.CONTROLLER.unclean_elections)
        m = _summary("kafka_controller_controllerstats_leaderelectionrateandtimems", "Leader election time (ms)")
        _add_summary(m, {}, rec.CONTROLLER.election_time)
        yield m

    def _topics(self, s: BrokerSnapshot) -> Iterable[Metric]:
        for i, (name, doc) in enumerate((("bytesin", "Bytes appended by producers"),
                                         ("bytesout", "Bytes sent to consumers"),
                                         ("messagesin", "Records appended by producers"))):
            c = CounterMetricFamily(f"kafka_server_brokertopicmetrics_{name}", doc + " (no topic label: all topics)",
                                    labels=["topic"])
            for topic, counts in sorted(s.traffic.items()):
                c.add_metric([topic], counts[i])
            c.add_sample(c.name + "_total", {}, sum(v[i] for v in s.traffic.values()))
            yield c
        for name, counts in (("failedproducerequests", rec.BROKER.failed_produce),
                             ("failedfetchrequests", rec.BROKER.failed_fetch)):
            c = CounterMetricFamily(f"kafka_server_brokertopicmetrics_{name}", "Failed partition appends/reads "
                                    "(no topic label: all topics)", labels=["topic"])
            current = dict(counts)
            for topic, n in sorted(current.items()):
                c.add_metric([topic], n)
            c.add_sample(c.name + "_total", {}, sum(current.values()))
            yield c

    def _requests(self) -> Iterable[Metric]:
        r = rec.REQUESTS
        c = CounterMetricFamily("kafka_network_requestmetrics_requests", "Requests answered", labels=["request", "version"])
        for (key, version), n in sorted(dict(r.requests).items()):
            c.add_metric([request_name(key), str(version)], n)
        yield c
        c = CounterMetricFamily("kafka_network_requestmetrics_errors", "Responses with a top-level error",
                                labels=["request", "error"])
        for (key, code), n in sorted(dict(r.errors).items()):
            c.add_metric([request_name(key), _error_name(code)], n)
        yield c
        m = _summary("kafka_network_requestmetrics_totaltimems", "Request total time (ms), arrival to response")
        for key, reservoir in sorted(dict(r.total_time).items()):
            _add_summary(m, {"request": request_name(key)}, reservoir)
        yield m

    def _logs(self, s: BrokerSnapshot) -> Iterable[Metric]:
        # Only Size and LogEndOffset of Kafka's Log MBeans: each per-partition family adds a sample per replica to
        # every scrape (BENCHMARKS.md, "Metrics overhead"); the log start offset is kafka_topic_partition_oldest_offset.
        size = _gauge("kafka_log_log_size", "Bytes of the replica's segments", labels=["topic", "partition"])
        end = _gauge("kafka_log_log_logendoffset", "Log end offset", labels=["topic", "partition"])
        for p in s.partitions:
            labels = [p.topic, str(p.partition)]
            size.add_metric(labels, p.size)
            end.add_metric(labels, p.log_end_offset)
        yield size
        yield end
        yield _gauge("kafka_log_logmanager_offlinelogdirectorycount", "Failed log dirs", len(s.offline_log_dirs))
        free = _gauge("pylog_log_dir_free_bytes", "Free bytes on a log dir's file system", labels=["log_dir"])
        total = _gauge("pylog_log_dir_total_bytes", "Size of a log dir's file system", labels=["log_dir"])
        for d in s.log_dirs:
            try:
                st = os.statvfs(d)
            except OSError:
                continue
            free.add_metric([d], st.f_bavail * st.f_frsize)
            total.add_metric([d], st.f_blocks * st.f_frsize)
        yield free
        yield total

    def _zookeeper(self, s: BrokerSnapshot) -> Iterable[Metric]:
        yield _gauge("pylog_zookeeper_connected", "1 while the broker's ZooKeeper session is connected",
                     int(s.zk_connected))
        m = _summary("kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms", "ZooKeeper request latency (ms)")
        _add_summary(m, {}, rec.ZK.latency)
        yield m
        events = dict(rec.ZK.events)
        for name, event in (("zookeeperdisconnects", "SUSPENDED"), ("zookeeperexpires", "EXPIRED"),
                            ("zookeepersyncconnects", "CONNECTED")):
            yield CounterMetricFamily(f"kafka_server_sessionexpirelistener_{name}", f"ZooKeeper session {event} events",
                                      value=events.get(event, 0) + (events.get("RECONNECTED", 0) + events.get(
                                          "NEW_SESSION", 0) if event == "CONNECTED" else 0))

    def _coordinators(self, s: BrokerSnapshot) -> Iterable[Metric]:
        g = _gauge("pylog_group_coordinator_groups", "Groups this broker coordinates, by state", labels=["state"])
        counts: dict[str, int] = {st: 0 for st in ("Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead")}
        for grp in s.groups:
            counts[grp.state] = counts.get(grp.state, 0) + 1
        for st, n in counts.items():
            g.add_metric([st], n)
        yield g
        yield CounterMetricFamily("pylog_group_coordinator_rebalances", "Rebalances completed (new generations)",
                                  value=rec.GROUPS.rebalances)
        t = _gauge("pylog_txn_coordinator_transactional_ids", "Transactional ids this broker coordinates, by state",
                   labels=["state"])
        for st, n in sorted(s.transactions.items()):
            t.add_metric([st], n)
        yield t
        yield _gauge("pylog_txn_coordinator_open_transactions", "Transactions in progress here",
                     sum(n for st, n in s.transactions.items() if st in TXN_OPEN))
        yield CounterMetricFamily("pylog_txn_coordinator_committed_transactions", "Transactions committed here",
                                  value=rec.TXNS.committed)
        yield CounterMetricFamily("pylog_txn_coordinator_aborted_transactions", "Transactions aborted here",
                                  value=rec.TXNS.aborted)

    def _lag(self, s: BrokerSnapshot) -> Iterable[Metric]:
        cur = _gauge("kafka_topic_partition_current_offset", "Newest offset (high watermark) of a partition led here",
                     labels=["topic", "partition"])
        old = _gauge("kafka_topic_partition_oldest_offset", "Oldest offset of a partition led here",
                     labels=["topic", "partition"])
        for p in s.partitions:
            if p.leader:
                cur.add_metric([p.topic, str(p.partition)], p.high_watermark)
                old.add_metric([p.topic, str(p.partition)], p.log_start_offset)
        yield cur
        yield old
        labels = ["consumergroup", "topic", "partition"]
        committed = _gauge("kafka_consumergroup_current_offset", "A group's committed offset (its coordinator reports it)",
                           labels=labels)
        lag = _gauge("kafka_consumergroup_lag", "Newest offset minus the committed one", labels=labels)
        members = _gauge("kafka_consumergroup_members", "Members of a group", labels=["consumergroup"])
        for grp in s.groups:
            members.add_metric([grp.group_id], grp.members)
            for (topic, part), offset in sorted(grp.committed.items()):
                lv = [grp.group_id, topic, str(part)]
                committed.add_metric(lv, offset)
                end = s.end_offsets.get((topic, part))
                if end is not None:
                    lag.add_metric(lv, -1 if offset < 0 else max(end - offset, 0))
        yield committed
        yield lag
        yield members
