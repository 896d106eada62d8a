"""Broker failure detection and self-healing, as Cruise Control's BrokerFailureDetector.

Every anomaly.detection.interval.ms the detector reads the cluster: a broker that holds replicas but is
not alive has failed (since the first reading that found it so). After broker.failure.alert.threshold.ms
the failure is an anomaly (listed under state?substates=anomaly_detector); after
broker.failure.self.healing.threshold.ms, with self-healing on for broker failures and no execution
running, the balancer re-creates the failed brokers' replicas on the live ones (the planner's fewest
moves that keep them balanced; recently removed brokers are left out, as Cruise Control's
self.healing.exclude.recently.removed.brokers does) and executes that through the executor.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field

from pylog.balancer.analyzer import ProposalError, propose
from pylog.balancer.cluster import ClusterFacts, close_cluster, open_cluster, read
from pylog.balancer.config import BalancerConfig
from pylog.balancer.executor import Caps, ExecutionBusy, Executor

log = logging.getLogger("pylog.balancer")
KEPT = 20  # recent anomalies listed


def _now_ms() -> int:
    return int(time.time() * 1000)


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


@dataclass
class BrokerFailure:
    """One broker-failure anomaly: the failed brokers and when each was first found failed."""

    anomaly_id: str
    failed_since: dict[int, int]
    detection_ms: int
    status: str = "DETECTED"
    status_update_ms: int = 0
    fix_task: str | None = None

    def to_json(self) -> dict:
        """Cruise Control's recentBrokerFailures entry."""
        return {"anomalyId": self.anomaly_id,
                "failedBrokersByTimeMs": {str(b): t for b, t in sorted(self.failed_since.items())},
                "detectionDate": _date(self.detection_ms), "statusUpdateDate": _date(self.status_update_ms),
                "status": self.status, "fixTaskId": self.fix_task}


@dataclass
class DetectorState:
    """What the detector knows between readings."""

    failed_since: dict[int, int] = field(default_factory=dict)
    current: BrokerFailure | None = None
    recent: list[BrokerFailure] = field(default_factory=list)
    self_healing_started: int = 0


class BrokerFailureDetector:
    """A thread that reads the cluster, raises broker-failure anomalies and heals them."""

    def __init__(self, cfg: BalancerConfig, executor: Executor, caps: Callable[[], Caps]) -> None:
        self.cfg = cfg
        self.executor = executor
        self.caps = caps  # the service's current caps (admin may change them at run time)
        self.state = DetectorState()
        self.self_healing = cfg.self_healing_for_broker_failure()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="broker-failure-detector", daemon=True)

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
                log.exception("broker failure detection failed")

    def check(self) -> None:
        """One reading: update the failed brokers, raise or heal the anomaly."""
        cluster = open_cluster(self.cfg["bootstrap.servers"])
        try:
            facts = read(cluster, with_sizes=False)
        finally:
            close_cluster(cluster)
        now = _now_ms()
        failed = facts.holders() - set(facts.metadata.brokers)
        st = self.state
        st.failed_since = {b: st.failed_since.get(b, now) for b in sorted(failed)}
        if not failed:
            if st.current is not None and st.current.status == "DETECTED":
                self._settle(st.current, "IGNORED", now)  # the brokers came back before healing
            elif st.current is not None and not self.executor.busy():
                self.state.current = None  # healed: the anomaly stays listed with its FIX_STARTED status
            return
        oldest = min(st.failed_since.values())
        if st.current is None and now - oldest >= self.cfg["broker.failure.alert.threshold.ms"]:
            st.current = BrokerFailure(str(uuid.uuid4()), dict(st.failed_since), now, status_update_ms=now)
            st.recent = (st.recent + [st.current])[-KEPT:]
            log.warning("broker failure: broker(s) %s down since %s", sorted(failed), _date(oldest))
        if st.current is not None:
            st.current.failed_since = dict(st.failed_since)
            if (self.self_healing and st.current.status == "DETECTED" and not self.executor.busy()
                    and now - oldest >= self.cfg["broker.failure.self.healing.threshold.ms"]):
                self._heal(facts, st.current, now)

    def _settle(self, anomaly: BrokerFailure, status: str, now: int) -> None:
        anomaly.status, anomaly.status_update_ms = status, now
        self.state.current = None

    def _heal(self, facts: ClusterFacts, anomaly: BrokerFailure, now: int) -> None:
        excluded = self.executor.recently_removed
        try:
            proposal = propose(facts, self.cfg, "rebalance", exclude=excluded)
        except ProposalError as exc:
            log.error("cannot heal broker failure %s: %s", anomaly.anomaly_id, exc)
            anomaly.status, anomaly.status_update_ms = "FIX_FAILED_TO_START", now
            return
        caps = self.caps()
        task_id = "self-healing-" + anomaly.anomaly_id
        try:
            self.executor.start(task_id, proposal.changed, proposal.current, caps, reason="Self healing for "
                                f"broker failure of {sorted(anomaly.failed_since)}")
        except ExecutionBusy:
            return  # retried at the next reading
        self.executor.self_healing_task = task_id
        anomaly.status, anomaly.status_update_ms, anomaly.fix_task = "FIX_STARTED", now, task_id
        self.state.self_healing_started += 1
        log.warning("self-healing broker failure %s: %d partition(s) to move", anomaly.anomaly_id,
                    len(proposal.changed))

    def json(self) -> dict:
        """AnomalyDetectorState."""
        st = self.state
        on = ["BROKER_FAILURE"] if self.self_healing else []
        return {"selfHealingEnabled": on, "selfHealingDisabled": [] if on else ["BROKER_FAILURE"],
                "recentBrokerFailures": [a.to_json() for a in reversed(st.recent)],
                "recentGoalViolations": [], "recentMetricAnomalies": [], "recentDiskFailures": [],
                "recentTopicAnomalies": [],
                "ongoingSelfHealingAnomaly": (st.current.anomaly_id if st.current is not None
                                              and st.current.status == "FIX_STARTED" else "None"),
                "numSelfHealingStarted": st.self_healing_started,
                "detectedAnomalyTypes": ["BROKER_FAILURE"]}
