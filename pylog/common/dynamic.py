"""Dynamic broker configs: which keys may be set per broker or cluster-wide, and update validation."""

from __future__ import annotations

from typing import Any, Mapping

from pylog.common.broker_keys import BROKER_CONFIGS
from pylog.common.configdef import ConfigError
from pylog.common.kafka_dynamic_types import KAFKA_ONLY_DYNAMIC_TYPES
from pylog.common.kafka_names import KAFKA_ONLY_BROKER_KEYS, KAFKA_ONLY_DYNAMIC_CLUSTER, KAFKA_ONLY_DYNAMIC_PER_BROKER

__all__ = ["DYNAMIC_PER_BROKER_KEYS", "DYNAMIC_CLUSTER_KEYS", "is_non_dynamic", "is_per_broker_only",
           "validate_dynamic_broker_config", "filter_dynamic_layer"]

# pylog's keys by Kafka's "Dynamic Update Mode"; everything else in BROKER_CONFIGS is read-only.
DYNAMIC_PER_BROKER_KEYS = frozenset(k for k, c in BROKER_CONFIGS.items() if c.dynamic_scope == "per-broker")
DYNAMIC_CLUSTER_KEYS = frozenset(k for k, c in BROKER_CONFIGS.items() if c.dynamic_scope == "cluster-wide")
_KAFKA_ONLY_DYNAMIC = KAFKA_ONLY_DYNAMIC_CLUSTER | KAFKA_ONLY_DYNAMIC_PER_BROKER


def _scala_set(names: list[str]) -> str:
    """Scala's Set.toString, sorted so the message is deterministic."""
    return "Set(" + ", ".join(sorted(names)) + ")"


def is_non_dynamic(name: str) -> bool:
    """A known broker key that only server.properties may set (custom keys are not non-dynamic)."""
    key = BROKER_CONFIGS.get(name)
    if key is not None:
        return key.dynamic_scope is None
    return name in KAFKA_ONLY_BROKER_KEYS and name not in _KAFKA_ONLY_DYNAMIC


def is_per_broker_only(name: str) -> bool:
    """A key that may be set dynamically for one broker but not as the cluster default."""
    key = BROKER_CONFIGS.get(name)
    if key is not None:
        return key.dynamic_scope == "per-broker"
    return name in KAFKA_ONLY_DYNAMIC_PER_BROKER or name.startswith("listener.name.")


def validate_dynamic_broker_config(props: Mapping[str, str], per_broker: bool = True) -> dict[str, Any]:
    """Check an AlterConfigs/kafka-configs update for brokers (DynamicBrokerConfig.validateConfigs).

    Returns the typed values of pylog's keys. Keys Kafka defines but pylog does not use are checked
    against Kafka's type and range all the same. Unknown (custom) keys are allowed, as in Kafka.
    """
    non_dynamic = [n for n in props if is_non_dynamic(n)]
    if non_dynamic:
        raise ConfigError(f"Cannot update these configs dynamically: {_scala_set(non_dynamic)}", key=non_dynamic[0])
    typed = {n: BROKER_CONFIGS[n].parse(v) for n, v in props.items() if n in BROKER_CONFIGS}
    for n, v in props.items():
        if n in KAFKA_ONLY_DYNAMIC_TYPES:
            KAFKA_ONLY_DYNAMIC_TYPES[n].parse(v)
    if not per_broker:
        per_broker_only = [n for n in props if is_per_broker_only(n)]
        if per_broker_only:
            raise ConfigError("Cannot update these configs at default cluster level, broker id must be specified: "
                              f"{_scala_set(per_broker_only)}", key=per_broker_only[0])
    return typed


def filter_dynamic_layer(props: Mapping[str, str], per_broker: bool) -> tuple[dict[str, str], list[str]]:
    """Split a dynamic layer read from ZooKeeper into what applies and Kafka's messages for what does not."""
    kept = dict(props)
    problems: list[str] = []
    non_dynamic = [n for n in kept if is_non_dynamic(n)]
    if non_dynamic:
        problems.append(f"Non-dynamic configs configured in ZooKeeper will be ignored: {_scala_set(non_dynamic)}")
    per_broker_only = [] if per_broker else [n for n in kept if is_per_broker_only(n)]
    if per_broker_only:
        problems.append("Per-broker configs defined at default cluster level will be ignored: "
                        f"{_scala_set(per_broker_only)}")
    for n in non_dynamic + per_broker_only:
        kept.pop(n, None)
    return kept, problems
