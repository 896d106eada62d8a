"""Topic configs: validation (LogConfig.validate) and resolution override -> broker synonym -> default."""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from pylog.common.broker_keys import BROKER_CONFIGS
from pylog.common.configdef import ConfigError, to_string
from pylog.common.topic_keys import TOPIC_CONFIGS, TOPIC_SYNONYMS

__all__ = ["BrokerValues", "validate_topic_config", "topic_config_value", "effective_topic_config"]


class BrokerValues(Protocol):
    """What topic resolution needs from a broker config: typed effective values by key."""

    def get(self, name: str) -> Any:
        """Typed value of a broker key, None when unset without default."""


def validate_topic_config(props: Mapping[str, str]) -> dict[str, Any]:
    """LogConfig.validate for CreateTopics / AlterConfigs / kafka-configs: names, values, cross-checks.

    Returns the typed values of the given keys.
    """
    for name in props:
        if name not in TOPIC_CONFIGS:
            raise ConfigError(f"Unknown topic config name: {name}", key=name)
    typed = {name: key.parse(props[name]) for name, key in TOPIC_CONFIGS.items() if name in props}
    lo = typed.get("min.compaction.lag.ms", TOPIC_CONFIGS["min.compaction.lag.ms"].default)
    hi = typed.get("max.compaction.lag.ms", TOPIC_CONFIGS["max.compaction.lag.ms"].default)
    if lo > hi:
        raise ConfigError(f"conflict topic config setting min.compaction.lag.ms ({lo}) > "
                          f"max.compaction.lag.ms ({hi})", key="min.compaction.lag.ms")
    return typed


def topic_config_value(name: str, broker_config: BrokerValues | None) -> Any:
    """The typed value topic key `name` gets from the broker (first synonym set, converted) or the default."""
    key = TOPIC_CONFIGS[name]
    if broker_config is None or name == "message.format.version":
        # Kafka ignores log.message.format.version with inter-broker protocol >= 3.0 (always, here).
        return key.default
    value = None
    for syn in TOPIC_SYNONYMS[name]:
        raw = broker_config.get(syn.name)
        if raw is not None:
            value = raw * syn.factor if syn.factor != 1 else raw
            break
    if value is None:
        # Every key has a non-null default on at least one synonym; the topic default mirrors it.
        value = key.default
    if name == "retention.ms" and value < 0:
        return -1
    return value


class _DynamicOverlay:
    """Broker values with dynamic broker-level values (strings) laid over them."""

    def __init__(self, base: BrokerValues | None, dynamic: Mapping[str, str]) -> None:
        self.base = base
        self.dynamic = {n: BROKER_CONFIGS[n].parse(v) for n, v in dynamic.items()
                        if n in BROKER_CONFIGS and BROKER_CONFIGS[n].dynamic_scope is not None}

    def get(self, name: str) -> Any:
        if name in self.dynamic:
            return self.dynamic[name]
        return self.base.get(name) if self.base is not None else BROKER_CONFIGS[name].default


def effective_topic_config(topic_overrides: Mapping[str, str], broker_config: BrokerValues | None,
                           dynamic_broker_values: Mapping[str, str] | None = None) -> dict[str, str]:
    """Every topic key's effective value as a string: the override, else the broker synonym, else the default.

    `dynamic_broker_values` (per-broker merged over cluster default, as strings) is laid over
    broker_config; BrokerConfig.with_dynamic does the same and also keeps DescribeConfigs sources.
    Unknown override keys are ignored (Kafka keeps serving topics whose znode has stale keys);
    a malformed value of a known key raises ConfigError.
    """
    broker: BrokerValues | None = broker_config
    if dynamic_broker_values:
        broker = _DynamicOverlay(broker_config, dynamic_broker_values)
    out: dict[str, str] = {}
    for name, key in TOPIC_CONFIGS.items():
        value = key.parse(topic_overrides[name]) if name in topic_overrides else topic_config_value(name, broker)
        out[name] = to_string(value, key.type) or ""
    return out
