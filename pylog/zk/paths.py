"""Every znode path of a ZooKeeper-mode Kafka cluster, one function each (Kafka's ZkData.scala).

Paths are relative to the chroot of the connect string; the client adds the chroot.
Names are checked for '/' and emptiness so a bad topic or entity name can't address another znode.
"""

from __future__ import annotations

# Kafka's ConfigEntityName.Default: the entity that holds cluster-wide defaults (/config/brokers/<default>).
DEFAULT_ENTITY = "<default>"

# ConfigType.all in 3.3.2, in Kafka's order (it is also the order of PERSISTENT_PATHS' tail).
CONFIG_TYPES: tuple[str, ...] = ("topics", "clients", "users", "brokers", "ips")

# Prefixes of the PERSISTENT_SEQUENTIAL children; ZooKeeper appends a 10-digit zero-padded counter.
CONFIG_CHANGE_PREFIX = "config_change_"
ISR_CHANGE_PREFIX = "isr_change_"
LOG_DIR_EVENT_PREFIX = "log_dir_event_"


def _name(kind: str, value: str) -> str:
    """Return value if it is usable as one path segment, else raise ValueError naming the kind."""
    if not isinstance(value, str) or not value or "/" in value or value in (".", ".."):
        raise ValueError(f"Invalid {kind} for a znode path: {value!r}")
    return value


def _int(kind: str, value: int) -> int:
    """Return value if it is a non-negative int (bools rejected), else raise ValueError."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"Invalid {kind} for a znode path: {value!r}")
    return value


def prefixes(path: str) -> list[str]:
    """'/a/b/c' -> ['/a', '/a/b', '/a/b/c']: a path's ancestors and itself, parents first."""
    parts = [p for p in path.split("/") if p]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]


def consumers() -> str:
    """The old consumer root, still created at broker start (ConsumerPathZNode)."""
    return "/consumers"


def brokers() -> str:
    """Parent of /brokers/ids, /brokers/topics and /brokers/seqid."""
    return "/brokers"


def broker_ids() -> str:
    """Parent of the broker registrations; the controller watches its children."""
    return "/brokers/ids"


def broker_id(broker: int) -> str:
    """EPHEMERAL broker registration; its czxid is the broker epoch."""
    return f"/brokers/ids/{_int('broker id', broker)}"


def broker_seqid() -> str:
    """Empty znode whose zkVersion drives automatic broker id generation."""
    return "/brokers/seqid"


def topics() -> str:
    """Parent of the topic assignment znodes; the controller watches its children."""
    return "/brokers/topics"


def topic(name: str) -> str:
    """Topic replica assignment (JSON v3 with topic_id)."""
    return f"/brokers/topics/{_name('topic name', name)}"


def topic_partitions(name: str) -> str:
    """Parent of a topic's partition znodes (null data)."""
    return f"{topic(name)}/partitions"


def topic_partition(name: str, partition: int) -> str:
    """One partition's znode (null data), parent of its state znode."""
    return f"{topic_partitions(name)}/{_int('partition', partition)}"


def partition_state(name: str, partition: int) -> str:
    """Leader/ISR/epochs of one partition; its zkVersion is the partition epoch."""
    return f"{topic_partition(name, partition)}/state"


def controller() -> str:
    """EPHEMERAL znode held by the active controller."""
    return "/controller"


def controller_epoch() -> str:
    """Plain ASCII integer, incremented on every election; its zkVersion fences stale controllers."""
    return "/controller_epoch"


def config() -> str:
    """Root of dynamic configs."""
    return "/config"


def config_entity_type(entity_type: str) -> str:
    """Parent of all entities of one type, e.g. /config/topics."""
    return f"/config/{_name('config entity type', entity_type)}"


def config_entity(entity_type: str, name: str) -> str:
    """Config overrides of one entity; users may be nested ('<user>/clients/<client>')."""
    parts = name.split("/") if isinstance(name, str) else [name]
    for part in parts:
        _name("config entity name", part)
    return f"{config_entity_type(entity_type)}/{name}"


def config_changes() -> str:
    """Parent of config change notifications; brokers watch its children."""
    return "/config/changes"


def config_change_prefix() -> str:
    """Path to create (PERSISTENT_SEQUENTIAL) for a config change notification."""
    return f"{config_changes()}/{CONFIG_CHANGE_PREFIX}"


def cluster() -> str:
    """Parent of /cluster/id."""
    return "/cluster"


def cluster_id() -> str:
    """The cluster id JSON, created by the first broker."""
    return "/cluster/id"


def admin() -> str:
    """Parent of the admin request znodes."""
    return "/admin"


def delete_topics() -> str:
    """Parent of pending topic deletions; the controller watches its children."""
    return "/admin/delete_topics"


def delete_topic(name: str) -> str:
    """Marks one topic for deletion (null data)."""
    return f"{delete_topics()}/{_name('topic name', name)}"


def reassign_partitions() -> str:
    """Legacy (pre-KIP-455) reassignment request."""
    return "/admin/reassign_partitions"


def shutdown_brokers() -> str:
    """Parent of pylog's broker shutdown requests (pylog-alter-cluster --remove-brokers; not a Kafka path)."""
    return "/admin/shutdown_brokers"


def shutdown_broker(broker: int) -> str:
    """Asks one broker, at one registration epoch, to shut down; the broker deletes it and stops."""
    return f"{shutdown_brokers()}/{_int('broker id', broker)}"


def preferred_replica_election() -> str:
    """Preferred leader election request."""
    return "/admin/preferred_replica_election"


def isr_change_notifications() -> str:
    """Parent of ISR change notifications (only used below IBP 2.7-IV2)."""
    return "/isr_change_notification"


def isr_change_prefix() -> str:
    """Path to create (PERSISTENT_SEQUENTIAL) for an ISR change notification."""
    return f"{isr_change_notifications()}/{ISR_CHANGE_PREFIX}"


def isr_change_notification(sequence: str) -> str:
    """One ISR change notification, by child name or by its 10-digit sequence."""
    child = sequence if sequence.startswith(ISR_CHANGE_PREFIX) else ISR_CHANGE_PREFIX + sequence
    return f"{isr_change_notifications()}/{_name('notification', child)}"


def log_dir_event_notifications() -> str:
    """Parent of log dir failure notifications."""
    return "/log_dir_event_notification"


def log_dir_event_prefix() -> str:
    """Path to create (PERSISTENT_SEQUENTIAL) for a log dir event notification."""
    return f"{log_dir_event_notifications()}/{LOG_DIR_EVENT_PREFIX}"


def latest_producer_id_block() -> str:
    """Last producer id block handed out."""
    return "/latest_producer_id_block"


def feature() -> str:
    """Finalized features (KIP-584)."""
    return "/feature"


def sequence_number(child: str) -> int:
    """The counter ZooKeeper appended to a sequential child name, e.g. 'config_change_0000000007' -> 7."""
    digits = child[-10:]
    if len(child) < 10 or not digits.isdigit():
        raise ValueError(f"Not a sequential znode name: {child!r}")
    return int(digits)


# ACLs (ZkAclStore): literal patterns under /kafka-acl/<Type>/<name>, others under
# /kafka-acl-extended/<pattern type, lower-case>/<Type>/<name>; one change store for each.
ACL_CHANGE_PREFIX = "acl_changes_"


def acl_type_dir(pattern_type: str, zk_type: str) -> str:
    """The parent of one resource type's ACL znodes (zk_type as Kafka spells it: Topic, Group, Cluster, ...)."""
    root = "/kafka-acl" if pattern_type == "LITERAL" else f"/kafka-acl-extended/{pattern_type.lower()}"
    return f"{root}/{_name('ACL resource type', zk_type)}"


def acl_resource(pattern_type: str, zk_type: str, name: str) -> str:
    """One resource pattern's ACL znode."""
    return f"{acl_type_dir(pattern_type, zk_type)}/{_name('ACL resource name', name)}"


def acl_changes(pattern_type: str) -> str:
    """Where ACL change notifications for this pattern type go."""
    return "/kafka-acl-changes" if pattern_type == "LITERAL" else "/kafka-acl-extended-changes"


# ZkData.PersistentZkPaths: created (with parents) by every broker at start, in this order.
PERSISTENT_PATHS: tuple[str, ...] = (
    consumers(),
    broker_ids(),
    topics(),
    config_changes(),
    delete_topics(),
    broker_seqid(),
    isr_change_notifications(),
    latest_producer_id_block(),
    log_dir_event_notifications(),
) + tuple(config_entity_type(t) for t in CONFIG_TYPES)
