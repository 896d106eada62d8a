"""What the commands return: plain dataclasses, rendered by render.py as Kafka's text, JSON or tables.

`via` says whether a result came through ZooKeeper or a broker: Kafka 2.8's --zookeeper mode and
3.x's --bootstrap-server mode print different texts for the same facts. `warnings` are lines
Kafka prints before its output. A non-empty `failure` makes the command exit 1 after rendering.
"""

from __future__ import annotations

from dataclasses import dataclass, field


# ---------------------------------------------------------------- pylog-topics

@dataclass
class TopicCreated:
    """--create: created, or already there with --if-not-exists (silent in Kafka)."""

    topic: str
    created: bool
    via: str
    warnings: list[str] = field(default_factory=list)


@dataclass
class ListedTopic:
    """One --list entry."""

    name: str
    marked_for_deletion: bool = False


@dataclass
class TopicList:
    """--list: sorted names."""

    topics: list[ListedTopic]
    via: str


@dataclass
class TopicsAltered:
    """--alter: the topics whose partitions (and, through ZooKeeper, configs) were changed."""

    topics: list[str]
    partitions: int | None
    configs_updated: bool
    via: str
    failure: str | None = None


@dataclass
class DeletedTopic:
    """One --delete entry (already_marked: a deletion was pending; ZooKeeper mode only)."""

    name: str
    already_marked: bool = False


@dataclass
class TopicsDeleted:
    """--delete (through a broker the deletion has completed; through ZooKeeper it is only requested)."""

    topics: list[DeletedTopic]
    via: str
    failure: str | None = None


@dataclass
class TopicLine:
    """The first line of a topic's --describe. configs: the non-default entries."""

    topic: str
    topic_id: str | None
    partition_count: int
    replication_factor: int
    configs: dict[str, str]
    marked_for_deletion: bool = False


@dataclass
class PartitionLine:
    """One partition's --describe line (leader None prints as 'none')."""

    topic: str
    partition: int
    leader: int | None
    replicas: list[int]
    isr: list[int]
    adding_replicas: list[int] = field(default_factory=list)
    removing_replicas: list[int] = field(default_factory=list)
    marked_for_deletion: bool = False


@dataclass
class TopicsDescribed:
    """--describe: the topic lines and partition lines that are shown, each in print order."""

    topics: list[TopicLine]
    partitions: list[PartitionLine]
    via: str


# ---------------------------------------------------------------- pylog-configs

@dataclass
class ConfigSynonymView:
    """One synonym of a described config: where a value could come from."""

    source: str
    name: str
    value: str | None


@dataclass
class ConfigView:
    """One described config entry."""

    name: str
    value: str | None
    sensitive: bool
    source: str | None = None
    synonyms: list[ConfigSynonymView] = field(default_factory=list)


@dataclass
class EntityConfigs:
    """The configs of one entity. entity_type: topics|brokers; name '' is the brokers' default entity."""

    entity_type: str
    name: str
    configs: list[ConfigView]


@dataclass
class ConfigsDescribed:
    """--describe (all: --all, every config rather than only dynamic ones)."""

    entities: list[EntityConfigs]
    all: bool
    via: str


@dataclass
class ConfigsAltered:
    """--alter: what was set and deleted on one entity."""

    entity_type: str
    name: str
    set: dict[str, str]
    deleted: list[str]
    via: str
    warnings: list[str] = field(default_factory=list)


@dataclass
class PairConfigs(EntityConfigs):
    """The quota configs of a <user, client-id> pair through ZooKeeper: name is the user, '' the default one."""

    client_id: str = ""  # '' is the default client-id


@dataclass
class PairAltered(ConfigsAltered):
    """--alter of a <user, client-id> pair through ZooKeeper (name is the user, '' the default one)."""

    client_id: str = ""  # '' is the default client-id


@dataclass
class QuotaEntity:
    """One client quota entity (--entity-type users|clients through a broker): names None are defaults."""

    user: str | None
    client_id: str | None
    has_user: bool
    has_client: bool
    values: dict[str, float]


@dataclass
class QuotasDescribed:
    """--describe of users or clients through a broker: quotas, then (users) SCRAM credentials."""

    entities: list[QuotaEntity]
    scram: ConfigsDescribed | None = None


# ---------------------------------------------------------------- pylog-leader-election

@dataclass
class ElectionFailure:
    """A partition whose leader could not be elected: Kafka's exception name and message."""

    partition: str
    exception: str
    message: str


@dataclass
class ElectionResult:
    """Outcome per partition ("topic-partition"); election_type is PREFERRED or UNCLEAN."""

    election_type: str
    succeeded: list[str]
    not_needed: list[str]
    failed: list[ElectionFailure]
    via: str
    failure: str | None = None


# ---------------------------------------------------------------- pylog-delete-records

@dataclass
class DeletedPartition:
    """One partition's outcome: its new low watermark, or Kafka's exception text."""

    partition: str
    low_watermark: int | None
    error: str | None = None


@dataclass
class RecordsDeleted:
    """DeleteRecords outcome per partition ("topic-partition"), sorted."""

    partitions: list[DeletedPartition]
    failure: str | None = None


# ---------------------------------------------------------------- pylog-consumer-groups

@dataclass
class GroupListing:
    """--list: group ids; with --state also each group's state (Kafka then prints a GROUP STATE table)."""

    groups: list[str]
    states: dict[str, str] | None = None


@dataclass
class GroupOffsetRow:
    """One --describe row; None prints as '-' (Kafka's MISSING_COLUMN_VALUE)."""

    group: str
    topic: str | None
    partition: int | None
    current_offset: int | None
    log_end_offset: int | None
    lag: int | None
    consumer_id: str | None
    host: str | None
    client_id: str | None


@dataclass
class GroupDescribed:
    """One group's --describe: its state and rows (lag against the high watermark)."""

    group: str
    state: str
    rows: list[GroupOffsetRow]


@dataclass
class GroupMemberRow:
    """One --describe --members row (partitions listed only with --verbose)."""

    group: str
    consumer_id: str
    instance_id: str | None
    host: str
    client_id: str
    partition_count: int
    partitions: list[tuple[str, int]] | None = None


@dataclass
class GroupStateRow:
    """--describe --state: one line per group."""

    group: str
    coordinator: str  # "host:port (id)"
    assignment_strategy: str
    state: str
    members: int


@dataclass
class GroupsDescribed:
    """--describe over one or more groups, sorted by group id: the offsets view, --members or --state."""

    groups: list[GroupDescribed]
    failure: str | None = None
    view: str = "offsets"  # or "members" / "state"
    members: dict[str, list[GroupMemberRow]] = field(default_factory=dict)
    states: list[GroupStateRow] = field(default_factory=list)


@dataclass
class GroupsDeleted:
    """--delete: the groups deleted and, for the others, why not."""

    deleted: list[str]
    failed: dict[str, str]
    failure: str | None = None


@dataclass
class OffsetsReset:
    """--reset-offsets: the new offsets (group, topic, partition, offset), shown as Kafka's table or --export CSV."""

    rows: list[tuple[str, str, int, int]]
    export: bool
    csv_with_group: bool
    warnings: list[str] = field(default_factory=list)  # stdout lines Kafka prints first ("Warn: Partition ...")
    log: list[str] = field(default_factory=list)  # stderr lines (Kafka's WARN log lines)
    failure: str | None = None


@dataclass
class OffsetsDeleted:
    """--delete-offsets: one status per partition ("Successful" / "Error: ..."; partition -1: not provided)."""

    group: str
    topics: list[str]
    statuses: list[tuple[str, int, str]]
    failure: str | None = None


# ---------------------------------------------------------------- pylog-zookeeper-security-migration

@dataclass
class ZkAclsMigrated:
    """zookeeper-security-migration.sh: the ACL set (secure or unsecure) and how many znodes got it."""

    acl: str
    znodes: int
    warnings: list[str] = field(default_factory=list)  # missing secure root paths (Kafka's println)
    failed: dict[str, str] = field(default_factory=dict)
    failure: str | None = None
