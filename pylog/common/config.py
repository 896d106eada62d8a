"""Broker and topic configuration: typed, validated, layered like Kafka's KafkaConfig/LogConfig.

Layers, most specific first: dynamic per-broker (/config/brokers/<id>), dynamic cluster default
(/config/brokers/<default>), static (server.properties plus --override), built-in default.
Dynamic layers only ever hold keys that are dynamically updatable (others are dropped with a
warning, as Kafka does). Topic configs resolve override -> broker synonym -> default.

Run `python -m pylog.common.config --example` to print server.properties.example.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Mapping

from pylog.common.broker_keys import BROKER_CONFIGS, BROKER_GROUPS, NO_EFFECT
from pylog.common.configdef import ConfigError, ConfigKey, Importance, Password, Type
from pylog.common.describe import (
    ConfigEntry, ConfigSource, ConfigSynonym, broker_synonym_names, describe_broker_config, describe_topic_config,
)
from pylog.common.dynamic import (
    DYNAMIC_CLUSTER_KEYS, DYNAMIC_PER_BROKER_KEYS, filter_dynamic_layer, validate_dynamic_broker_config,
)
from pylog.common.kafka_names import is_kafka_only_key
from pylog.common.listeners import Listener, parse_csv_list, parse_listeners, parse_protocol_map
from pylog.common.topic_config import effective_topic_config, topic_config_value, validate_topic_config
from pylog.common.topic_keys import TOPIC_CONFIGS, TOPIC_SYNONYMS, Synonym

__all__ = [
    "BROKER_CONFIGS", "BROKER_GROUPS", "TOPIC_CONFIGS", "TOPIC_SYNONYMS", "Synonym", "ConfigKey", "ConfigError",
    "Type", "Importance", "Password", "Listener", "NO_EFFECT", "BrokerConfig", "DYNAMIC_PER_BROKER_KEYS",
    "DYNAMIC_CLUSTER_KEYS", "validate_dynamic_broker_config", "validate_topic_config", "effective_topic_config",
    "topic_config_value", "unknown_key_warning", "ConfigEntry", "ConfigSource", "ConfigSynonym",
    "broker_synonym_names", "describe_broker_config", "describe_topic_config",
]

logger = logging.getLogger(__name__)


def unknown_key_warning(name: str) -> str:
    """Kafka's AbstractConfig.logUnused text (3.3) for a key nobody knows."""
    return f"The configuration '{name}' was supplied but isn't a known config."


def _is_listener_override(name: str) -> bool:
    """listener.name.<l>.<key> for a key pylog reads, or a listener's SASL login (<l>.<mechanism>.sasl.jaas.config)."""
    if not name.startswith("listener.name."):
        return False
    rest = name[len("listener.name."):].partition(".")[2]
    return rest in BROKER_CONFIGS or rest.endswith(".sasl.jaas.config")


def _require(ok: bool, message: str) -> None:
    """Scala's require(): Kafka prints these as "requirement failed: <message>"."""
    if not ok:
        raise ConfigError(f"requirement failed: {message}")


class BrokerConfig:
    """A validated broker configuration. Typed values via `cfg.get("num.partitions")` or `cfg.num_partitions`.

    Derived values follow KafkaConfig: `listeners`/`advertised_listeners` (parsed), `log_dirs`,
    `log_retention_ms`, `log_roll_ms`, `log_roll_jitter_ms`, `log_flush_interval_ms`,
    `zookeeper_connection_timeout_ms`, `inter_broker_listener_name`. The raw key of a derived name
    stays available through `get` (e.g. `cfg.get("log.retention.ms")` is None unless set).
    """

    def __init__(self, static_props: Mapping[str, str], dynamic_broker: Mapping[str, str] | None = None,
                 dynamic_default: Mapping[str, str] | None = None, *, log_unknown: bool = True) -> None:
        self.originals: dict[str, str] = dict(static_props)
        self.warnings: list[str] = []
        self.ignored: list[str] = []
        self.dynamic_default = self._dynamic_layer(dynamic_default or {}, per_broker=False)
        self.dynamic_broker = self._dynamic_layer(dynamic_broker or {}, per_broker=True)
        self._values: dict[str, Any] = {}
        for name, key in BROKER_CONFIGS.items():
            self._values[name] = key.parse(self.raw(name))
        for name in self.originals:
            if name in BROKER_CONFIGS or _is_listener_override(name):
                continue
            if is_kafka_only_key(name):
                self.ignored.append(name)
            elif log_unknown:
                self._warn(unknown_key_warning(name))
            else:
                self.warnings.append(unknown_key_warning(name))
        self._validate()

    @classmethod
    def from_props(cls, props: Mapping[str, str], overrides: Mapping[str, str] | None = None) -> "BrokerConfig":
        """Build from server.properties contents plus command-line overrides (which win)."""
        merged = dict(props)
        merged.update(overrides or {})
        return cls(merged)

    def with_dynamic(self, dynamic_broker: Mapping[str, str] | None = None,
                     dynamic_default: Mapping[str, str] | None = None) -> "BrokerConfig":
        """A new config with replaced dynamic layers (None keeps the current layer, {} clears it)."""
        # The static layer was already reported when this config was built; do not log it again.
        return BrokerConfig(self.originals,
                            self.dynamic_broker if dynamic_broker is None else dynamic_broker,
                            self.dynamic_default if dynamic_default is None else dynamic_default,
                            log_unknown=False)

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        logger.warning("%s", message)

    def _dynamic_layer(self, props: Mapping[str, str], per_broker: bool) -> dict[str, str]:
        """Drop what may not come from this layer, like DynamicBrokerConfig.fromPersistentProps."""
        kept, problems = filter_dynamic_layer(props, per_broker)
        for message in problems:
            self._warn(message)
        return kept

    def raw(self, name: str) -> str | None:
        """The string value of `name` from the most specific layer that sets it (None if none does)."""
        for layer in (self.dynamic_broker, self.dynamic_default, self.originals):
            if name in layer:
                return layer[name]
        return None

    def get(self, name: str) -> Any:
        """Typed effective value of a BROKER_CONFIGS key (None when unset without a default)."""
        try:
            return self._values[name]
        except KeyError:
            raise KeyError(f"{name} is not a pylog broker config") from None

    def __getattr__(self, attr: str) -> Any:
        # Only called for names that are not real attributes: num_partitions -> "num.partitions".
        name = attr.replace("_", ".")
        values = self.__dict__.get("_values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(f"{type(self).__name__!s} has no attribute {attr!r}")

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | {n.replace(".", "_") for n in BROKER_CONFIGS})

    def __repr__(self) -> str:
        return f"BrokerConfig(broker.id={self.broker_id}, listeners={self.get('listeners')!r})"

    # ---- values Kafka derives from several keys -------------------------------------------------
    @property
    def broker_id(self) -> int:
        """broker.id as configured (-1 asks for a generated id)."""
        return int(self._values["broker.id"])

    @property
    def zookeeper_connection_timeout_ms(self) -> int:
        """zookeeper.connection.timeout.ms, defaulting to zookeeper.session.timeout.ms."""
        value = self._values["zookeeper.connection.timeout.ms"]
        return int(value if value is not None else self._values["zookeeper.session.timeout.ms"])

    @property
    def log_dirs(self) -> list[str]:
        """log.dirs if set, else log.dir, split on commas."""
        value = self._values["log.dirs"]
        return parse_csv_list(value if value is not None else self._values["log.dir"])

    @property
    def log_retention_ms(self) -> int:
        """log.retention.ms, else minutes, else hours, in ms; any negative result means -1 (forever)."""
        return int(topic_config_value("retention.ms", self))

    @property
    def log_roll_ms(self) -> int:
        """log.roll.ms, else log.roll.hours in ms."""
        return int(topic_config_value("segment.ms", self))

    @property
    def log_roll_jitter_ms(self) -> int:
        """log.roll.jitter.ms, else log.roll.jitter.hours in ms."""
        return int(topic_config_value("segment.jitter.ms", self))

    @property
    def log_flush_interval_ms(self) -> int:
        """log.flush.interval.ms, else log.flush.scheduler.interval.ms."""
        return int(topic_config_value("flush.ms", self))

    @property
    def protocol_map(self) -> dict[str, str]:
        """listener.security.protocol.map parsed: {LISTENER_NAME: PROTOCOL}."""
        return parse_protocol_map(self._values["listener.security.protocol.map"])

    @property
    def listeners(self) -> list[Listener]:
        """Parsed listeners (host None = all interfaces)."""
        return parse_listeners(self._values["listeners"], self.protocol_map)

    @property
    def advertised_listeners(self) -> list[Listener]:
        """advertised.listeners if set, else listeners (the broker fills in a host for host None)."""
        value = self._values["advertised.listeners"]
        if value is None:
            return self.listeners
        return parse_listeners(value, self.protocol_map, require_distinct_ports=False)

    @property
    def inter_broker_listener_name(self) -> str:
        """The listener brokers use to reach each other."""
        name = self._values["inter.broker.listener.name"]
        if name is not None:
            return str(name).upper()
        return str(self._values["security.inter.broker.protocol"])

    def describe(self, per_broker: bool = True, include_synonyms: bool = True) -> list[ConfigEntry]:
        """DescribeConfigs entries for this broker (or, per_broker=False, for the cluster default entity)."""
        return describe_broker_config(self.originals, self.dynamic_broker, self.dynamic_default, per_broker,
                                      include_synonyms)

    def topic_defaults(self) -> dict[str, str]:
        """What a topic without overrides gets (effective_topic_config with no overrides)."""
        return effective_topic_config({}, self)

    # ---- KafkaConfig.validateValues -------------------------------------------------------------
    def _validate(self) -> None:
        v = self._values
        if v["zookeeper.connect"] is None:
            raise ConfigError("Missing required configuration `zookeeper.connect` which has no default value.",
                              key="zookeeper.connect")
        if v["broker.id.generation.enable"]:
            _require(-1 <= v["broker.id"] <= v["reserved.broker.max.id"],
                     "broker.id must be greater than or equal to -1 and not greater than reserved.broker.max.id")
        else:
            _require(v["broker.id"] >= 0, "broker.id must be greater than or equal to 0")
        _require(self.log_roll_ms >= 1, "log.roll.ms must be greater than or equal to 1")
        _require(self.log_roll_jitter_ms >= 0, "log.roll.jitter.ms must be greater than or equal to 0")
        _require(self.log_retention_ms >= 1 or self.log_retention_ms == -1,
                 "log.retention.ms must be unlimited (-1) or, greater than or equal to 1")
        _require(bool(self.log_dirs), "At least one log directory must be defined via log.dirs or log.dir.")
        _require(v["replica.fetch.wait.max.ms"] <= v["replica.socket.timeout.ms"],
                 "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms to prevent "
                 "unnecessary socket timeouts")
        _require(v["replica.fetch.wait.max.ms"] <= v["replica.lag.time.max.ms"],
                 "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms to "
                 "prevent frequent changes in ISR")
        self._validate_consumer_groups()
        self._validate_listeners()

    def _validate_consumer_groups(self) -> None:
        """KIP-848's bounds, with Kafka's (GroupCoordinatorConfig) messages."""
        v = self._values
        _require("classic" in v["group.coordinator.rebalance.protocols"],
                 "group.coordinator.rebalance.protocols must contain classic")
        for what in ("session.timeout.ms", "heartbeat.interval.ms"):
            key, lo, hi = f"group.consumer.{what}", f"group.consumer.min.{what}", f"group.consumer.max.{what}"
            _require(v[hi] >= v[lo], f"{hi} must be greater than or equal to {lo}")
            _require(v[lo] <= v[key] <= v[hi], f"{key} must be between {lo} and {hi}")
        _require(v["group.consumer.heartbeat.interval.ms"] < v["group.consumer.session.timeout.ms"],
                 "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms")

    def _validate_listeners(self) -> None:
        listeners = self.listeners
        advertised = self.advertised_listeners
        if self._values["inter.broker.listener.name"] is not None:
            if self.raw("security.inter.broker.protocol") is not None:
                raise ConfigError("Only one of inter.broker.listener.name and security.inter.broker.protocol "
                                  "should be set.", key="inter.broker.listener.name")
            if self.inter_broker_listener_name not in self.protocol_map:
                raise ConfigError(f"Listener with name {self.inter_broker_listener_name} defined in "
                                  "inter.broker.listener.name not found in listener.security.protocol.map.",
                                  key="inter.broker.listener.name")
        adv_names = [a.name for a in advertised]
        names = [lst.name for lst in listeners]
        _require(self.inter_broker_listener_name in adv_names,
                 "inter.broker.listener.name must be a listener name defined in advertised.listeners. The valid "
                 f"options based on currently configured listeners are {','.join(adv_names)}")
        _require(set(adv_names) <= set(names),
                 "advertised.listeners listener names must be equal to or a subset of the ones defined in listeners. "
                 f"Found {','.join(adv_names)}. The valid options based on the current configuration are "
                 f"{','.join(names)}")
        _require(all(a.host != "0.0.0.0" for a in advertised),
                 "advertised.listeners cannot use the nonroutable meta-address 0.0.0.0. Use a routable IP address.")


def _main(argv: list[str]) -> int:
    """`python -m pylog.common.config --example` prints server.properties.example."""
    if argv == ["--example"]:
        from pylog.common.example import render_example

        sys.stdout.write(render_example())
        return 0
    sys.stderr.write("usage: python -m pylog.common.config --example\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
