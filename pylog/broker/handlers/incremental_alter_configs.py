"""IncrementalAlterConfigs: v0-1 (KIP-339; v1 is flexible).

Behavior (ZooKeeper mode, ZkAdminManager.incrementalAlterConfigs): any broker handles topics, by
rewriting /config/topics/<t> and leaving a /config/changes notification that every broker (and
the controller) applies without a restart. Broker resources are this broker's id (clients send
them to that broker; other ids get INVALID_REQUEST, as in Kafka) or "" for the cluster default
(/config/brokers/<default>). Operations: SET (0), DELETE (1), APPEND (2) and SUBTRACT (3), the
last two only for LIST keys. Each resource gets its own error code and message:
INVALID_REQUEST (duplicate resources or keys, null values, unsupported types or operations),
UNKNOWN_TOPIC_OR_PARTITION, INVALID_CONFIG (naming the key, with Kafka's "Invalid config value for
resource ConfigResource(...)" prefix for bad values). validate_only checks without writing.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Mapping, Sequence

from pylog.broker.handlers import handler
from pylog.broker.metadata_cache import MetadataCache
from pylog.broker.services import HandlerContext
from pylog.broker.zk_calls import run_zk
from pylog.common.broker_keys import BROKER_CONFIGS
from pylog.common.configdef import ConfigError, ConfigKey, Type, to_string
from pylog.common.dynamic import validate_dynamic_broker_config
from pylog.common.topic_config import validate_topic_config
from pylog.common.topic_keys import TOPIC_CONFIGS
from pylog.protocol.api import ApiKey, response_class
from pylog.common.errors import ErrorCode, KafkaError
from pylog.security.authorizer import config_refusal
from pylog.zk import paths
from pylog.zk.admin import AdminZkClient

log = logging.getLogger("pylog.admin")

TOPIC, BROKER = 2, 4
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_TYPE_NAMES = {0: "UNKNOWN", 1: "UNKNOWN", 2: "TOPIC", 3: "GROUP", 4: "BROKER", 8: "BROKER_LOGGER",
               16: "CLIENT_METRICS"}
_OP_NAMES = {APPEND: "append", SUBTRACT: "subtract"}


def _invalid_request(message: str) -> KafkaError:
    return KafkaError(message, code=ErrorCode.INVALID_REQUEST)


def apply_operations(current: Mapping[str, str], ops: Sequence[tuple[str, int, str | None]],
                     keys: Mapping[str, ConfigKey]) -> dict[str, str]:
    """prepareIncrementalConfigs: the new override map after SET/DELETE/APPEND/SUBTRACT (pure).

    APPEND/SUBTRACT start from the current value, else the key's default, and treat the value as
    a comma-separated list (SUBTRACT removes one occurrence per listed item, like Scala's diff).
    """
    out = dict(current)
    for name, op, value in ops:
        if op == SET:
            out[name] = value or ""
        elif op == DELETE:
            out.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            key = keys.get(name)
            if key is None or key.type is not Type.LIST:
                raise _invalid_request(f"Config value {_OP_NAMES[op]} is not allowed for config key: {name}")
            old = out[name] if name in out else (to_string(key.default, Type.LIST) or "")
            items = [v for v in old.split(",") if v]
            change = [v for v in (value or "").split(",") if v]
            if op == APPEND:
                items += change
            else:
                for v in change:
                    if v in items:
                        items.remove(v)
            out[name] = ",".join(items)
        else:
            raise _invalid_request(f"Unknown config operation type {op} for config key: {name}")
    return out


def _resource(type_id: int, name: str) -> str:
    return f"ConfigResource(type={_TYPE_NAMES.get(type_id, 'UNKNOWN')}, name='{name}')"


def _config_error(type_id: int, name: str, exc: ConfigError) -> KafkaError:
    text = str(exc)
    if text.startswith("Unknown topic config name"):  # InvalidConfigurationException, reported as is
        return KafkaError(text, code=ErrorCode.INVALID_CONFIG)
    return KafkaError(f"Invalid config value for resource {_resource(type_id, name)}: {text}",
                      code=ErrorCode.INVALID_CONFIG)


def preprocess(res, incremental: bool = True) -> None:
    """ConfigAdminManager.preprocess checks that do not need ZooKeeper (AlterConfigs allows no null value)."""
    names = [c.name for c in res.configs]
    if len(set(names)) != len(names):
        raise _invalid_request("Error due to duplicate config keys")
    nulls = [c.name for c in res.configs if c.value is None and not (incremental and c.config_operation == DELETE)]
    if nulls:
        raise _invalid_request("Null value not supported for : " + ", ".join(nulls))
    if res.resource_type not in (TOPIC, BROKER):
        raise _invalid_request(f"AlterConfigs is only supported for topics and brokers, but resource type is "
                               f"{_TYPE_NAMES.get(res.resource_type, 'UNKNOWN')}")


Update = Callable[[Mapping[str, str], Mapping[str, ConfigKey]], dict[str, str]]  # (current overrides, keys) -> new


class ConfigAlterer:
    """Reads, changes, validates and writes one resource's overrides (blocking; run in a thread).

    `update` turns the stored overrides into the new ones: the incremental operations, or (the
    legacy AlterConfigs) the request's entries replacing them all.
    """

    def __init__(self, admin: AdminZkClient, broker_id: int, metadata: MetadataCache, validate_only: bool) -> None:
        self.admin = admin
        self.broker_id = broker_id
        self.metadata = metadata
        self.validate_only = validate_only

    def topic(self, name: str, update: Update) -> None:
        """Change a topic's overrides (/config/topics/<name>)."""
        if not name:
            raise _invalid_request("Default topic resources are not allowed.")
        if name not in self.metadata.topics:
            raise KafkaError(f"The topic '{name}' does not exist.", code=ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
        new = update(self.admin.fetch_entity_config("topics", name), TOPIC_CONFIGS)
        try:
            validate_topic_config(new)
        except ConfigError as exc:
            raise _config_error(TOPIC, name, exc) from None
        if not self.validate_only:
            log.info("Updating topic %s with new configuration : %s", name, new)
            self.admin.change_entity_config("topics", name, new)

    def broker_config(self, name: str, update: Update) -> None:
        """Change this broker's dynamic configs ("": the cluster default)."""
        per_broker = name != ""
        if per_broker:
            if not name.lstrip("-").isdigit():
                raise _invalid_request(f"Broker id must be an integer, but it is: {name}")
            if int(name) != self.broker_id:
                raise _invalid_request(f"Unexpected broker id, expected {self.broker_id}, "
                                       f"but received {name}")
        entity = name if per_broker else paths.DEFAULT_ENTITY
        new = update(self.admin.fetch_entity_config("brokers", entity), BROKER_CONFIGS)
        try:
            validate_dynamic_broker_config(new, per_broker=per_broker)
        except ConfigError as exc:
            raise _config_error(BROKER, name, exc) from None
        if not self.validate_only:
            log.info("Updating %s dynamic config: %s", f"broker {name}" if per_broker else "default broker", new)
            self.admin.change_entity_config("brokers", entity, new)


async def alter_resources(ctx: HandlerContext, req, update_for: Callable[[Any], Update], incremental: bool):
    """Both AlterConfigs flavours: alter each resource on its own, answer its error code and message."""
    api = ApiKey.IncrementalAlterConfigs if incremental else ApiKey.AlterConfigs
    cls = response_class(api)[ctx.header.api_version]
    log.info("%s v%d for %d resources from %s (validate_only=%s)", api.name, ctx.header.api_version,
             len(req.resources), ctx.header.client_id, req.validate_only)
    seen: dict[tuple[int, str], int] = {}
    for res in req.resources:
        key = (res.resource_type, res.resource_name)
        seen[key] = seen.get(key, 0) + 1
    broker = ctx.broker
    alterer = ConfigAlterer(AdminZkClient(broker.zk), broker.broker_id, broker.metadata, req.validate_only)
    responses = []
    for res in req.resources:
        err, msg = ErrorCode.NONE, None
        try:
            if seen[(res.resource_type, res.resource_name)] > 1:
                raise _invalid_request("Each resource must appear at most once.")
            refusal = config_refusal(ctx, "ALTER_CONFIGS", res.resource_type, res.resource_name)
            if refusal is not None:
                raise KafkaError(refusal[1], code=refusal[0])
            preprocess(res, incremental)
            fn = alterer.topic if res.resource_type == TOPIC else alterer.broker_config
            await run_zk(broker.zk.connect, fn, res.resource_name, update_for(res))
        except KafkaError as exc:
            err, msg = exc.code, exc.message
        except Exception as exc:  # ZooKeeper trouble or a bug: this resource fails, the others proceed
            log.exception("Error processing %salter configs request for resource %s",
                          "incremental " if incremental else "", _resource(res.resource_type, res.resource_name))
            err, msg = ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)
        responses.append(cls.AlterConfigsResourceResponse(error_code=int(err), error_message=msg,
                                                          resource_type=res.resource_type,
                                                          resource_name=res.resource_name))
    return cls(throttle_time_ms=0, responses=responses)


@handler(ApiKey.IncrementalAlterConfigs, 0, 1)
async def handle_incremental_alter_configs(ctx: HandlerContext, req):
    """Change topic and broker configs through ZooKeeper, operation by operation."""
    def update_for(res) -> Update:
        ops = [(c.name, c.config_operation, c.value) for c in res.configs]
        return lambda current, keys: apply_operations(current, ops, keys)
    return await alter_resources(ctx, req, update_for, incremental=True)
