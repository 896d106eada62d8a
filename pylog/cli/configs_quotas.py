"""pylog-configs for client quotas: `--entity-type users|clients` with producer_byte_rate, consumer_byte_rate,
request_percentage or controller_mutation_rate, as kafka-configs.sh manages them.

Through --bootstrap-server the quotas go as Describe/AlterClientQuotas (Kafka 3.x's texts); through
--zookeeper they are written to /config/users/<user>[/clients/<id>] or /config/clients/<id> with a
change notification (Kafka 2.8's path and texts). `--entity-default` names the default user or client.
Users' SCRAM keys in the same command are handed to pylog.cli.configs_users.
"""

from __future__ import annotations

from typing import Any

from pylog.zk.quota_entities import CLIENT_ID, DEFAULT, QUOTA_KEYS, USER, InvalidQuota, sanitize, stored_value, write
from pylog.cli.admin_client import BrokerAdmin, check_error
from pylog.cli.common import OperationError
from pylog.cli.results import ConfigsAltered, ConfigsDescribed, ConfigView, EntityConfigs, QuotaEntity, QuotasDescribed
from pylog.protocol.api import ApiKey
from pylog.zk.client import ZkClient

EXACT, DEFAULT_MATCH, SPECIFIED = 0, 1, 2


def split_keys(to_set: dict[str, str], to_delete: list[str]) -> tuple[dict[str, float | None], dict, list]:
    """(quota ops, other keys to set, other keys to delete); a quota value that is no number is refused."""
    ops: dict[str, float | None] = {}
    for key, value in to_set.items():
        if key in QUOTA_KEYS:
            try:
                ops[key] = float(value)
                stored_value(key, ops[key])
            except (ValueError, InvalidQuota) as exc:
                raise OperationError(f"Invalid value {value} for configuration {key}: {exc}") from None
    ops.update({k: None for k in to_delete if k in QUOTA_KEYS})
    return ops, {k: v for k, v in to_set.items() if k not in QUOTA_KEYS}, [k for k in to_delete if k not in QUOTA_KEYS]


def _entity(entity_type: str, name: str) -> dict[str, str | None]:
    """The quota entity of `--entity-type users|clients` with a name ('' = --entity-default)."""
    return {USER if entity_type == "users" else CLIENT_ID: None if name in ("", DEFAULT) else name}


class QuotasZkService:
    """Quotas straight in ZooKeeper (kafka-configs.sh --zookeeper)."""

    via = "zookeeper"

    def __init__(self, zk: ZkClient, users: Any = None) -> None:
        self.zk = zk
        self.users = users  # SCRAM credentials (users only)

    def describe(self, entity_type: str, name: str | None, all_: bool) -> ConfigsDescribed:
        """Configs for user-principal 'alice' are producer_byte_rate=1024 (2.8's text: every stored key)."""
        names = [DEFAULT if name == "" else sanitize(name)] if name is not None else \
            self.zk.get_all_entities_with_config(entity_type)
        configs = self.zk.get_entity_configs(entity_type, names)
        return ConfigsDescribed([EntityConfigs(entity_type, n, [ConfigView(k, v, False) for k, v in sorted(c.items())])
                                 for n, c in configs.items() if c], all_, self.via)

    def alter(self, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> ConfigsAltered:
        """Write the quota keys (SCRAM keys go to the users service) and notify the brokers."""
        ops = _quota_ops(self.users, entity_type, name, to_set, to_delete)
        if ops:
            write(self.zk, _entity(entity_type, name), list(ops.items()))
        return ConfigsAltered(entity_type, name or DEFAULT, to_set, to_delete, self.via)


def _quota_ops(users: Any, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> dict:
    """The quota keys to write; a user's SCRAM keys in the same command go to the users service now."""
    ops, others, other_deletes = split_keys(to_set, to_delete)
    if others or other_deletes:
        if users is None or entity_type != "users":
            raise OperationError(f"Invalid config(s): {','.join([*others, *other_deletes])}")
        users.alter(entity_type, name, others, other_deletes)
    return ops


class QuotasBrokerService:
    """Describe/AlterClientQuotas through a broker (kafka-configs.sh --bootstrap-server)."""

    via = "bootstrap-server"

    def __init__(self, admin: BrokerAdmin, users: Any = None) -> None:
        self.admin = admin
        self.users = users

    def describe(self, entity_type: str, name: str | None, all_: bool) -> QuotasDescribed:
        """Quota configs for user-principal 'alice' are producer_byte_rate=1024.0 (3.x's text)."""
        kind = USER if entity_type == "users" else CLIENT_ID
        match = (SPECIFIED, None) if name is None else (DEFAULT_MATCH, None) if name == "" else (EXACT, name)
        resp = self.admin.client.call(ApiKey.DescribeClientQuotas, lambda cls, v: cls(components=[
            cls.ComponentData(entity_type=kind, match_type=match[0], match=match[1])], strict=True))
        check_error(resp.error_code, resp.error_message)
        entities = []
        for entry in resp.entries or []:
            names = {e.entity_type: e.entity_name for e in entry.entity}
            entities.append(QuotaEntity(names.get(USER), names.get(CLIENT_ID), USER in names, CLIENT_ID in names,
                                        {v.key: v.value for v in entry.values}))
        scram = self.users.describe(entity_type, name or None, all_) if self.users is not None and name != "" else None
        return QuotasDescribed(entities, scram)

    def alter(self, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> ConfigsAltered:
        """AlterClientQuotas for the quota keys; SCRAM keys go to the users service."""
        ops = _quota_ops(self.users, entity_type, name, to_set, to_delete)
        if ops:
            entity = _entity(entity_type, name)
            resp = self.admin.client.call(ApiKey.AlterClientQuotas, lambda cls, v: cls(entries=[cls.EntryData(
                entity=[cls.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
                ops=[cls.EntryData.OpData(key=k, value=val or 0.0, remove=val is None) for k, val in ops.items()])],
                validate_only=False))
            for entry in resp.entries:
                check_error(entry.error_code, entry.error_message)
        return ConfigsAltered(entity_type, name, to_set, to_delete, self.via)
