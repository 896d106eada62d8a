"""The JSON of ZooKeeper-mode Kafka's znodes: one frozen dataclass per znode with encode()/decode().

Byte-for-byte Kafka's output (ZkData.scala): compact JSON, strings where Kafka writes strings
(timestamps, /cluster/id's version, producer id blocks). Kafka encodes most of these from Scala hash
maps, so its key order is a hash order that differs between Scala builds; we write the key order of
the reference examples (../shared/reference/kafka-formats.md), and every decoder ignores key order.
Decoders raise ValueError naming the znode and the field. Plain-data znodes (/controller_epoch) get
functions instead of classes. Admin/notification znodes live in codecs_admin.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, NamedTuple, Sequence

from pylog.common.clock import now_ms
from pylog.zk import paths
from pylog.zk._json import JsonReader, dumps, is_int
from pylog.zk.uuids import base64_to_uuid

SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# LeaderAndIsr constants (kafka.api.LeaderAndIsr).
NO_LEADER = -1
LEADER_DURING_DELETE = -2
INITIAL_LEADER_EPOCH = 0
INITIAL_PARTITION_EPOCH = 0
# LeaderRecoveryState values; the state znode carries the field only when not RECOVERED.
RECOVERED = 0
RECOVERING = 1

# KafkaController.InitialControllerEpoch; /controller_epoch is created holding this value.
INITIAL_CONTROLLER_EPOCH = 0


class TopicPartition(NamedTuple):
    """A (topic, partition) pair; prints as Kafka's TopicPartition.toString, 'foo-0'."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


def _int_tuple(values: Sequence[int], what: str) -> tuple[int, ...]:
    """Copy a sequence of ints into a tuple, rejecting non-ints early (dataclass inputs)."""
    out = tuple(values)
    if not all(is_int(v) for v in out):
        raise ValueError(f"{what} must be integers, got {list(out)!r}")
    return out


# ---------------------------------------------------------------- /brokers/ids/<id>

# Kafka (Scala 2.13 mutable.HashMap) iteration order of BrokerIdZNode's keys, as in the reference example.
_BROKER_KEY_ORDER = ("features", "listener_security_protocol_map", "endpoints", "rack",
                     "jmx_port", "port", "host", "version", "timestamp")
# kafka.cluster.EndPoint's uriParseExp.
_ENDPOINT_RE = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class EndPoint:
    """One advertised listener: LISTENER://host:port plus its security protocol."""

    listener: str
    host: str | None
    port: int
    security_protocol: str = "PLAINTEXT"

    def connection_string(self) -> str:
        """'LISTENER://host:port', IPv6 hosts in brackets, a null host as empty (Kafka's EndPoint)."""
        if self.host is None:
            return f"{self.listener}://:{self.port}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener}://{host}:{self.port}"

    @classmethod
    def parse(cls, text: str, protocol_map: Mapping[str, str] | None = None,
              where: str = "endpoint") -> "EndPoint":
        """Parse 'LISTENER://host:port'; without a protocol map the listener name is the protocol."""
        m = _ENDPOINT_RE.match(text) if isinstance(text, str) else None
        if not m:
            raise ValueError(f"Malformed {where}: unable to parse {text!r} to a broker endpoint")
        listener, host, port = m.group(1), m.group(2), int(m.group(3))
        if protocol_map is None:
            protocol = listener
        elif listener in protocol_map:
            protocol = protocol_map[listener]
        else:
            raise ValueError(f"Malformed {where}: no security protocol defined for listener {listener}")
        if protocol not in SECURITY_PROTOCOLS:
            raise ValueError(f"Malformed {where}: unknown security protocol {protocol!r} for listener {listener}")
        return cls(listener, host or None, port, protocol)


@dataclass(frozen=True)
class BrokerRegistration:
    """/brokers/ids/<id> (BrokerIdZNode v5; decodes v1-v5). features maps name -> (min, max)."""

    broker_id: int
    endpoints: tuple[EndPoint, ...]
    rack: str | None = None
    jmx_port: int = -1
    timestamp_ms: int | None = None
    features: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    version: int = 5

    def __post_init__(self) -> None:
        object.__setattr__(self, "endpoints", tuple(self.endpoints))

    @property
    def path(self) -> str:
        """The znode this registration lives at."""
        return paths.broker_id(self.broker_id)

    def endpoint(self, listener: str) -> EndPoint | None:
        """The endpoint of a listener name, if advertised."""
        return next((e for e in self.endpoints if e.listener == listener), None)

    def encode(self) -> bytes:
        """Kafka's BrokerIdZNode.encode; top-level host/port come from the first PLAINTEXT endpoint."""
        if self.version not in (4, 5):
            raise ValueError(f"Only broker registration versions 4 and 5 can be written, not {self.version}")
        plain = next((e for e in self.endpoints if e.security_protocol == "PLAINTEXT"), None)
        values: dict[str, Any] = {
            "version": self.version,
            "host": plain.host if plain else None,
            "port": plain.port if plain else -1,
            "endpoints": [e.connection_string() for e in self.endpoints],
            "jmx_port": self.jmx_port,
            "timestamp": str(self.timestamp_ms if self.timestamp_ms is not None else now_ms()),
            "listener_security_protocol_map": {e.listener: e.security_protocol for e in self.endpoints},
        }
        if self.rack is not None:
            values["rack"] = self.rack
        if self.version >= 5:
            values["features"] = {name: {"min_version": lo, "max_version": hi}
                                  for name, (lo, hi) in self.features.items()}
        return dumps({k: values[k] for k in _BROKER_KEY_ORDER if k in values})

    @classmethod
    def decode(cls, broker_id: int, data: bytes, path: str | None = None) -> "BrokerRegistration":
        """Kafka's BrokerIdZNode.decode for versions 1-5 (broker_id comes from the path)."""
        r = JsonReader(data, path or paths.broker_id(broker_id))
        version = r.int("version")
        if version < 1:
            raise r.fail("version", f"has unsupported value {version}")
        if version == 1:
            endpoints: tuple[EndPoint, ...] = (
                EndPoint("PLAINTEXT", r.str("host", nullable=True), r.int("port"), "PLAINTEXT"),)
        else:
            protocol_map = None
            if r.has("listener_security_protocol_map"):
                raw = r.object("listener_security_protocol_map")
                if not all(isinstance(v, str) for v in raw.values()):
                    raise r.fail("listener_security_protocol_map", "must map listener names to strings")
                protocol_map = dict(raw)
            items = r.list("endpoints")
            endpoints = tuple(EndPoint.parse(e, protocol_map, f"{r.where}: field 'endpoints'") for e in items)
        features: dict[str, tuple[int, int]] = {}
        for name, rng in r.object("features", {}).items():
            fr = r.child(f"features.{name}", rng)
            features[name] = (fr.int("min_version"), fr.int("max_version"))
        return cls(broker_id=broker_id, endpoints=endpoints, rack=r.str("rack", None, nullable=True),
                   jmx_port=r.int("jmx_port", -1), timestamp_ms=r.int_or_numeric_string("timestamp", None),
                   features=features, version=version)


# ---------------------------------------------------------------- /controller, /controller_epoch

@dataclass(frozen=True)
class ControllerInfo:
    """/controller: which broker is the active controller (ControllerZNode)."""

    broker_id: int
    timestamp_ms: int | None = None

    def encode(self) -> bytes:
        """{"version":1,"brokerid":N,"timestamp":"<ms>"}; the timestamp is a string."""
        ts = self.timestamp_ms if self.timestamp_ms is not None else now_ms()
        return dumps({"version": 1, "brokerid": self.broker_id, "timestamp": str(ts)})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "ControllerInfo":
        """Parse /controller."""
        r = JsonReader(data, path or paths.controller())
        return cls(r.int("brokerid"), r.int_or_numeric_string("timestamp", None))


def encode_controller_epoch(epoch: int) -> bytes:
    """/controller_epoch holds the epoch as plain ASCII digits, not JSON."""
    if not is_int(epoch):
        raise ValueError(f"Controller epoch must be an integer, got {epoch!r}")
    return str(epoch).encode("ascii")


def decode_controller_epoch(data: bytes, path: str | None = None) -> int:
    """Parse /controller_epoch."""
    text = (data or b"").decode("ascii", errors="replace").strip()
    if not re.fullmatch(r"-?\d+", text):
        raise ValueError(f"Malformed {path or paths.controller_epoch()}: expected an integer, got {data!r}")
    return int(text)


# ---------------------------------------------------------------- /brokers/topics/<t>

# Key order of TopicZNode as in the reference example (a Scala 2.12 mutable.HashMap order).
_TOPIC_KEY_ORDER = ("removing_replicas", "partitions", "topic_id", "adding_replicas", "version")


def _partition_map(replicas: Mapping[int, Sequence[int]]) -> dict[str, list[int]]:
    """{"<p>":[...]} in descending partition order, as in the reference example."""
    return {str(p): list(replicas[p]) for p in sorted(replicas, reverse=True)}


@dataclass(frozen=True)
class TopicAssignment:
    """/brokers/topics/<t> (TopicZNode v3). During a reassignment `partitions` holds the full replica set."""

    partitions: Mapping[int, tuple[int, ...]]
    topic_id: str | None = None
    adding_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)
    removing_replicas: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Normalise: tuples everywhere, and empty adding/removing lists dropped (Kafka writes only non-empty).
        object.__setattr__(self, "partitions",
                           {int(p): _int_tuple(r, f"replicas of partition {p}") for p, r in self.partitions.items()})
        for name in ("adding_replicas", "removing_replicas"):
            value = getattr(self, name)
            object.__setattr__(self, name, {int(p): _int_tuple(r, f"{name} of partition {p}")
                                            for p, r in value.items() if len(r) > 0})
        if self.topic_id is not None:
            base64_to_uuid(self.topic_id)

    def replicas(self, partition: int) -> tuple[int, ...]:
        """Full replica list of a partition (empty if unknown)."""
        return self.partitions.get(partition, ())

    def adding(self, partition: int) -> tuple[int, ...]:
        """Replicas being added to a partition by a reassignment."""
        return self.adding_replicas.get(partition, ())

    def removing(self, partition: int) -> tuple[int, ...]:
        """Replicas being removed from a partition by a reassignment."""
        return self.removing_replicas.get(partition, ())

    def encode(self) -> bytes:
        """Kafka's TopicZNode.encode (version 3; topic_id only if known)."""
        values: dict[str, Any] = {
            "version": 3,
            "partitions": _partition_map(self.partitions),
            "adding_replicas": _partition_map(self.adding_replicas),
            "removing_replicas": _partition_map(self.removing_replicas),
        }
        if self.topic_id is not None:
            values["topic_id"] = self.topic_id
        return dumps({k: values[k] for k in _TOPIC_KEY_ORDER if k in values})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "TopicAssignment":
        """Parse versions 1-3; missing adding/removing default to empty, missing partitions to none."""
        r = JsonReader(data, path or "/brokers/topics/<topic>")
        r.int("version", 1)
        topic_id = r.str("topic_id", None, nullable=True)
        if topic_id is not None:
            try:
                base64_to_uuid(topic_id)
            except ValueError as e:
                raise r.fail("topic_id", str(e)) from None
        maps = {}
        for key in ("partitions", "adding_replicas", "removing_replicas"):
            parsed: dict[int, tuple[int, ...]] = {}
            for p, reps in r.object(key, {}).items():
                if not p.isdigit():
                    raise r.fail(key, f"has a non-numeric partition id {p!r}")
                parsed[int(p)] = r.check_int_list(f"{key}.{p}", reps)
            maps[key] = parsed
        return cls(maps["partitions"], topic_id, maps["adding_replicas"], maps["removing_replicas"])


# ---------------------------------------------------------------- .../partitions/<p>/state

_STATE_KEY_ORDER = ("controller_epoch", "leader", "version", "leader_recovery_state", "leader_epoch", "isr")


@dataclass(frozen=True)
class PartitionState:
    """.../partitions/<p>/state: LeaderAndIsr plus the controller epoch that wrote it.

    partition_epoch is the znode's zkVersion (not in the JSON): filled in when read, and used as the
    expected version of the next conditional update.
    """

    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    controller_epoch: int
    leader_recovery_state: int = RECOVERED
    partition_epoch: int = INITIAL_PARTITION_EPOCH

    def __post_init__(self) -> None:
        object.__setattr__(self, "isr", _int_tuple(self.isr, "isr"))

    def encode(self) -> bytes:
        """Kafka's TopicPartitionStateZNode.encode."""
        values: dict[str, Any] = {"version": 1, "leader": self.leader, "leader_epoch": self.leader_epoch,
                                  "controller_epoch": self.controller_epoch, "isr": list(self.isr)}
        if self.leader_recovery_state != RECOVERED:
            values["leader_recovery_state"] = self.leader_recovery_state
        return dumps({k: values[k] for k in _STATE_KEY_ORDER if k in values})

    @classmethod
    def decode(cls, data: bytes, zk_version: int = INITIAL_PARTITION_EPOCH,
               path: str | None = None) -> "PartitionState":
        """Parse a state znode; pass the znode's stat.version as zk_version."""
        r = JsonReader(data, path or "/brokers/topics/<topic>/partitions/<partition>/state")
        return cls(leader=r.int("leader"), leader_epoch=r.int("leader_epoch"), isr=r.int_list("isr"),
                   controller_epoch=r.int("controller_epoch"),
                   leader_recovery_state=r.int("leader_recovery_state", RECOVERED), partition_epoch=zk_version)


# ---------------------------------------------------------------- /config/<type>/<name>, /config/changes

@dataclass(frozen=True)
class ConfigEntity:
    """/config/<type>/<name>: {"version":1,"config":{...}}, every value a string."""

    config: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        bad = {k: v for k, v in self.config.items() if not isinstance(k, str) or not isinstance(v, str)}
        if bad:
            raise ValueError(f"Config keys and values must be strings, got {bad!r}")

    def encode(self) -> bytes:
        """Kafka's ConfigEntityZNode.encode (entries in the mapping's order)."""
        return dumps({"version": 1, "config": dict(self.config)})

    @classmethod
    def decode(cls, data: bytes | None, path: str | None = None) -> "ConfigEntity":
        """Parse; null or empty data means no overrides, as in Kafka."""
        if not data:
            return cls({})
        r = JsonReader(data, path or "/config/<type>/<name>")
        config = r.object("config", {})
        bad = [k for k, v in config.items() if not isinstance(v, str)]
        if bad:
            raise r.fail("config", f"values must be strings, not for {', '.join(bad)}")
        return cls(dict(config))


@dataclass(frozen=True)
class ConfigChangeNotification:
    """/config/changes/config_change_<seq>: v2 {"version":2,"entity_path":"topics/foo"} (v1 read too)."""

    entity_path: str

    @property
    def entity_type(self) -> str:
        """First segment of the entity path (topics, brokers, users, clients, ips)."""
        return self.entity_path.split("/", 1)[0]

    @property
    def entity_name(self) -> str:
        """Rest of the entity path (may itself contain '/clients/')."""
        return self.entity_path.split("/", 1)[1] if "/" in self.entity_path else ""

    def encode(self) -> bytes:
        """Version 2, as ZkAdminManager/AdminZkClient write it."""
        return dumps({"version": 2, "entity_path": self.entity_path})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "ConfigChangeNotification":
        """Parse v1 (entity_type + entity_name) or v2 (entity_path)."""
        r = JsonReader(data, path or paths.config_change_prefix() + "<seq>")
        if r.version((1, 2)) == 1:
            return cls(f"{r.str('entity_type')}/{r.str('entity_name')}")
        return cls(r.str("entity_path"))


# ---------------------------------------------------------------- /cluster/id

@dataclass(frozen=True)
class ClusterId:
    """/cluster/id: {"version":"1","id":"<22-char base64url>"}; the version is a string here."""

    id: str

    def encode(self) -> bytes:
        """Kafka's ClusterIdZNode.toJson."""
        return dumps({"version": "1", "id": self.id})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "ClusterId":
        """Parse /cluster/id (only the id matters)."""
        return cls(JsonReader(data, path or paths.cluster_id()).str("id"))


# ---------------------------------------------------------------- /latest_producer_id_block

PRODUCER_ID_BLOCK_SIZE = 1000  # Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
_LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class ProducerIdBlock:
    """/latest_producer_id_block: the last block of producer ids a broker reserved (ends inclusive)."""

    broker: int
    block_start: int
    block_end: int

    @classmethod
    def after(cls, previous: "ProducerIdBlock | None", broker: int) -> "ProducerIdBlock":
        """The block that follows `previous` (the first block starts at 0)."""
        start = 0 if previous is None else previous.block_end + 1
        if previous is not None and previous.block_end > _LONG_MAX - PRODUCER_ID_BLOCK_SIZE:
            raise ValueError(f"Exhausted all producer ids: the last reserved block ends at {previous.block_end}")
        return cls(broker, start, start + PRODUCER_ID_BLOCK_SIZE - 1)

    def encode(self) -> bytes:
        """Kafka's ProducerIdBlockZNode JSON; block_start and block_end are strings."""
        return dumps({"version": 1, "broker": self.broker, "block_start": str(self.block_start),
                      "block_end": str(self.block_end)})

    @classmethod
    def decode(cls, data: bytes, path: str | None = None) -> "ProducerIdBlock":
        """Parse /latest_producer_id_block."""
        r = JsonReader(data, path or paths.latest_producer_id_block())
        return cls(r.int("broker"), r.int_or_numeric_string("block_start"), r.int_or_numeric_string("block_end"))
