"""Anomaly detection and self-healing, as Cruise Control's AnomalyDetectorManager.

Every anomaly.detection.interval.ms the detector reads the cluster and looks for, in Cruise Control's
order of priority:
- BROKER_FAILURE: a broker that holds replicas but is not alive (since the first reading that found it
  so). After broker.failure.alert.threshold.ms it is an anomaly; after
  broker.failure.self.healing.threshold.ms its replicas are re-created on the live brokers (the planner's
  fewest moves; recently removed brokers left out, as self.healing.exclude.recently.removed.brokers does).
- DISK_FAILURE: replicas Metadata reports offline on a live broker (a failed log dir, KIP-112); the fix is
  fix_offline_replicas' proposal.
- TOPIC_ANOMALY: a topic whose replication factor is below self.healing.target.topic.replication.factor
  (topic.excluded.from.replication.factor.check names the topics left alone); the fix adds replicas.
- GOAL_VIOLATION: the anomaly detection goals are violated and a rebalance would fix them; the fix is
  that rebalance. Not looked for while a broker or a disk has failed (the model is incomplete then).
- METRIC_ANOMALY: a slow broker (pylog/balancer/slow.py); the fix demotes it.
Each type heals only with its self.healing.<type>.enabled switch (default self.healing.enabled) and only
when no execution runs; otherwise it is only listed. One fix runs at a time, the highest priority first.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from pylog.balancer.analyzer import Proposal, ProposalError, propose
from pylog.balancer.cluster import ClusterFacts, close_cluster, open_cluster, read
from pylog.balancer.config import BalancerConfig
from pylog.balancer.executor import Caps, ExecutionBusy, Executor
from pylog.balancer.findings import Finding, find_disk_failures, find_goal_violations, find_topic_anomalies
from pylog.balancer.goals import HardGoalViolation
from pylog.balancer.repairs import without_lost

log = logging.getLogger("pylog.balancer")
KEPT = 20  # recent anomalies listed per type
TYPES = ("BROKER_FAILURE", "DISK_FAILURE", "TOPIC_ANOMALY", "GOAL_VIOLATION", "METRIC_ANOMALY")
RECENT = {"BROKER_FAILURE": "recentBrokerFailures", "DISK_FAILURE": "recentDiskFailures",
          "TOPIC_ANOMALY": "recentTopicAnomalies", "GOAL_VIOLATION": "recentGoalViolations",
          "METRIC_ANOMALY": "recentMetricAnomalies"}


def _now_ms() -> int:
    return int(time.time() * 1000)


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


@dataclass
class Anomaly:
    """One anomaly: its type, what was found (Cruise Control's type-specific fields) and its status."""

    kind: str
    anomaly_id: str
    details: dict
    detection_ms: int
    status: str = "DETECTED"
    status_update_ms: int = 0
    fix_task: str | None = None
    fix: Callable[[ClusterFacts], Proposal] | None = field(default=None, repr=False)

    def to_json(self) -> dict:
        """Cruise Control's recent<Type>s entry."""
        return {"anomalyId": self.anomaly_id, **self.details, "detectionDate": _date(self.detection_ms),
                "statusUpdateDate": _date(self.status_update_ms), "status": self.status, "fixTaskId": self.fix_task}


@dataclass
class DetectorState:
    """What the detector knows between readings."""

    failed_since: dict[int, int] = field(default_factory=dict)
    disks_since: dict[tuple[int, str], int] = field(default_factory=dict)  # (broker, log dir) -> first seen
    current: dict[str, Anomaly] = field(default_factory=dict)
    recent: dict[str, list[Anomaly]] = field(default_factory=lambda: {t: [] for t in TYPES})
    self_healing_started: int = 0
    goals_checked_ms: int = -(2**62)


class AnomalyDetector:
    """A thread that reads the cluster, lists anomalies and heals those whose switch is on."""

    def __init__(self, cfg: BalancerConfig, executor: Executor, caps: Callable[[], Caps],
                 slow_brokers: Callable[[ClusterFacts], Finding | None] | None = None) -> None:
        self.cfg = cfg
        self.executor = executor
        self.caps = caps  # the service's current caps (admin may change them at run time)
        self.slow_brokers = slow_brokers
        self.state = DetectorState()
        self.healing = {t: cfg.self_healing_for(t) for t in TYPES}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="anomaly-detector", daemon=True)

    @property
    def self_healing(self) -> bool:
        """Broker failures' switch (the admin endpoint's historical one)."""
        return self.healing["BROKER_FAILURE"]

    def start(self) -> None:
        """Begin detecting."""
        self._thread.start()

    def stop(self) -> None:
        """Stop after the current reading."""
        self._stop.set()

    def _loop(self) -> None:
        interval = self.cfg["anomaly.detection.interval.ms"] / 1000
        while not self._stop.wait(interval):
            try:
                self.check()
            except Exception:  # a reading that failed (cluster unreachable) is retried next interval
                log.exception("anomaly detection failed")

    def check(self) -> None:
        """One reading: update every anomaly type, then start the most urgent fix that is allowed."""
        cluster = open_cluster(self.cfg["bootstrap.servers"])
        try:
            facts = read(cluster, with_sizes=False)
            disks = find_disk_failures(cluster, facts, self.state.disks_since, _now_ms(),
                                       self.executor.recently_removed)
        finally:
            close_cluster(cluster)
        now = _now_ms()
        self._broker_failures(facts, now)
        self._track("DISK_FAILURE", disks, now)
        # A broker that lost a log dir is no place for new replicas (one landed on the failed dir in a test run).
        bad_disks = {int(b) for a in self.state.recent["DISK_FAILURE"] for b in a.details["failedDisksByTimeMs"]}
        self._track("TOPIC_ANOMALY", find_topic_anomalies(facts, self.cfg, bad_disks), now)
        sick = bool(self.state.failed_since) or disks is not None
        if sick:
            self._track("GOAL_VIOLATION", None, now)
        elif now - self.state.goals_checked_ms >= self._goal_interval_ms():
            # A full proposal per check: on 1M partitions that is a minute of CPU, hence its own interval.
            self.state.goals_checked_ms = now
            self._track("GOAL_VIOLATION", find_goal_violations(facts, self.cfg, self.executor), now)
        if self.slow_brokers is not None:
            self._track("METRIC_ANOMALY", self.slow_brokers(facts), now)
        for kind in TYPES:
            anomaly = self.state.current.get(kind)
            if anomaly is not None and self._due(anomaly, now) and self._heal(facts, anomaly, now):
                return

    def _goal_interval_ms(self) -> int:
        specific = self.cfg["goal.violation.detection.interval.ms"]
        return self.cfg["anomaly.detection.interval.ms"] if specific is None else specific

    def _broker_failures(self, facts: ClusterFacts, now: int) -> None:
        st = self.state
        failed = facts.holders() - set(facts.metadata.brokers)
        st.failed_since = {b: st.failed_since.get(b, now) for b in sorted(failed)}
        if not failed:
            self._track("BROKER_FAILURE", None, now)
            return
        oldest = min(st.failed_since.values())
        if "BROKER_FAILURE" in st.current or now - oldest >= self.cfg["broker.failure.alert.threshold.ms"]:
            details = {"failedBrokersByTimeMs": {str(b): t for b, t in st.failed_since.items()}}
            self._track("BROKER_FAILURE", Finding(details, lambda f: propose(
                f, self.cfg, "rebalance", exclude=self.executor.recently_removed), f"broker(s) {sorted(failed)}"), now)

    def _track(self, kind: str, finding: Finding | None, now: int) -> None:
        st = self.state
        current = st.current.get(kind)
        if finding is None:
            if current is not None and current.status == "DETECTED":
                current.status, current.status_update_ms = "IGNORED", now  # gone before it was fixed
                del st.current[kind]
            elif current is not None and not self.executor.busy():
                del st.current[kind]  # fixed: it stays listed with its FIX_STARTED status
            return
        if current is None:
            current = Anomaly(kind, str(uuid.uuid4()), finding.details, now, status_update_ms=now)
            st.current[kind] = current
            st.recent[kind] = (st.recent[kind] + [current])[-KEPT:]
            log.warning("%s detected: %s", kind.lower().replace("_", " "), finding.summary)
        current.details, current.fix = finding.details, finding.fix

    def _due(self, anomaly: Anomaly, now: int) -> bool:
        if not self.healing[anomaly.kind] or anomaly.status != "DETECTED" or self.executor.busy():
            return False
        if anomaly.kind != "BROKER_FAILURE":
            return True
        return now - min(self.state.failed_since.values()) >= self.cfg["broker.failure.self.healing.threshold.ms"]

    def _heal(self, facts: ClusterFacts, anomaly: Anomaly, now: int) -> bool:
        """Start the anomaly's fix; True if an execution started."""
        try:
            proposal = anomaly.fix(facts) if anomaly.fix is not None else None
        except (ProposalError, HardGoalViolation) as exc:
            log.error("cannot fix %s %s: %s", anomaly.kind, anomaly.anomaly_id, exc)
            anomaly.status, anomaly.status_update_ms = "FIX_FAILED_TO_START", now
            return False
        if proposal is None:
            return False
        proposal, lost = without_lost(proposal, facts)
        if lost:
            log.error("%s: %d partition(s) have no live replica and cannot be re-created: %s", anomaly.kind,
                      len(lost), ", ".join(f"{t}-{p}" for t, p in lost[:20]))
        if not proposal.changed:
            return False
        task_id = f"self-healing-{anomaly.kind.lower()}-{anomaly.anomaly_id}"
        try:
            self.executor.start(task_id, proposal.changed, proposal.current, self.caps(),
                                reason=f"Self healing for {anomaly.kind}: {anomaly.details}")
        except ExecutionBusy:
            return False  # retried at the next reading
        self.executor.self_healing_task = task_id
        anomaly.status, anomaly.status_update_ms, anomaly.fix_task = "FIX_STARTED", now, task_id
        self.state.self_healing_started += 1
        log.warning("self-healing %s %s: %d partition(s) to move", anomaly.kind, anomaly.anomaly_id,
                    len(proposal.changed))
        return True

    def json(self) -> dict:
        """AnomalyDetectorState."""
        st = self.state
        ongoing = next((a.anomaly_id for a in st.current.values() if a.status == "FIX_STARTED"), "None")
        body = {"selfHealingEnabled": [t for t in TYPES if self.healing[t]],
                "selfHealingDisabled": [t for t in TYPES if not self.healing[t]]}
        body.update({RECENT[t]: [a.to_json() for a in reversed(st.recent[t])] for t in TYPES})
        body.update({"ongoingSelfHealingAnomaly": ongoing, "numSelfHealingStarted": st.self_healing_started,
                     "detectedAnomalyTypes": [t for t in TYPES if t != "METRIC_ANOMALY" or self.slow_brokers]})
        return body


BrokerFailureDetector = AnomalyDetector  # the name the first slice used
