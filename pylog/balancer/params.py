"""Cruise Control's endpoints and the parameters each accepts (names case-insensitive; others refused)."""

from __future__ import annotations

import re
from collections.abc import Mapping

COMMON = {"json", "get_response_schema", "doas", "reason"}
KOPT = {"allow_capacity_estimation", "verbose", "exclude_recently_demoted_brokers"}
GOAL = KOPT | {"goals", "use_ready_default_goals", "data_from", "excluded_topics",
               "exclude_recently_removed_brokers", "fast_mode"}
EXEC = {"dryrun", "concurrent_partition_movements_per_broker", "max_partition_movements_in_cluster",
        "concurrent_leader_movements", "broker_concurrent_leader_movements", "execution_progress_check_interval_ms",
        "skip_hard_goal_check", "replica_movement_strategies", "replication_throttle", "review_id",
        "stop_ongoing_execution"}
# threshold_only: pylog's own (threshold.py), Cruise Control has no such mode.
PROPOSALS = GOAL | {"kafka_assigner", "destination_broker_ids", "ignore_proposal_cache", "rebalance_disk",
                    "threshold_only", "skip_hard_goal_check"}

GET_ENDPOINTS = {
    "state": {"substates", "verbose", "super_verbose"},
    "load": {"start", "end", "time", "allow_capacity_estimation", "populate_disk_info", "capacity_only"},
    "kafka_cluster_state": {"verbose", "topic"},
    "proposals": PROPOSALS,
    "partition_load": {"resource", "start", "end", "entries", "topic", "partition", "min_valid_partition_ratio",
                       "allow_capacity_estimation", "max_load", "avg_load", "brokerid"},
    "user_tasks": {"user_task_ids", "client_ids", "endpoints", "types", "entries", "fetch_completed_task"},
}
POST_ENDPOINTS = {
    "rebalance": PROPOSALS | EXEC | {"concurrent_intra_broker_partition_movements"},
    "add_broker": {"brokerid", "kafka_assigner", "throttle_added_broker"} | EXEC | GOAL,
    "remove_broker": {"brokerid", "kafka_assigner", "throttle_removed_broker", "destination_broker_ids"} | EXEC | GOAL,
    "fix_offline_replicas": EXEC | GOAL,
    "pause_sampling": {"review_id"},
    "resume_sampling": {"review_id"},
    "stop_proposal_execution": {"review_id", "force_stop", "stop_external_agent"},
    "demote_broker": {"brokerid", "brokerid_and_logdirs", "skip_urp_demotion", "exclude_follower_demotion", "dryrun",
                      "concurrent_leader_movements", "broker_concurrent_leader_movements",
                      "execution_progress_check_interval_ms", "review_id", "stop_ongoing_execution",
                      "replica_movement_strategies"} | KOPT,
    "admin": {"enable_self_healing_for", "disable_self_healing_for", "drop_recently_removed_brokers",
              "drop_recently_demoted_brokers", "concurrent_partition_movements_per_broker",
              "concurrent_leader_movements", "max_partition_movements_in_cluster", "review_id",
              "enable_concurrency_adjuster_for", "disable_concurrency_adjuster_for",
              "min_isr_based_concurrency_adjustment"},
}
ANOMALY_TYPES = ("BROKER_FAILURE", "DISK_FAILURE", "GOAL_VIOLATION", "MAINTENANCE_EVENT", "METRIC_ANOMALY",
                 "TOPIC_ANOMALY")
SUBSTATES = ("MONITOR", "EXECUTOR", "ANALYZER", "ANOMALY_DETECTOR")


class ParamError(ValueError):
    """A bad request parameter; the message is Cruise Control-like and one line."""


def check(endpoint: str, params: Mapping[str, str]) -> dict[str, str]:
    """Lower-case the names and refuse those the endpoint does not take."""
    allowed = (GET_ENDPOINTS.get(endpoint) or POST_ENDPOINTS[endpoint]) | COMMON
    lowered = {k.lower(): v for k, v in params.items()}
    unknown = sorted(k for k in lowered if k not in allowed)
    if unknown:
        raise ParamError(f"Unrecognized endpoint parameters in {endpoint} request: {unknown}.")
    return lowered


def flag(params: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean parameter; cccli sends Python's True/False, so any case is accepted."""
    value = params.get(name)
    if value is None or value == "":
        return default
    if value.lower() not in ("true", "false"):
        raise ParamError(f"{name} must be true or false, not {value!r}")
    return value.lower() == "true"


def number(params: Mapping[str, str], name: str, default: int | None) -> int | None:
    """A positive integer parameter."""
    value = params.get(name)
    if value is None or value == "":
        return default
    if not value.isdigit() or int(value) <= 0:
        raise ParamError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def broker_ids(params: Mapping[str, str], name: str = "brokerid") -> list[int]:
    """A comma-separated broker id list (required)."""
    text = params.get(name, "")
    items = [i.strip() for i in text.split(",") if i.strip()]
    if not items or not all(i.isdigit() for i in items):
        raise ParamError(f"{name} must be a comma-separated list of broker ids, not {text!r}")
    return sorted({int(i) for i in items})


def pattern(params: Mapping[str, str], name: str) -> re.Pattern | None:
    """A regular-expression parameter (excluded_topics, topic)."""
    text = params.get(name)
    if not text:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise ParamError(f"{name} is not a valid regular expression: {exc}") from None


def substates(params: Mapping[str, str]) -> list[str]:
    """The state endpoint's substates (all when none given)."""
    text = params.get("substates")
    if not text:
        return list(SUBSTATES)
    wanted = [s.strip().upper() for s in text.split(",") if s.strip()]
    bad = [s for s in wanted if s not in SUBSTATES]
    if bad:
        raise ParamError(f"Unsupported substates {bad}; choose from {list(SUBSTATES)}")
    return wanted


def anomaly_types(params: Mapping[str, str], name: str) -> set[str]:
    """An anomaly-type list (admin's enable/disable_self_healing_for)."""
    wanted = {t.strip().upper() for t in params.get(name, "").split(",") if t.strip()}
    bad = sorted(wanted - set(ANOMALY_TYPES))
    if bad:
        raise ParamError(f"{name}: unknown anomaly types {bad}; choose from {list(ANOMALY_TYPES)}")
    return wanted


def partition_range(params: Mapping[str, str]) -> tuple[int, int] | None:
    """partition_load's `partition`: one partition id or an inclusive range `lo-hi`."""
    text = params.get("partition", "").strip()
    if not text:
        return None
    lo, _, hi = text.partition("-")
    if not lo.isdigit() or (hi and not hi.isdigit()):
        raise ParamError(f"partition must be a partition id or a range like 0-5, not {text!r}")
    return int(lo), int(hi or lo)
