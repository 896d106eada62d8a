"""pylog-configs' operations: through ZooKeeper (Kafka 2.8's ConfigCommand --zookeeper) and through a broker
(3.x: DescribeConfigs and IncrementalAlterConfigs).

Every update is validated here first with pylog.common.config, so an unknown name or a bad value is
refused with its name before anything is written. Entity names: a topic, a broker id, or '' for
the brokers' cluster-wide default entity.
"""

from __future__ import annotations

from typing import Mapping, Sequence

from pylog.cli.admin_client import BROKER_RESOURCE, TOPIC_RESOURCE, BrokerAdmin, DescribedConfig
from pylog.cli.results import ConfigsAltered, ConfigsDescribed, ConfigSynonymView, ConfigView, EntityConfigs
from pylog.common.config import BROKER_CONFIGS, ConfigError, ConfigSource, validate_dynamic_broker_config
from pylog.common.kafka_names import is_kafka_only_key
from pylog.common.topic_config import validate_topic_config
from pylog.zk import admin as zk_admin
from pylog.zk import paths
from pylog.zk.client import ZkClient


def dynamic_source(entity_type: str, name: str) -> ConfigSource:
    """What --describe shows without --all: the entries from the entity's own dynamic layer."""
    if entity_type == "topics":
        return ConfigSource.TOPIC_CONFIG
    return ConfigSource.DYNAMIC_BROKER_CONFIG if name else ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG


def validate_update(entity_type: str, name: str, to_set: Mapping[str, str]) -> None:
    """Refuse unknown names and invalid values (topics: LogConfig.validate; brokers: the dynamic rules)."""
    if entity_type == "topics":
        validate_topic_config(to_set)
        return
    for key in to_set:
        if key not in BROKER_CONFIGS and not is_kafka_only_key(key) and not key.startswith("listener.name."):
            raise ConfigError(f"Unknown broker config name: {key}", key=key)
    validate_dynamic_broker_config(to_set, per_broker=name != "")


def _check_deletes(existing: Sequence[str], to_delete: Sequence[str]) -> None:
    invalid = [k for k in to_delete if k not in existing]
    if invalid:
        raise ConfigError(f"Invalid config(s): {','.join(invalid)}")


class ZkConfigService:
    """Reads and writes /config/<type>/<name>, notifying brokers through /config/changes."""

    via = "zookeeper"

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk
        self.admin = zk_admin.AdminZkClient(zk, lambda c: validate_topic_config(dict(c)))

    @staticmethod
    def _znode_name(name: str) -> str:
        return paths.DEFAULT_ENTITY if name == "" else name

    def describe(self, entity_type: str, name: str | None, all_: bool) -> ConfigsDescribed:
        """Configs for topic 'foo' are k=v,... (every entity with a config znode when no name is given)."""
        znodes = [self._znode_name(name)] if name is not None else \
            self.zk.get_all_entities_with_config(entity_type)
        configs = self.zk.get_entity_configs(entity_type, znodes)
        # Results name the default entity '' in both modes; the ZooKeeper text still says "default brokers".
        return ConfigsDescribed([EntityConfigs(entity_type, "" if z == paths.DEFAULT_ENTITY else z,
                                               [ConfigView(k, v, False) for k, v in sorted(configs[z].items())])
                                 for z in znodes], all_, self.via)

    def alter(self, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> ConfigsAltered:
        """AdminZkClient.changeConfigs: merge into the entity's overrides, write, notify."""
        znode = self._znode_name(name)
        if entity_type == "topics":
            zk_admin.validate_topic_name(name)
        current = self.admin.fetch_entity_config(entity_type, znode)
        _check_deletes(list(current), to_delete)
        validate_update(entity_type, name, to_set)
        current.update(to_set)
        for key in to_delete:
            current.pop(key)
        self.admin.change_entity_config(entity_type, znode, current)
        return ConfigsAltered(entity_type, name, to_set, to_delete, self.via)


def _view(entry: DescribedConfig) -> ConfigView:
    return ConfigView(entry.name, entry.value, entry.is_sensitive, entry.source.admin_name,
                      [ConfigSynonymView(s.admin_name, n, v) for n, v, s in entry.synonyms])


class BrokerConfigService:
    """DescribeConfigs / IncrementalAlterConfigs through a broker (a broker's own configs go to that broker)."""

    via = "bootstrap-server"

    def __init__(self, admin: BrokerAdmin) -> None:
        self.admin = admin

    @staticmethod
    def _resource(entity_type: str, name: str) -> tuple[int, str]:
        return (TOPIC_RESOURCE if entity_type == "topics" else BROKER_RESOURCE, name)

    def _entries(self, entity_type: str, name: str, all_: bool, synonyms: bool) -> list[DescribedConfig]:
        """ConfigCommand.getResourceConfig: sorted by name, only the dynamic source unless --all."""
        if entity_type == "topics":
            zk_admin.validate_topic_name(name)
        resource = self._resource(entity_type, name)
        entries = self.admin.describe_configs([resource], include_synonyms=synonyms)[resource]
        source = dynamic_source(entity_type, name)
        return sorted((e for e in entries if all_ or e.source == source), key=lambda e: e.name)

    def describe(self, entity_type: str, name: str | None, all_: bool) -> ConfigsDescribed:
        """One entity, or every topic / every live broker plus the default entity."""
        if name is not None:
            names = [name]
        else:
            md = self.admin.metadata()
            names = sorted(md.topics) if entity_type == "topics" else [str(b) for b in sorted(md.brokers)] + [""]
        return ConfigsDescribed([EntityConfigs(entity_type, n, [_view(e) for e in
                                                                self._entries(entity_type, n, all_, True)])
                                 for n in names], all_, self.via)

    def alter(self, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> ConfigsAltered:
        """Check deletes against the dynamic entries, then IncrementalAlterConfigs SET/DELETE."""
        existing = [e.name for e in self._entries(entity_type, name, False, False)]
        _check_deletes(existing, to_delete)
        validate_update(entity_type, name, to_set)
        rtype, rname = self._resource(entity_type, name)
        self.admin.incremental_alter_configs(rtype, rname, to_set, to_delete)
        return ConfigsAltered(entity_type, name, to_set, to_delete, self.via)
