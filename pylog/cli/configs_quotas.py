"""pylog-configs for client quotas: `--entity-type users|clients` with producer_byte_rate, consumer_byte_rate,
request_percentage or controller_mutation_rate, as kafka-configs.sh manages them.

Through --bootstrap-server the quotas go as Describe/AlterClientQuotas (Kafka 3.x's texts); through
--zookeeper they are written to /config/users/<user>[/clients/<id>] or /config/clients/<id> with a
change notification (Kafka 2.8's path and texts). `--entity-default` names the default user or client;
`--entity-type users ... --entity-type clients ...` (either order) is a <user, client-id> pair, each
--entity-name / --entity-default going with the --entity-type at its position, as in ConfigCommand.
Users' SCRAM keys in the same command are handed to pylog.cli.configs_users.
"""

from __future__ import annotations

import urllib.parse
from typing import Any

from pylog.zk.quota_entities import (CLIENT_ID, DEFAULT, LONG_KEYS, QUOTA_KEYS, USER, InvalidQuota, sanitize,
                                    stored_value, user_clients, write)
from pylog.cli.admin_client import BrokerAdmin, check_error
from pylog.cli.common import OperationError
from pylog.cli.results import (ConfigsAltered, ConfigsDescribed, ConfigView, EntityConfigs, PairAltered, PairConfigs,
                               QuotaEntity, QuotasDescribed)
from pylog.protocol.api import ApiKey
from pylog.zk.client import ZkClient

EXACT, DEFAULT_MATCH, SPECIFIED = 0, 1, 2


def split_keys(to_set: dict[str, str], to_delete: list[str], via_broker: bool = False
               ) -> tuple[dict[str, float | None], dict, list]:
    """(quota ops, other keys to set, other keys to delete). A quota value that is no number is refused with
    ConfigCommand's text (3.x, through a broker, which then checks the value itself) or with the config
    validation's (2.8, through ZooKeeper)."""
    ops: dict[str, float | None] = {}
    for key, value in to_set.items():
        if key in QUOTA_KEYS:
            try:
                ops[key] = float(value)
                if not via_broker:
                    stored_value(key, ops[key])
            except ValueError as exc:
                if via_broker:
                    raise OperationError(f"Cannot parse quota configuration value for {key}: {value}") from None
                reason = exc if isinstance(exc, InvalidQuota) else \
                    f"Not a number of type {'LONG' if key in LONG_KEYS else 'DOUBLE'}"  # ConfigDef's parse error
                raise OperationError(f"Invalid value {value} for configuration {key}: {reason}") from None
    ops.update({k: None for k in to_delete if k in QUOTA_KEYS})
    return ops, {k: v for k, v in to_set.items() if k not in QUOTA_KEYS}, [k for k in to_delete if k not in QUOTA_KEYS]


KINDS = {"users": USER, "clients": CLIENT_ID}


def _entity(types: list[str], names: list[str]) -> dict[str, str | None]:
    """The quota entity of `--entity-type users|clients` with one name each ('' = --entity-default)."""
    return {KINDS[t]: None if n in ("", DEFAULT) else n for t, n in zip(types, names)}


def _components(types: list[str], names: list[str]) -> list[tuple[str, int, str | None]]:
    """ConfigCommand.getAllClientQuotasConfigs' filter: each type with the name at its position ('' the default
    entity, no name: every entity of that type)."""
    out = []
    for i, entity_type in enumerate(types):
        name = names[i] if i < len(names) else None
        match = (SPECIFIED, None) if name is None else (DEFAULT_MATCH, None) if name == "" else (EXACT, name)
        out.append((KINDS[entity_type], *match))
    return out


def _user_first(types: list[str], names: list[str]) -> tuple[list[str], list[str]]:
    """ConfigCommand.parseClientQuotaEntity's order: a pair's user first (names swap only when both are given)."""
    if len(types) == 2 and types[0] == "clients":
        return types[::-1], names[::-1] if len(names) == 2 else names
    return types, names


def _shown(znode: str) -> str:
    """A pair's user or client znode name as ConfigCommand prints it ('' is the default entity)."""
    return "" if znode == DEFAULT else urllib.parse.unquote(znode)


class QuotasZkService:
    """Quotas straight in ZooKeeper (kafka-configs.sh --zookeeper)."""

    via = "zookeeper"

    def __init__(self, zk: ZkClient, users: Any = None) -> None:
        self.zk = zk
        self.users = users  # SCRAM credentials (a single user only)

    def describe(self, types: list[str], names: list[str], all_: bool) -> ConfigsDescribed:
        """Configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1024 (2.8's text: every
        stored key); entities without a key are left out."""
        out: list[EntityConfigs] = []
        for root, child in self._entities(types, names):
            entity_type = "users" if child is not None else types[0]
            config = self.zk.get_entity_config(entity_type, root if child is None else f"{root}/clients/{child}")
            views = [ConfigView(k, v, False) for k, v in sorted(config.items())]
            if views:
                out.append(EntityConfigs(entity_type, root, views) if child is None else
                           PairConfigs("users", _shown(root), views, _shown(child)))
        return ConfigsDescribed(out, all_, self.via)

    def _entities(self, types: list[str], names: list[str]) -> list[tuple[str, str | None]]:
        """ConfigEntity.getAllEntities: (user or client znode, the pair's client znode or None)."""
        types, names = _user_first(types, names)
        znodes = [DEFAULT if n == "" else sanitize(n) for n in names]
        roots = znodes[:1] or self.zk.get_all_entities_with_config(types[0])
        if len(types) == 1:
            return [(r, None) for r in roots]
        if len(znodes) == 2:
            return [(znodes[0], znodes[1])]
        return [(r, c) for r in roots for c in user_clients(self.zk, r)]

    def alter(self, types: list[str], names: list[str], to_set: dict[str, str], to_delete: list[str]
              ) -> ConfigsAltered:
        """Write the quota keys (SCRAM keys go to the users service) and notify the brokers."""
        ops = _quota_ops(self.users, names, to_set, to_delete)
        if ops:
            write(self.zk, _entity(types, names), list(ops.items()))
        if len(types) == 2:
            (_, user), (_, client) = zip(*_user_first(types, names))
            return PairAltered("users", user, to_set, to_delete, self.via, client_id=client)
        return ConfigsAltered(types[0], names[0] or DEFAULT, to_set, to_delete, self.via)


def _quota_ops(users: Any, names: list[str], to_set: dict[str, str], to_delete: list[str],
               via_broker: bool = False) -> dict:
    """The quota keys to write; a single user's SCRAM keys in the same command go to the users service now."""
    ops, others, other_deletes = split_keys(to_set, to_delete, via_broker=via_broker)
    if others or other_deletes:
        if users is None:
            raise OperationError(f"Invalid config(s): {','.join([*others, *other_deletes])}")
        users.alter("users", names[0], others, other_deletes)
    return ops


class QuotasBrokerService:
    """Describe/AlterClientQuotas through a broker (kafka-configs.sh --bootstrap-server)."""

    via = "bootstrap-server"

    def __init__(self, admin: BrokerAdmin, users: Any = None) -> None:
        self.admin = admin
        self.users = users  # SCRAM credentials (a single user only)

    def describe(self, types: list[str], names: list[str], all_: bool) -> QuotasDescribed:
        """Quota configs for user-principal 'alice', client-id 'app' are producer_byte_rate=1024.0 (3.x's text)."""
        entities = []
        for entry in self._entries(_components(types, names)):
            found = {e.entity_type: e.entity_name for e in entry.entity}
            entities.append(QuotaEntity(found.get(USER), found.get(CLIENT_ID), USER in found, CLIENT_ID in found,
                                        {v.key: v.value for v in entry.values}))
        # ConfigCommand lists SCRAM credentials only for users alone, not with --entity-default
        scram = self.users.describe("users", names[0] if names else None, all_) \
            if self.users is not None and "" not in names else None
        return QuotasDescribed(entities, scram)

    def alter(self, types: list[str], names: list[str], to_set: dict[str, str], to_delete: list[str]
              ) -> ConfigsAltered:
        """AlterClientQuotas for the quota keys; SCRAM keys go to the users service."""
        ops = _quota_ops(self.users, names, to_set, to_delete, via_broker=True)
        if ops:
            self._check_deletes(types, names, [k for k, v in ops.items() if v is None])
            entity = _entity(types, names)
            resp = self.admin.client.call(ApiKey.AlterClientQuotas, lambda cls, v: cls(entries=[cls.EntryData(
                entity=[cls.EntryData.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
                ops=[cls.EntryData.OpData(key=k, value=val or 0.0, remove=val is None) for k, val in ops.items()])],
                validate_only=False))
            for entry in resp.entries:
                check_error(entry.error_code, entry.error_message)
        # ConfigCommand names the first entity type and name only, pair or not
        return ConfigsAltered(types[0], names[0], to_set, to_delete, self.via)

    def _check_deletes(self, types: list[str], names: list[str], keys: list[str]) -> None:
        """ConfigCommand refuses to delete a quota the entity does not have (it reads the entity first)."""
        if not keys:
            return
        current = {v.key for entry in self._entries(_components(types, names)) for v in entry.values}
        missing = [k for k in keys if k not in current]
        if missing:
            raise OperationError(f"Invalid config(s): {','.join(missing)}")

    def _entries(self, components: list[tuple[str, int, str | None]]) -> list[Any]:
        """DescribeClientQuotas, strict: entities of exactly these types."""
        resp = self.admin.client.call(ApiKey.DescribeClientQuotas, lambda cls, v: cls(components=[
            cls.ComponentData(entity_type=kind, match_type=match, match=name) for kind, match, name in components],
            strict=True))
        check_error(resp.error_code, resp.error_message)
        return list(resp.entries or [])
