"""`meta.properties` in each log dir, and Kafka's broker/cluster id consistency checks.

ZK-mode form (BrokerMetadataCheckpoint / ZkMetaProperties), written via `.tmp` + fsync + rename:

    #
    #Thu Oct 14 10:00:00 UTC 2021
    cluster.id=Q3d0tlcKRqmP8CEmlQ1Tyg
    version=0
    broker.id=0
"""

from __future__ import annotations

import os
import time
from typing import Mapping, Sequence

from pylog.common.properties import dumps, loads
from pylog.log.checkpoint import write_atomic

META_PROPERTIES = "meta.properties"
CLUSTER_ID_KEY = "cluster.id"
BROKER_ID_KEY = "broker.id"
NODE_ID_KEY = "node.id"
VERSION_KEY = "version"

# Java's Properties.store writes in hash-table order; for ZkMetaProperties' three keys that is
# this order (as in Kafka's own files), so we write it explicitly.
_ZK_KEY_ORDER = (CLUSTER_ID_KEY, VERSION_KEY, BROKER_ID_KEY)


class InconsistentBrokerMetadataError(Exception):
    """meta.properties differs between log dirs (Kafka's InconsistentBrokerMetadataException)."""


class InconsistentBrokerIdError(Exception):
    """Configured broker.id differs from the stored one (Kafka's InconsistentBrokerIdException)."""


class InconsistentClusterIdError(Exception):
    """ZooKeeper's cluster id differs from the stored one (Kafka's InconsistentClusterIdException)."""


class RawMetaProperties:
    """The key/value pairs of a meta.properties file, with typed accessors."""

    def __init__(self, props: Mapping[str, str] | None = None) -> None:
        self.props: dict[str, str] = dict(props or {})

    def _int(self, key: str) -> int | None:
        raw = self.props.get(key)
        if raw is None:
            return None
        try:
            return int(raw)
        except ValueError:
            raise ValueError(f"Failed to parse {key} property as an int: For input string: \"{raw}\"") from None

    @property
    def cluster_id(self) -> str | None:
        """`cluster.id`, if present."""
        return self.props.get(CLUSTER_ID_KEY)

    @property
    def broker_id(self) -> int | None:
        """`broker.id`, if present."""
        return self._int(BROKER_ID_KEY)

    @property
    def node_id(self) -> int | None:
        """`node.id` (KRaft form), if present."""
        return self._int(NODE_ID_KEY)

    @property
    def version(self) -> int:
        """`version`, 0 when missing."""
        v = self._int(VERSION_KEY)
        return 0 if v is None else v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RawMetaProperties) and self.props == other.props

    def __hash__(self) -> int:
        return hash(frozenset(self.props.items()))

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}={self.props[k]}" for k in sorted(self.props)) + "}"


def _java_option(value: object) -> str:
    """How Scala prints an Option in Kafka's messages: Some(x) / None."""
    return "None" if value is None else f"Some({value})"


def _java_date(epoch_s: float | None) -> str:
    """java.util.Date.toString(): `Thu Oct 14 10:00:00 UTC 2021` (local time zone)."""
    t = time.localtime(epoch_s)
    return time.strftime("%a %b %d %H:%M:%S ", t) + (time.strftime("%Z", t) or "UTC") + time.strftime(" %Y", t)


def render_meta_properties(cluster_id: str, broker_id: int, epoch_s: float | None = None) -> str:
    """The exact text Kafka's `Properties.store(out, "")` writes for ZK-mode metadata."""
    values = {CLUSTER_ID_KEY: cluster_id, VERSION_KEY: "0", BROKER_ID_KEY: str(broker_id)}
    ordered = {k: values[k] for k in _ZK_KEY_ORDER}
    return f"#\n#{_java_date(epoch_s)}\n" + dumps(ordered)


def write_meta_properties(log_dir: str, cluster_id: str, broker_id: int, epoch_s: float | None = None) -> None:
    """Write `<log_dir>/meta.properties` atomically (tmp + fsync + rename)."""
    text = render_meta_properties(cluster_id, broker_id, epoch_s)
    write_atomic(os.path.join(log_dir, META_PROPERTIES), text.encode("ascii"))


def read_meta_properties(log_dir: str) -> RawMetaProperties | None:
    """Read `<log_dir>/meta.properties` (None when absent); a stale `.tmp` is removed first."""
    path = os.path.join(log_dir, META_PROPERTIES)
    try:
        os.unlink(path + ".tmp")
    except FileNotFoundError:
        pass
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None
    return RawMetaProperties(loads(raw.decode("iso-8859-1")))


def load_broker_metadata(log_dirs: Sequence[str]) -> tuple[RawMetaProperties, list[str]]:
    """Read meta.properties of every log dir; all present copies must be identical.

    Returns (the common properties, dirs that could not be read). Raises
    InconsistentBrokerMetadataError with Kafka's message when copies differ.
    """
    if not log_dirs:
        raise ValueError("Must have at least one log dir to read meta.properties")
    found: dict[str, RawMetaProperties] = {}
    offline: list[str] = []
    for d in log_dirs:
        try:
            props = read_meta_properties(d)
        except OSError:
            offline.append(d)
            continue
        if props is not None:
            found[d] = props
    if not found:
        return RawMetaProperties(), offline
    if len(set(found.values())) > 1:
        listing = "".join(f"- {d} -> {p}\n" for d, p in found.items())
        raise InconsistentBrokerMetadataError(
            "BrokerMetadata is not consistent across log.dirs. This could happen if multiple brokers "
            "shared a log directory (log.dirs) or partial data was manually copied from another "
            f"broker. Found:\n{listing}"
        )
    return next(iter(found.values())), offline


def check_version(meta: RawMetaProperties) -> None:
    """ZK-mode brokers only accept version 0 (Kafka's KafkaServer.startup check)."""
    if meta.version != 0:
        raise RuntimeError(
            f"Found unexpected version in loaded `meta.properties`: {meta}. Zk-based brokers only "
            "support version 0 (which is implicit when the `version` field is missing)."
        )


def check_cluster_id(cluster_id: str, meta: RawMetaProperties) -> None:
    """The stored cluster.id, if any, must equal ZooKeeper's /cluster/id."""
    if meta.cluster_id is not None and meta.cluster_id != cluster_id:
        raise InconsistentClusterIdError(
            f"The Cluster ID {cluster_id} doesn't match stored clusterId {_java_option(meta.cluster_id)} "
            "in meta.properties. The broker is trying to join the wrong cluster. Configured "
            "zookeeper.connect may be wrong."
        )


def resolve_broker_id(configured: int, meta: RawMetaProperties) -> int | None:
    """Kafka's getOrGenerateBrokerId without the generation: the id to use.

    Returns None when neither the config (broker.id < 0) nor meta.properties has one, i.e. the
    caller must generate an id (broker.id.generation.enable). Raises InconsistentBrokerIdError
    when the configured id differs from the stored one.
    """
    stored = meta.broker_id
    if configured >= 0 and stored is not None and stored != configured:
        raise InconsistentBrokerIdError(
            f"Configured broker.id {configured} doesn't match stored broker.id {_java_option(stored)} in "
            "meta.properties. If you moved your data, make sure your configured broker.id matches. If "
            "you intend to create a new broker, you should remove all data in your data directories "
            "(log.dirs)."
        )
    if stored is not None:
        return stored
    return configured if configured >= 0 else None
