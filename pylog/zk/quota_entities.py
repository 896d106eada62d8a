"""Client quota entities in ZooKeeper (/config/users, /config/clients), as Kafka's ZkAdminManager and
AdminZkClient read and write them: the brokers' Describe/AlterClientQuotas and pylog-configs.sh
--entity-type users|clients share this.

An entity is a mapping {"user": name, "client-id": name} with one or both types; a None name is the
default entity (`<default>` in ZooKeeper). Quota keys share the user znode with SCRAM credentials,
so a write merges into what is there. Blocking: call from an executor.
"""

from __future__ import annotations

import math
import urllib.parse
from typing import Any, Mapping

from pylog.common.configdef import java_double_str
from pylog.zk import errors

PRODUCE, FETCH, REQUEST, MUTATION = ("producer_byte_rate", "consumer_byte_rate", "request_percentage",
                                     "controller_mutation_rate")
QUOTA_KEYS = (PRODUCE, FETCH, REQUEST, MUTATION)
DEFAULT = "<default>"


def sanitize(name: str) -> str:
    """Kafka's Sanitizer: the znode name of a user principal or client id."""
    return urllib.parse.quote(name, safe="")

USER, CLIENT_ID = "user", "client-id"
LONG_KEYS = (PRODUCE, FETCH)  # ConfigDef LONG; request_percentage and controller_mutation_rate are DOUBLE


class InvalidQuota(ValueError):
    """An entity or op Kafka refuses with INVALID_REQUEST; the message is Kafka's."""


def znode_of(entity: Mapping[str, str | None]) -> tuple[str, str]:
    """(config entity type, entity name) of a user, client-id or user/client-id entity."""
    if not entity or set(entity) - {USER, CLIENT_ID}:
        raise InvalidQuota(f"Invalid quota entity {dict(entity)}: only user and client-id are supported")
    def name(kind: str) -> str:
        value = entity[kind]
        return DEFAULT if value is None else sanitize(value)
    if USER in entity:
        return "users", name(USER) + (f"/clients/{name(CLIENT_ID)}" if CLIENT_ID in entity else "")
    return "clients", name(CLIENT_ID)


def stored_value(key: str, value: float) -> str:
    """The string ZkAdminManager stores for a quota value: the byte rates as (value + 1e-6) truncated to a
    long, refused when that is more than 1e-6 off (so negative ones too, as in Kafka); the others as
    Double.toString."""
    if key not in QUOTA_KEYS:
        raise InvalidQuota(f"Invalid configuration key {key}")
    if key in LONG_KEYS:
        epsilon = 1e-6
        integral = int(value + epsilon) if math.isfinite(value) else None
        if integral is None or abs(integral - value) > epsilon:
            raise InvalidQuota(f"Configuration {key} must be a LONG value")  # ConfigDef.Type's name
        return str(integral)
    return java_double_str(float(value))


def write(zk: Any, entity: Mapping[str, str | None], ops: list[tuple[str, float | None]]) -> None:
    """Apply (key, value) ops (None removes) to an entity's znode and notify the brokers."""
    entity_type, name = znode_of(entity)
    props = dict(zk.get_entity_config(entity_type, name))
    for key, value in ops:
        if value is None:
            props.pop(key, None)
        else:
            props[key] = stored_value(key, value)
    zk.set_or_create_entity_config(entity_type, name, props)
    zk.create_config_change_notification(f"{entity_type}/{name}")


def user_clients(zk: Any, user: str) -> list[str]:
    """The client znodes under one user znode (its <user, client-id> pairs), sorted."""
    try:
        return sorted(zk.get_children(f"/config/users/{user}/clients"))
    except errors.NoNodeError:
        return []


def _entity_name(stored: str) -> str | None:
    return None if stored == DEFAULT else urllib.parse.unquote(stored)


def read_all(zk: Any) -> list[tuple[dict[str, str | None], dict[str, float]]]:
    """Every entity with a quota key: (entity, {key: value}), users before clients."""
    found: list[tuple[dict[str, str | None], dict[str, float]]] = []

    def add(entity: dict[str, str | None], entity_type: str, name: str) -> None:
        config = zk.get_entity_config(entity_type, name)
        values = {k: float(v) for k, v in config.items() if k in QUOTA_KEYS}
        if values:
            found.append((entity, values))

    for user in zk.get_all_entities_with_config("users"):
        add({USER: _entity_name(user)}, "users", user)
        for client in user_clients(zk, user):
            add({USER: _entity_name(user), CLIENT_ID: _entity_name(client)}, "users", f"{user}/clients/{client}")
    for client in zk.get_all_entities_with_config("clients"):
        add({CLIENT_ID: _entity_name(client)}, "clients", client)
    return found
