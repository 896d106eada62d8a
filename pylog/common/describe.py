"""DescribeConfigs entries for topics and brokers: values, sources and synonyms as Kafka reports them.

Mirrors Kafka's ConfigHelper (ZK mode): a config's synonyms are listed source by source
(dynamic per-broker, dynamic default, static, default), then everything before the first entry
for the config's own primary name is dropped - which is why, with only log.retention.hours set,
retention.ms reports DEFAULT_CONFIG with no synonyms. The first synonym is the source.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any, Mapping, NamedTuple, Protocol

from pylog.common.broker_keys import BROKER_CONFIGS
from pylog.common.configdef import ConfigError, Type, to_string
from pylog.common.dynamic import filter_dynamic_layer, is_non_dynamic
from pylog.common.topic_config import effective_topic_config
from pylog.common.topic_keys import TOPIC_CONFIGS, TOPIC_SYNONYMS

__all__ = ["ConfigSource", "ConfigSynonym", "ConfigEntry", "LayeredBrokerConfig", "broker_synonym_names",
           "describe_topic_config", "describe_broker_config"]


class ConfigSource(enum.IntEnum):
    """DescribeConfigsResponse.ConfigSource wire ids (v1+)."""

    UNKNOWN = 0
    TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    DYNAMIC_TOPIC_CONFIG = 1  # the Admin client's name for TOPIC_CONFIG (an alias of it)

    @property
    def admin_name(self) -> str:
        """The name kafka-configs prints (admin ConfigEntry.ConfigSource): TOPIC_CONFIG -> DYNAMIC_TOPIC_CONFIG."""
        return "DYNAMIC_TOPIC_CONFIG" if self is ConfigSource.TOPIC_CONFIG else self.name


class ConfigSynonym(NamedTuple):
    """One place a value could come from; str() is kafka-configs' "SOURCE:name=value"."""

    name: str
    value: str | None
    source: ConfigSource

    def __str__(self) -> str:
        return f"{self.source.admin_name}:{self.name}={'null' if self.value is None else self.value}"


@dataclass(frozen=True)
class ConfigEntry:
    """One DescribeConfigs result entry. is_default is Admin's ConfigEntry.isDefault (source == DEFAULT_CONFIG)."""

    name: str
    value: str | None
    source: ConfigSource
    is_default: bool
    is_sensitive: bool
    read_only: bool
    synonyms: tuple[ConfigSynonym, ...]
    config_type: Type | None = None
    documentation: str | None = None


class LayeredBrokerConfig(Protocol):
    """What describe needs from a broker config (BrokerConfig provides it)."""

    originals: dict[str, str]
    dynamic_broker: dict[str, str]
    dynamic_default: dict[str, str]

    def get(self, name: str) -> Any:
        """Typed effective value."""


# DynamicBrokerConfig.brokerConfigSynonyms: keys that are one setting in several units.
_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.roll.jitter.ms", "log.roll.jitter.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)
_DEFAULT_STRINGS = {n: k.default_string for n, k in BROKER_CONFIGS.items() if k.default is not None}


def broker_synonym_names(name: str) -> list[str]:
    """The broker keys that set the same thing as `name`, highest priority first."""
    for group in _SYNONYM_GROUPS:
        if name in group:
            return list(group)
    if name == "log.flush.interval.ms":
        # Only this direction: log.flush.scheduler.interval.ms is also a setting of its own.
        return ["log.flush.interval.ms", "log.flush.scheduler.interval.ms"]
    if name.startswith("listener.name.") and name.count(".") >= 3:
        return [name, name.split(".", 3)[3]]
    return [name]


def _layers(broker: LayeredBrokerConfig | None, static: Mapping[str, str] | None = None,
            dyn_broker: Mapping[str, str] | None = None,
            dyn_default: Mapping[str, str] | None = None) -> list[tuple[ConfigSource, Mapping[str, str]]]:
    if broker is not None:
        static, dyn_broker, dyn_default = broker.originals, broker.dynamic_broker, broker.dynamic_default
    return [(ConfigSource.DYNAMIC_BROKER_CONFIG, dyn_broker or {}),
            (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, dyn_default or {}),
            (ConfigSource.STATIC_BROKER_CONFIG, static or {}),
            (ConfigSource.DEFAULT_CONFIG, _DEFAULT_STRINGS)]


def _config_synonyms(name: str, names: list[str], layers: list[tuple[ConfigSource, Mapping[str, str]]],
                     sensitive: bool) -> list[ConfigSynonym]:
    found = [ConfigSynonym(n, None if sensitive else layer[n], source)
             for source, layer in layers for n in names if n in layer]
    while found and found[0].name != name:
        found.pop(0)
    return found


def _entry(name: str, value: str | None, synonyms: list[ConfigSynonym], sensitive: bool, read_only: bool,
           type_: Type | None, doc: str | None, include_synonyms: bool) -> ConfigEntry:
    source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(name, None if sensitive else value, source, source == ConfigSource.DEFAULT_CONFIG,
                       sensitive, read_only, tuple(synonyms) if include_synonyms else (), type_, doc)


def describe_topic_config(topic_overrides: Mapping[str, str], broker_config: LayeredBrokerConfig | None,
                          include_synonyms: bool = True) -> list[ConfigEntry]:
    """All of a topic's configs (TOPIC_CONFIGS order, then unknown override keys) with sources and synonyms.

    kafka-topics' `Configs:` is the entries with `not is_default`; kafka-configs --describe (without
    --all) shows those whose source is TOPIC_CONFIG.
    """
    layers = _layers(broker_config)
    values = effective_topic_config(topic_overrides, broker_config)
    out: list[ConfigEntry] = []
    for name, key in TOPIC_CONFIGS.items():
        syns = TOPIC_SYNONYMS[name]
        synonyms = []
        if syns:
            primary = syns[0].name
            synonyms = _config_synonyms(primary, broker_synonym_names(primary), layers, sensitive=False)
        if name in topic_overrides:
            synonyms.insert(0, ConfigSynonym(name, values[name], ConfigSource.TOPIC_CONFIG))
        out.append(_entry(name, values[name], synonyms, False, False, key.type, key.doc, include_synonyms))
    for name, raw in topic_overrides.items():
        if name not in TOPIC_CONFIGS:
            out.append(_entry(name, raw, [ConfigSynonym(name, raw, ConfigSource.TOPIC_CONFIG)], False, False,
                              None, None, include_synonyms))
    return out


def _is_read_only(name: str) -> bool:
    """Not dynamically updatable; custom keys count as read-only (Kafka: not in AllDynamicConfigs)."""
    return name not in BROKER_CONFIGS and not name.startswith("listener.name.") or is_non_dynamic(name)


def _typed_string(name: str, raw: str | None) -> str | None:
    """A broker key's value as Kafka renders the parsed value; raw text for keys pylog does not know."""
    key = BROKER_CONFIGS.get(name)
    if key is None:
        return raw
    try:
        return to_string(key.parse(raw), key.type)
    except ConfigError:
        return raw


def describe_broker_config(static_props: Mapping[str, str], dynamic_broker: Mapping[str, str] | None = None,
                           dynamic_default: Mapping[str, str] | None = None, per_broker: bool = True,
                           include_synonyms: bool = True) -> list[ConfigEntry]:
    """DescribeConfigs for a broker: per_broker=True describes broker <id> (every key, effective values);
    per_broker=False describes the cluster default entity (only keys set in dynamic_default).

    The dynamic layers are what ZooKeeper holds; keys that may not come from them are left out first.
    """
    dynamic_broker = filter_dynamic_layer(dynamic_broker or {}, per_broker=True)[0]
    dynamic_default = filter_dynamic_layer(dynamic_default or {}, per_broker=False)[0]
    layers = _layers(None, static_props, dynamic_broker, dynamic_default)
    if not per_broker:
        out = []
        for name, raw in dynamic_default.items():
            key = BROKER_CONFIGS.get(name)
            sensitive = key is not None and key.type.is_sensitive
            synonyms = [s for s in _config_synonyms(name, broker_synonym_names(name), layers, sensitive)
                        if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG]
            out.append(_entry(name, raw, synonyms, sensitive, _is_read_only(name), key.type if key else None,
                              key.doc if key else None, include_synonyms))
        return out
    names = list(BROKER_CONFIGS)
    for layer in (static_props, dynamic_default, dynamic_broker):
        names.extend(n for n in layer if n not in BROKER_CONFIGS and n not in names)
    out = []
    for name in names:
        key = BROKER_CONFIGS.get(name)
        sensitive = key is not None and key.type.is_sensitive
        raw = next((layer[name] for _, layer in layers[:3] if name in layer), None)
        synonyms = _config_synonyms(name, broker_synonym_names(name), layers, sensitive)
        out.append(_entry(name, _typed_string(name, raw), synonyms, sensitive, _is_read_only(name),
                          key.type if key else None, key.doc if key else None, include_synonyms))
    return out
