"""cruisecontrol.properties: the keys pylog's balancer reads, under Cruise Control's names and defaults.

Keys pylog does not read are refused rather than ignored: a Cruise Control file copied here may name
samplers, goals or capacity files that would silently do nothing, and an operator must know that.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pylog.common import properties


class ConfigError(ValueError):
    """A cruisecontrol.properties problem; the message is one line meant for the operator."""


def _int(lo: int, hi: int = 2**63 - 1) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text)
        if not lo <= value <= hi:
            raise ValueError(f"must be between {lo} and {hi}")
        return value
    return parse


def _ratio(text: str) -> float:
    value = float(text)
    if value < 1.0:
        raise ValueError("must be >= 1.0 (a ratio to the average)")
    return value


def _fraction(text: str) -> float:
    value = float(text)
    if not 0.0 < value <= 1.0:
        raise ValueError("must be in (0, 1] (a share of the capacity)")
    return value


def _bool(text: str) -> bool:
    if text.lower() not in ("true", "false"):
        raise ValueError("must be true or false")
    return text.lower() == "true"


def _text(text: str) -> str:
    if not text:
        raise ValueError("must not be empty")
    return text


def _regex(text: str) -> str:
    try:
        re.compile(text)
    except re.error as exc:
        raise ValueError(f"must be a regular expression ({exc})") from None
    return text


def _goals(text: str) -> str:
    from pylog.balancer.analyzer import ProposalError, parse_goals  # the analyzer imports this module
    try:
        parse_goals(_text(text))
    except ProposalError as exc:
        raise ValueError(f"must name goals pylog provides: {exc}") from None
    return text


def _prefix(text: str) -> str:
    if not text.startswith("/") or not text.endswith("/*"):
        raise ValueError("must look like /kafkacruisecontrol/*")
    return text


# key -> (Cruise Control's default, parser); None = unset (default.replication.throttle: no throttle)
KEYS: dict[str, tuple[Any, Callable[[str], Any]]] = {
    "bootstrap.servers": (None, _text),
    "zookeeper.connect": (None, _text),
    "webserver.http.address": ("127.0.0.1", _text),
    "webserver.http.port": (9090, _int(0, 65535)),
    "webserver.api.urlprefix": ("/kafkacruisecontrol/*", _prefix),
    "webserver.request.maxBlockTimeMs": (10000, _int(0)),
    "webserver.session.maxExpiryTimeMs": (60000, _int(1)),
    "max.active.user.tasks": (5, _int(1)),
    "anomaly.detection.interval.ms": (300000, _int(1)),
    "goal.violation.detection.interval.ms": (None, _int(1)),  # unset: anomaly.detection.interval.ms
    "self.healing.enabled": (False, _bool),
    "self.healing.broker.failure.enabled": (None, _bool),
    "self.healing.disk.failure.enabled": (None, _bool),
    "self.healing.goal.violation.enabled": (None, _bool),
    "self.healing.topic.anomaly.enabled": (None, _bool),
    "self.healing.metric.anomaly.enabled": (None, _bool),
    "self.healing.target.topic.replication.factor": (3, _int(1, 32767)),
    "topic.excluded.from.replication.factor.check": ("", _regex),
    # pylog's slow-broker test (slow.py): Produce p99 over this many times the peers' median, and over this floor.
    "slow.broker.latency.ratio": (5.0, _ratio),
    "slow.broker.latency.min.ms": (100, _int(0)),
    "anomaly.detection.goals": ("RackAwareGoal,ReplicaDistributionGoal,TopicReplicaDistributionGoal,"
                                "LeaderReplicaDistributionGoal", _goals),
    "broker.failure.alert.threshold.ms": (900000, _int(0)),
    "broker.failure.self.healing.threshold.ms": (1800000, _int(0)),
    "num.concurrent.partition.movements.per.broker": (5, _int(1)),
    "num.concurrent.leader.movements": (1000, _int(1)),
    "max.num.cluster.movements": (1250, _int(1)),
    "default.replication.throttle": (None, _int(1)),
    "execution.progress.check.interval.ms": (10000, _int(1)),
    "replica.count.balance.threshold": (1.10, _ratio),
    "leader.replica.count.balance.threshold": (1.10, _ratio),
    "disk.balance.threshold": (1.10, _ratio),
    "network.inbound.balance.threshold": (1.10, _ratio),
    "network.outbound.balance.threshold": (1.10, _ratio),
    "disk.capacity.threshold": (0.8, _fraction),
    "network.inbound.capacity.threshold": (0.8, _fraction),
    "network.outbound.capacity.threshold": (0.8, _fraction),
    "max.replicas.per.broker": (10000, _int(1)),
    # The load monitor (pylog/balancer/monitor.py): how often it reads the samples, and the span it keeps.
    "metric.sampling.interval.ms": (120000, _int(1)),
    "partition.metrics.window.ms": (300000, _int(1)),
    "num.partition.metrics.windows": (5, _int(1)),
    # Cruise Control's JSON capacity file (brokerCapacities[]: DISK in MB, NW_IN/NW_OUT in KB/s).
    "capacity.config.file": (None, _text),
}


@dataclass(frozen=True)
class BalancerConfig:
    """The parsed file: `values` maps every key of KEYS to its value (defaults filled in)."""

    values: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def url_prefix(self) -> str:
        """The path the endpoints live under, without the trailing '/*' (e.g. /kafkacruisecontrol)."""
        return str(self.values["webserver.api.urlprefix"])[:-2]

    def self_healing_for(self, anomaly_type: str) -> bool:
        """The per-anomaly switch (self.healing.broker.failure.enabled for BROKER_FAILURE), falling back to
        self.healing.enabled as Cruise Control does."""
        specific = self.values[f"self.healing.{anomaly_type.lower().replace('_', '.')}.enabled"]
        return bool(self.values["self.healing.enabled"] if specific is None else specific)

    def self_healing_for_broker_failure(self) -> bool:
        """BROKER_FAILURE's switch."""
        return self.self_healing_for("BROKER_FAILURE")


def parse(props: Mapping[str, str], source: str = "cruisecontrol.properties") -> BalancerConfig:
    """Validate the keys and values; the first problem raises ConfigError naming the key."""
    for key in props:
        if key not in KEYS:
            raise ConfigError(f"{source}: unknown key {key!r} (pylog's balancer reads: see "
                              f"config/cruisecontrol.properties)")
    values: dict[str, Any] = {}
    for key, (default, conv) in KEYS.items():
        if key not in props:
            values[key] = default
            continue
        try:
            values[key] = conv(props[key].strip())
        except ValueError as exc:
            reason = str(exc) if "must" in str(exc) else "not a valid value"
            raise ConfigError(f"{source}: invalid value {props[key]!r} for {key}: {reason}") from None
    if values["bootstrap.servers"] is None:
        raise ConfigError(f"{source}: bootstrap.servers is required")
    if values["broker.failure.self.healing.threshold.ms"] < values["broker.failure.alert.threshold.ms"]:
        raise ConfigError(f"{source}: broker.failure.self.healing.threshold.ms must be >= "
                          f"broker.failure.alert.threshold.ms")
    return BalancerConfig(values)


def load(path: str | os.PathLike[str]) -> BalancerConfig:
    """Read and validate a cruisecontrol.properties file."""
    try:
        props = properties.load(path)
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc.strerror}") from None
    return parse(props, os.path.basename(str(path)))
