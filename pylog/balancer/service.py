"""The balancer's endpoints: what each Cruise Control request does, as a task returning its reply."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from pylog.balancer import params as P
from pylog.balancer.anomaly import TYPES, AnomalyDetector
from pylog.balancer.analyzer import KNOWN_GOALS, Proposal, ProposalError, demote, parse_goals, propose
from pylog.balancer.cluster import (ClusterFacts, close_cluster, cluster_state_body, load_body,
                                    open_cluster, read)
from pylog.balancer.config import BalancerConfig
from pylog.balancer.executor import Caps, ExecutionBusy, Executor
from pylog.balancer.goals import HARD_GOALS, HardGoalViolation
from pylog.balancer.load import CapacityError, broker_loads, partition_load_body, read_capacities, with_capacity
from pylog.balancer.monitor import LoadMonitor
from pylog.balancer.repairs import fix_offline, offline_replicas, without_lost
from pylog.balancer.slow import SlowBrokerFinder
from pylog.balancer.threshold import threshold_only
from pylog.balancer.tasks import Reply, UserTask, UserTaskManager, error_body

log = logging.getLogger("pylog.balancer")
ASYNC = {"state", "load", "partition_load", "kafka_cluster_state", "proposals", "rebalance", "add_broker",
         "remove_broker", "demote_broker", "fix_offline_replicas"}


class Balancer:
    """Configuration, the executor and the user tasks of one service."""

    # admin's concurrency parameters -> the configuration keys whose values they replace at run time
    CONCURRENCY = {"concurrent_partition_movements_per_broker": "num.concurrent.partition.movements.per.broker",
                   "concurrent_leader_movements": "num.concurrent.leader.movements",
                   "max_partition_movements_in_cluster": "max.num.cluster.movements"}

    def __init__(self, cfg: BalancerConfig) -> None:
        self.cfg = cfg
        self.executor = Executor(cfg["bootstrap.servers"])
        self.tasks = UserTaskManager(cfg["max.active.user.tasks"], cfg["webserver.session.maxExpiryTimeMs"])
        self.concurrency: dict[str, int] = {}
        # A cluster model given instead of reading the cluster (scripts/bench balancer: proposal timings on
        # synthetic clusters of 1M partitions through the REST API); None in the service.
        self.model: ClusterFacts | None = None
        self.detector = AnomalyDetector(cfg, self.executor, lambda: self._caps({}), SlowBrokerFinder(cfg))
        self.monitor = LoadMonitor(cfg["bootstrap.servers"], cfg["metric.sampling.interval.ms"],
                                   cfg["partition.metrics.window.ms"], cfg["num.partition.metrics.windows"])
        self.capacities = {} if cfg["capacity.config.file"] is None else read_capacities(cfg["capacity.config.file"])

    def start(self) -> None:
        """Start the background parts: follow reassignments already in flight, detect anomalies."""
        cluster = open_cluster(self.cfg["bootstrap.servers"])
        try:
            self.executor.adopt(cluster.ongoing(), self._caps({}))
        finally:
            close_cluster(cluster)
        self.detector.start()
        self.monitor.start()

    def stop(self) -> None:
        """Stop the background parts."""
        self.detector.stop()
        self.monitor.stop()

    def work(self, endpoint: str, params: Mapping[str, str]) -> Callable[[UserTask], Reply]:
        """The function a task of this endpoint runs."""
        return lambda task: self._guarded(endpoint, params, task)

    def _read(self, with_sizes: bool = True) -> ClusterFacts:
        if self.model is not None:
            return self.model
        cluster = open_cluster(self.cfg["bootstrap.servers"])
        try:
            return read(cluster, with_sizes)
        finally:
            close_cluster(cluster)

    def _guarded(self, endpoint: str, params: Mapping[str, str], task: UserTask) -> Reply:
        try:
            return getattr(self, "_" + endpoint)(params, task)
        except (P.ParamError, ProposalError, CapacityError) as exc:
            return Reply(400, error_body(exc))
        except (ExecutionBusy, HardGoalViolation) as exc:
            return Reply(500, error_body(exc))

    # ------------------------------------------------------------------ GET

    def _state(self, params: Mapping[str, str], task: UserTask) -> Reply:
        wanted = P.substates(params)
        verbose = P.flag(params, "verbose", False)
        body: dict = {}
        if "MONITOR" in wanted:
            task.step("RETRIEVING_METADATA", "Reading the cluster's partitions and replica sizes.")
            body["MonitorState"] = self.monitor.state(self._read(with_sizes=False).replicas)
        if "EXECUTOR" in wanted:
            body["ExecutorState"] = self.executor.state(verbose)
        if "ANALYZER" in wanted:
            body["AnalyzerState"] = {"isProposalReady": True, "readyGoals": list(KNOWN_GOALS),
                                     "goalReadiness": [{"name": g, "status": "ready"} for g in KNOWN_GOALS]}
        if "ANOMALY_DETECTOR" in wanted:
            body["AnomalyDetectorState"] = self.anomaly_state()
        body["version"] = 1
        return Reply(200, body)

    def anomaly_state(self) -> dict:
        """AnomalyDetectorState."""
        return self.detector.json()

    def _load(self, params: Mapping[str, str], task: UserTask) -> Reply:
        task.step("RETRIEVING_METADATA", "Reading the cluster's partitions and replica sizes.")
        facts = self._read()
        alive = facts.metadata.brokers
        rows = broker_loads(facts, self.monitor.loads(), sorted(set(alive) | facts.holders()))
        with_capacity(rows, self.capacities)
        return Reply(200, load_body(rows, alive, alive, facts.hosts))

    def _partition_load(self, params: Mapping[str, str], task: UserTask) -> Reply:
        task.step("RETRIEVING_METADATA", "Reading the cluster's partitions and replica sizes.")
        facts = self._read()
        brokers = set(P.broker_ids(params)) if params.get("brokerid") else None
        try:
            body = partition_load_body(facts, self.monitor.loads(), params.get("resource", "disk").lower(),
                                       P.number(params, "entries", 2**31 - 1), P.pattern(params, "topic"),
                                       P.partition_range(params), brokers)
        except ValueError as exc:
            raise P.ParamError(str(exc)) from None
        return Reply(200, body)

    def _kafka_cluster_state(self, params: Mapping[str, str], task: UserTask) -> Reply:
        topic = P.pattern(params, "topic")
        facts = self._read(with_sizes=False)
        return Reply(200, cluster_state_body(facts, P.flag(params, "verbose", False), topic))

    def _proposals(self, params: Mapping[str, str], task: UserTask) -> Reply:
        return Reply(200, self._plan("rebalance", params, task, []).body)

    def user_tasks(self, params: Mapping[str, str]) -> dict:
        """The user_tasks body (synchronous)."""
        ids = {i.strip() for i in params.get("user_task_ids", "").split(",") if i.strip()} or None
        eps = {e.strip().lower() for e in params.get("endpoints", "").split(",") if e.strip()} or None
        return self.tasks.listing(ids, eps)

    # ------------------------------------------------------------------ POST

    def _plan(self, action: str, params: Mapping[str, str], task: UserTask, ids: list[int]) -> Proposal:
        goals = parse_goals(params.get("goals"))
        if not params.get("goals") and self.capacities:  # Cruise Control's default goals include the capacities
            goals = goals + HARD_GOALS[1:]
        excluded = P.pattern(params, "excluded_topics")
        verbose = P.flag(params, "verbose", False)
        task.step("RETRIEVING_METADATA", "Reading the cluster's partitions and replica sizes.")
        facts = self._read()
        if P.flag(params, "threshold_only", False):
            if action != "rebalance":
                raise P.ParamError("threshold_only applies to rebalance and proposals only")
            task.step("OPTIMIZING", "Moving replicas off the brokers above the balance threshold only.")
            return threshold_only(facts, self.cfg, goals, excluded, self.executor.recently_removed, verbose)
        task.step("OPTIMIZING", "Planning with pylog's minimal-movement planner.")
        return propose(facts, self.cfg, action, ids, goals, excluded, verbose, loads=self.monitor.loads(),
                       capacities=self.capacities, skip_hard=P.flag(params, "skip_hard_goal_check", False))

    def _caps(self, params: Mapping[str, str]) -> Caps:
        c = {**self.cfg.values, **{self.CONCURRENCY[k]: v for k, v in self.concurrency.items()}}
        return Caps(
            per_broker=P.number(params, "concurrent_partition_movements_per_broker",
                                c["num.concurrent.partition.movements.per.broker"]) or 1,
            cluster=P.number(params, "max_partition_movements_in_cluster", c["max.num.cluster.movements"]) or 1,
            leaders=P.number(params, "concurrent_leader_movements", c["num.concurrent.leader.movements"]) or 1,
            throttle=P.number(params, "replication_throttle", c["default.replication.throttle"]),
            check_interval_s=(P.number(params, "execution_progress_check_interval_ms",
                                       c["execution.progress.check.interval.ms"]) or 1000) / 1000)

    def _change(self, action: str, params: Mapping[str, str], task: UserTask, ids: list[int]) -> Reply:
        dryrun = P.flag(params, "dryrun", True)  # Cruise Control's default: only a proposal
        caps = self._caps(params)
        if not dryrun and self.executor.busy():
            raise ExecutionBusy("Cannot start a new execution while there is an ongoing execution.")
        proposal = self._plan(action, params, task, ids)
        if not dryrun:
            self._execute(task, proposal, caps, params.get("reason", ""))
        return Reply(200, proposal.body)

    def _execute(self, task: UserTask, proposal: Proposal, caps: Caps, reason: str) -> None:
        """Hand a proposal to the executor; the task stays InExecution while it runs."""
        if not proposal.changed:
            self.executor.recently_removed.update(proposal.removed_brokers)
            return
        proposal, lost = without_lost(proposal, self._read(with_sizes=False))
        if lost:
            log.error("%d partition(s) have no live replica to copy from and are left out: %s", len(lost),
                      ", ".join(f"{t}-{p}" for t, p in lost[:20]))
        if not proposal.changed:
            return
        self._refuse_if_reassigning()
        task.step("STARTING_EXECUTION", "Starting the partition reassignments (KIP-455).")
        self.executor.start(task.task_id, proposal.changed, proposal.current, caps, proposal.removed_brokers, reason)
        task.execution = lambda: (self.executor.current is not None
                                  and self.executor.current.task_id == task.task_id)

    def _refuse_if_reassigning(self) -> None:
        # Reassignments this balancer did not start (a tool, or another balancer) would be overridden.
        cluster = open_cluster(self.cfg["bootstrap.servers"])
        try:
            ongoing = cluster.ongoing()
        finally:
            close_cluster(cluster)
        if ongoing:
            raise ExecutionBusy(f"Cannot start a new execution: {len(ongoing)} partition reassignment(s) are in "
                                f"progress in the cluster.")

    def _demote_broker(self, params: Mapping[str, str], task: UserTask) -> Reply:
        ids = P.broker_ids(params)
        dryrun = P.flag(params, "dryrun", True)
        caps = self._caps(params)
        if not dryrun and self.executor.busy():
            raise ExecutionBusy("Cannot start a new execution while there is an ongoing execution.")
        task.step("RETRIEVING_METADATA", "Reading the cluster's partitions.")
        proposal = demote(self._read(with_sizes=False), ids, P.flag(params, "skip_urp_demotion", False),
                          not P.flag(params, "exclude_follower_demotion", False))
        if not dryrun:
            self._execute(task, proposal, caps, params.get("reason", ""))
            self.executor.recently_demoted.update(ids)
        return Reply(200, proposal.body)

    def _fix_offline_replicas(self, params: Mapping[str, str], task: UserTask) -> Reply:
        dryrun = P.flag(params, "dryrun", True)
        caps = self._caps(params)
        if not dryrun and self.executor.busy():
            raise ExecutionBusy("Cannot start a new execution while there is an ongoing execution.")
        task.step("RETRIEVING_METADATA", "Reading the cluster's partitions and their offline replicas.")
        facts = self._read()
        excluded = self.executor.recently_removed if P.flag(params, "exclude_recently_removed_brokers", True) else ()
        proposal = fix_offline(facts, offline_replicas(facts), excluded, P.flag(params, "verbose", False))
        if not dryrun:
            self._execute(task, proposal, caps, params.get("reason", ""))
        return Reply(200, proposal.body)

    def _rebalance(self, params: Mapping[str, str], task: UserTask) -> Reply:
        return self._change("rebalance", params, task, [])

    def _add_broker(self, params: Mapping[str, str], task: UserTask) -> Reply:
        return self._change("add_broker", params, task, P.broker_ids(params))

    def _remove_broker(self, params: Mapping[str, str], task: UserTask) -> Reply:
        return self._change("remove_broker", params, task, P.broker_ids(params))

    def admin(self, params: Mapping[str, str]) -> dict:
        """The admin endpoint (synchronous): self-healing on/off, concurrency defaults, recently removed brokers."""
        enable, disable = P.anomaly_types(params, "enable_self_healing_for"), P.anomaly_types(
            params, "disable_self_healing_for")
        unsupported = sorted((enable | disable) - set(TYPES))
        if unsupported:
            raise P.ParamError(f"pylog does not detect {unsupported} anomalies; it detects {list(TYPES)}")
        for name in ("enable_concurrency_adjuster_for", "disable_concurrency_adjuster_for",
                     "min_isr_based_concurrency_adjustment"):
            if params.get(name):
                raise P.ParamError(f"{name}: pylog has no concurrency adjuster")
        if enable & disable:
            raise P.ParamError("The same anomaly type cannot be both enabled and disabled")
        before = dict(self.detector.healing)
        self.detector.healing.update({t: True for t in enable} | {t: False for t in disable})
        body: dict = {"selfHealingEnabledBefore": before, "selfHealingEnabledAfter": dict(self.detector.healing)}
        changed = {k: P.number(params, k, None) for k in self.CONCURRENCY if params.get(k)}
        if changed:
            self.concurrency.update(changed)
            body["ongoingConcurrencyChangeRequest"] = ", ".join(f"{k}={v}" for k, v in sorted(changed.items()))
        if params.get("drop_recently_removed_brokers"):
            dropped = set(P.broker_ids(params, "drop_recently_removed_brokers"))
            self.executor.recently_removed -= dropped
            body["dropRecentBrokersRequest"] = f"Dropped recently removed brokers: {sorted(dropped)}"
        body["version"] = 1
        return body

    def sampling(self, endpoint: str, params: Mapping[str, str]) -> dict:
        """pause_sampling / resume_sampling (synchronous): the MonitorState's state and reason follow."""
        reason = params.get("reason", "")
        if endpoint == "pause_sampling":
            changed = self.monitor.pause(reason)
            message = "Metric sampling paused." if changed else "Metric sampling was already paused."
        else:
            changed = self.monitor.resume(reason)
            message = "Metric sampling resumed." if changed else "Metric sampling was not paused."
        return {"message": message, "version": 1}

    def stop_execution(self) -> dict:
        """The stop_proposal_execution body (synchronous)."""
        stopped = self.executor.stop()
        return {"message": "Proposal execution stopped." if stopped else "No ongoing proposal execution to stop.",
                "version": 1}
