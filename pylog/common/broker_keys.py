"""BROKER_CONFIGS: every server.properties key the pylog broker reads, with Kafka 3.3's defaults.

Types, defaults, validators and dynamic update modes follow Kafka's KafkaConfig, DynamicConfig and
DynamicBrokerConfig (ZooKeeper mode). Docs are pylog's own and say what pylog does with the key.
Definition order is the order of server.properties.example and of validation (first error wins).
"""

from __future__ import annotations

from typing import Any

from pylog.common.configdef import (
    LONG_MAX, CaseInsensitiveValidString, ConfigKey, Importance, Type, ValidList, ValidString, at_least, between, define,
)
from pylog.common.listeners import DEFAULT_PROTOCOL_MAP, SECURITY_PROTOCOLS, HttpListener
from pylog.common.versions import METADATA_VERSION_VALIDATOR

__all__ = ["BROKER_CONFIGS", "BROKER_GROUPS", "COMPRESSION_TYPES", "NO_EFFECT"]

HIGH, MEDIUM, LOW = Importance.HIGH, Importance.MEDIUM, Importance.LOW
CLUSTER, PER_BROKER = "cluster-wide", "per-broker"
# BrokerCompressionCodec.brokerCompressionOptions, in Kafka's order (it shows in error messages).
COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")
NO_EFFECT = "Accepted for compatibility with Kafka; pylog ignores it (no effect)."

# (group title, intro comment) in file order; every key below belongs to one of them.
BROKER_GROUPS: list[tuple[str, str]] = []
_keys: list[ConfigKey] = []


def _group(title: str, intro: str = "") -> None:
    BROKER_GROUPS.append((title, intro))


def _k(name: str, type_: Type, default: Any, doc: str, validator: Any = None, importance: Importance = MEDIUM,
       dynamic: str | None = None, used: bool = True) -> None:
    if not used:
        doc = f"{doc} {NO_EFFECT}" if doc else NO_EFFECT
    _keys.append(ConfigKey(name, type_, default, validator, doc, importance, dynamic, BROKER_GROUPS[-1][0], used))


_group("Server Basics")
_k("broker.id", Type.INT, -1, "The id of this broker; unique in the cluster. -1 asks for a generated id: the broker "
   "reuses the id stored in meta.properties or, failing that, takes the next number from /brokers/seqid plus "
   "reserved.broker.max.id (so generated ids start at 1001).", importance=HIGH)
_k("broker.id.generation.enable", Type.BOOLEAN, True, "Whether a broker started with broker.id=-1 may generate "
   "its id through ZooKeeper. When false, broker.id must be set to a value >= 0.")
_k("reserved.broker.max.id", Type.INT, 1000, "The highest id that may be configured by hand; generated ids "
   "start above it, so the two ranges never collide.", at_least(0))
_k("broker.rack", Type.STRING, None, "The rack (or availability zone) of this broker, e.g. `us-east-1d`. Replica "
   "assignment spreads each partition's replicas over as many racks as it can.")

_group("Socket Server Settings")
_k("listeners", Type.STRING, "PLAINTEXT://:9092", "Comma-separated URIs the broker listens on, as "
   "NAME://host:port. An empty host binds every interface; names map to security protocols through "
   "listener.security.protocol.map (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).", importance=HIGH, dynamic=PER_BROKER)
_k("advertised.listeners", Type.STRING, None, "The listeners this broker registers in ZooKeeper for clients and "
   "other brokers to connect to, when they differ from listeners (e.g. behind NAT). Unset means use listeners. "
   "Names must be a subset of the listener names, and 0.0.0.0 is not allowed.", importance=HIGH, dynamic=PER_BROKER)
_k("listener.security.protocol.map", Type.STRING, DEFAULT_PROTOCOL_MAP, "Maps listener names to security "
   "protocols as NAME:PROTOCOL pairs, so several listeners can share a protocol (e.g. INTERNAL:PLAINTEXT).",
   importance=LOW, dynamic=PER_BROKER)
_k("inter.broker.listener.name", Type.STRING, None, "The listener other brokers (replica fetchers, the "
   "controller) use to reach this one. Unset means the listener named after security.inter.broker.protocol. "
   "It must be one of the advertised listeners.")
_k("security.inter.broker.protocol", Type.STRING, "PLAINTEXT", "The security protocol used between brokers when "
   "inter.broker.listener.name is unset. Set only one of the two.", ValidString(SECURITY_PROTOCOLS))
_k("num.network.threads", Type.INT, 3, "Kafka's number of network threads. pylog serves all connections from one "
   "event loop.", at_least(1), HIGH, CLUSTER, used=False)
_k("num.io.threads", Type.INT, 8, "Kafka's number of request handler threads.", at_least(1), HIGH, CLUSTER,
   used=False)
_k("socket.send.buffer.bytes", Type.INT, 102400, "SO_SNDBUF for client connections; -1 keeps the OS default.",
   importance=HIGH)
_k("socket.receive.buffer.bytes", Type.INT, 102400, "SO_RCVBUF for client connections; -1 keeps the OS default.",
   importance=HIGH)
_k("socket.request.max.bytes", Type.INT, 104857600, "The largest request the broker accepts; a bigger size "
   "prefix closes the connection (protection against garbage and memory exhaustion).", at_least(1), HIGH)
_k("request.timeout.ms", Type.INT, 30000, "Kafka's timeout for the broker's own client requests.",
   importance=HIGH, used=False)

_group("Log Basics")
_k("log.dirs", Type.STRING, None, "Comma-separated directories where partition data is stored. Each new "
   "partition goes to the directory holding the fewest partitions. Unset means use log.dir.", importance=HIGH)
_k("log.dir", Type.STRING, "/tmp/kafka-logs", "The single log directory used when log.dirs is unset.",
   importance=HIGH)
_k("num.partitions", Type.INT, 1, "The partition count of topics created without one (auto-created topics and "
   "CreateTopics with -1).", at_least(1))
_k("default.replication.factor", Type.INT, 1, "The replication factor of topics created without one "
   "(auto-created topics and CreateTopics with -1).")
_k("auto.create.topics.enable", Type.BOOLEAN, True, "Whether a Metadata request for an unknown topic creates it "
   "with num.partitions and default.replication.factor.", importance=HIGH)
_k("delete.topic.enable", Type.BOOLEAN, True, "Whether topics can be deleted. When false, DeleteTopics fails with "
   "TOPIC_DELETION_DISABLED and deletion markers in ZooKeeper are left alone.", importance=HIGH)
_k("num.recovery.threads.per.data.dir", Type.INT, 1, "Kafka's log recovery thread count per log directory; pylog "
   "recovers logs one at a time.", at_least(1), HIGH, CLUSTER, used=False)
_k("log.segment.bytes", Type.INT, 1073741824, "The largest size of one segment file; a write that would exceed "
   "it rolls a new segment. Topic override: segment.bytes.", at_least(14), HIGH, CLUSTER)
_k("log.roll.ms", Type.LONG, None, "Roll a new segment when the active one is this old (ms), even if not full. "
   "Unset means log.roll.hours. Topic override: segment.ms.", importance=HIGH, dynamic=CLUSTER)
_k("log.roll.hours", Type.INT, 168, "The segment age limit in hours, used when log.roll.ms is unset.",
   at_least(1), HIGH)
_k("log.roll.jitter.ms", Type.LONG, None, "The largest random amount (ms) subtracted from the roll time, so "
   "partitions do not all roll at once. Unset means log.roll.jitter.hours. Topic override: segment.jitter.ms.",
   importance=HIGH, dynamic=CLUSTER)
_k("log.roll.jitter.hours", Type.INT, 0, "The roll jitter in hours, used when log.roll.jitter.ms is unset.",
   at_least(0), HIGH)
_k("log.index.size.max.bytes", Type.INT, 10485760, "The size each offset and time index file is preallocated to; "
   "a full index rolls the segment. Topic override: segment.index.bytes.", at_least(4), dynamic=CLUSTER)
_k("log.index.interval.bytes", Type.INT, 4096, "Roughly how many bytes of batches lie between two offset index "
   "entries. Topic override: index.interval.bytes.", at_least(0), dynamic=CLUSTER)
_k("log.segment.delete.delay.ms", Type.LONG, 60000, "How long a segment removed by retention stays on disk, "
   "renamed with a .deleted suffix, before the file is deleted. Topic override: file.delete.delay.ms.",
   at_least(0), HIGH, CLUSTER)
_k("log.preallocate", Type.BOOLEAN, False, "Whether new segment files are preallocated to log.segment.bytes. "
   "Topic override: preallocate.", dynamic=CLUSTER)
_k("message.max.bytes", Type.INT, 1048588, "The largest record batch (after compression) the broker accepts; "
   "bigger batches fail with MESSAGE_TOO_LARGE. Topic override: max.message.bytes.", at_least(0), HIGH, CLUSTER)
_k("compression.type", Type.STRING, "producer", "The compression the broker stores batches with; `producer` keeps "
   "what the producer sent. Topic override: compression.type.",
   ValidString(COMPRESSION_TYPES), HIGH, CLUSTER)
_k("log.message.timestamp.type", Type.STRING, "CreateTime", "CreateTime keeps the producer's timestamps; "
   "LogAppendTime makes the broker stamp each batch with its own clock. Topic override: message.timestamp.type.",
   ValidString(("CreateTime", "LogAppendTime")), dynamic=CLUSTER)
_k("log.message.timestamp.difference.max.ms", Type.LONG, LONG_MAX, "With CreateTime, the largest allowed "
   "difference between a batch's timestamp and the broker's clock; beyond it the produce fails with "
   "INVALID_TIMESTAMP. Topic override: message.timestamp.difference.max.ms.", at_least(0), dynamic=CLUSTER)
_k("log.cleanup.policy", Type.LIST, ["delete"], "The default cleanup policy of topics: `delete` removes old "
   "segments by time and size; `compact` keeps the latest record per key (the log cleaner); both may be "
   "set. Topic override: cleanup.policy.", ValidList(("compact", "delete")), dynamic=CLUSTER)
_k("log.cleaner.enable", Type.BOOLEAN, True, "Run the log cleaner, which compacts topics with "
   "cleanup.policy=compact (including the internal offsets topic).", importance=MEDIUM)
_k("log.cleaner.backoff.ms", Type.LONG, 15000, "How long the cleaner sleeps when no log needs cleaning.",
   at_least(0), dynamic=CLUSTER)
_k("log.cleaner.dedupe.buffer.size", Type.LONG, 128 * 1024 * 1024, "Memory budget of the cleaner's key map "
   "(24 bytes per key, as in Kafka); a dirty section with more keys is cleaned in several passes.",
   at_least(0), dynamic=CLUSTER)
_k("log.cleaner.io.buffer.load.factor", Type.DOUBLE, 0.9, "How full the cleaner's key map may get.",
   between(0, 1), dynamic=CLUSTER)
_k("log.cleaner.delete.retention.ms", Type.LONG, 86400000, "How long tombstones (null values) of compacted "
   "topics are kept after the first clean that sees them. Topic override: delete.retention.ms.", at_least(0),
   dynamic=CLUSTER)
_k("log.cleaner.min.compaction.lag.ms", Type.LONG, 0, "The minimum age of a record before it may be compacted. "
   "Topic override: min.compaction.lag.ms.", at_least(0), dynamic=CLUSTER)
_k("log.cleaner.max.compaction.lag.ms", Type.LONG, LONG_MAX, "The maximum time a record stays uncompacted: "
   "older dirty data is cleaned whatever the dirty ratio. Topic override: max.compaction.lag.ms.", at_least(1),
   dynamic=CLUSTER)
_k("log.cleaner.min.cleanable.ratio", Type.DOUBLE, 0.5, "The dirty share of a compacted log above which it is "
   "cleaned. Topic override: min.cleanable.dirty.ratio.", between(0, 1), dynamic=CLUSTER)
_k("log.message.format.version", Type.STRING, "3.0-IV1", "Deprecated in Kafka 3.0 and ignored there with "
   "inter-broker protocol 3.0 or later. pylog always writes record batch format v2.",
   METADATA_VERSION_VALIDATOR, used=False)
_k("log.message.downconversion.enable", Type.BOOLEAN, True, "Kafka's switch for converting batches to old "
   "formats for old consumers; pylog only serves clients that read format v2. Topic override: "
   "message.downconversion.enable.", importance=LOW, dynamic=CLUSTER, used=False)

_group("Internal Topic Settings", "Settings of the group coordinator's __consumer_offsets topic. On a single "
       "broker they must be 1; with three or more brokers use 3 for availability.")
_k("offsets.topic.replication.factor", Type.SHORT, 3, "The replication factor of __consumer_offsets. Creating "
   "it fails until this many brokers are alive.", at_least(1), HIGH)
_k("offsets.topic.num.partitions", Type.INT, 50, "The partition count of __consumer_offsets; it cannot change "
   "once the topic exists.", at_least(1), HIGH)
_k("offsets.topic.segment.bytes", Type.INT, 104857600, "The segment size of __consumer_offsets.", at_least(1), HIGH)
_k("offsets.retention.minutes", Type.INT, 10080, "Committed offsets of a group that has been empty this long "
   "are removed.", at_least(1), HIGH)
_k("offsets.retention.check.interval.ms", Type.LONG, 600000, "How often (ms) the coordinator looks for expired "
   "offsets.", at_least(1), HIGH)
_k("offsets.commit.timeout.ms", Type.INT, 5000, "How long (ms) an offset commit waits for every replica of its "
   "__consumer_offsets partition before it fails with COORDINATOR_NOT_AVAILABLE.", at_least(1), HIGH)
_k("offset.metadata.max.bytes", Type.INT, 4096, "The largest metadata string a committed offset may carry "
   "(OFFSET_METADATA_TOO_LARGE above it).", importance=HIGH)
_group("Transaction Coordinator", "Settings of the transaction coordinator and its __transaction_state topic. On "
       "a single broker set the replication factor and min ISR to 1; with three or more brokers keep 3 and 2.")
_k("transaction.state.log.replication.factor", Type.SHORT, 3, "The replication factor of __transaction_state. "
   "While fewer brokers are alive the topic is created with one replica per live broker.", at_least(1), HIGH)
_k("transaction.state.log.min.isr", Type.INT, 2, "min.insync.replicas of __transaction_state (at most its "
   "replication factor): a transaction's state is only changed once this many replicas have it.",
   at_least(1), HIGH)
_k("transaction.state.log.num.partitions", Type.INT, 50, "The partition count of __transaction_state; it cannot "
   "change once the topic exists.", at_least(1), HIGH)
_k("transaction.state.log.segment.bytes", Type.INT, 104857600, "The segment size of __transaction_state.",
   at_least(1), HIGH)
_k("transaction.max.timeout.ms", Type.INT, 900000, "The largest transaction.timeout.ms a producer may ask for "
   "(INVALID_TRANSACTION_TIMEOUT above it).", at_least(1), HIGH)
_k("transactional.id.expiration.ms", Type.INT, 604800000, "A transactional id with no transaction for this long "
   "is forgotten (its next InitProducerId starts afresh).", at_least(1), HIGH)
_k("transaction.partition.verification.enable", Type.BOOLEAN, True, "KIP-890 part 1: before a partition "
   "leader appends the first batch of a producer's transaction, it checks with the transaction coordinator that "
   "the partition was added to that transaction, so a late batch of an ended transaction cannot leave it hanging.",
   importance=LOW)
_k("transaction.abort.timed.out.transaction.cleanup.interval.ms", Type.INT, 10000, "How often (ms) the "
   "coordinator aborts transactions open longer than their transaction.timeout.ms.", at_least(1), LOW)
_k("transaction.remove.expired.transaction.cleanup.interval.ms", Type.INT, 3600000, "How often (ms) the "
   "coordinator removes expired transactional ids.", at_least(1), LOW)

_group("Idempotent Producer", "Each partition remembers, per producer id, the epoch and the last 5 batches it "
       "wrote, so a retried batch is answered with its original offsets instead of being written twice.")
_k("producer.id.expiration.ms", Type.INT, 86400000, "How long (ms) a partition keeps the state of a producer id "
   "that has not written to it (KIP-854, Kafka 3.4+). After that a retry of its old batches is no longer "
   "recognised, and its next write is accepted with any sequence number.", at_least(1), LOW)
_k("producer.id.expiration.check.interval.ms", Type.INT, 600000, "How often (ms) the broker drops expired "
   "producer ids.", at_least(1), LOW)

_group("Log Flush Policy", "Writes go to the OS page cache at once; these settings only decide when the broker "
       "also fsyncs. Replication, not fsync, is what keeps acknowledged data safe, so the defaults never force a "
       "flush: logs are flushed on roll and on clean shutdown, and recovered from the last checkpoint after a crash.")
_k("log.flush.interval.messages", Type.LONG, LONG_MAX, "Fsync a partition once this many messages are unflushed. "
   "Topic override: flush.messages.", at_least(1), HIGH, CLUSTER)
_k("log.flush.interval.ms", Type.LONG, None, "Fsync a partition once its oldest unflushed message is this old "
   "(ms). Unset means log.flush.scheduler.interval.ms. Topic override: flush.ms.", importance=HIGH, dynamic=CLUSTER)
_k("log.flush.scheduler.interval.ms", Type.LONG, LONG_MAX, "How often (ms) the broker checks whether any log is "
   "due for a flush.", importance=HIGH)
_k("log.flush.offset.checkpoint.interval.ms", Type.INT, 60000, "How often (ms) the recovery points are written "
   "to recovery-point-offset-checkpoint; recovery after a crash starts from them.", at_least(0), HIGH)
_k("log.flush.start.offset.checkpoint.interval.ms", Type.INT, 60000, "How often (ms) log start offsets are "
   "written to log-start-offset-checkpoint.", at_least(0), HIGH)

_group("Log Retention Policy", "A segment is deleted when either limit is reached; only whole segments below the "
       "high watermark are deleted, oldest first, and never the active segment.")
_k("log.retention.hours", Type.INT, 168, "How long to keep a segment after its newest record (hours); the "
   "lowest priority of the three retention time keys.", importance=HIGH)
_k("log.retention.minutes", Type.INT, None, "Retention time in minutes; overrides log.retention.hours.",
   importance=HIGH)
_k("log.retention.ms", Type.LONG, None, "Retention time in ms; overrides log.retention.minutes and "
   "log.retention.hours. -1 keeps data forever. Topic override: retention.ms.", importance=HIGH, dynamic=CLUSTER)
_k("log.retention.bytes", Type.LONG, -1, "The largest size of one partition's log before old segments are "
   "deleted; -1 means no size limit. Topic override: retention.bytes.", importance=HIGH, dynamic=CLUSTER)
_k("log.retention.check.interval.ms", Type.LONG, 300000, "How often (ms) the broker applies retention.",
   at_least(1))

_group("Replication")
_k("min.insync.replicas", Type.INT, 1, "With acks=all, a produce succeeds only while at least this many replicas "
   "(leader included) are in the ISR; otherwise it fails with NOT_ENOUGH_REPLICAS. With replication factor 3, "
   "2 tolerates one failed broker without losing acknowledged writes. Topic override: min.insync.replicas.",
   at_least(1), HIGH, CLUSTER)
_k("unclean.leader.election.enable", Type.BOOLEAN, False, "Whether a replica outside the ISR may become leader "
   "when no ISR member is alive. This restores availability at the price of losing acknowledged writes. "
   "Topic override: unclean.leader.election.enable.", importance=HIGH, dynamic=CLUSTER)
_k("replica.lag.time.max.ms", Type.LONG, 30000, "A follower that has not fetched, or not caught up to the "
   "leader's log end, for this long is removed from the ISR.", importance=HIGH)
_k("replica.fetch.wait.max.ms", Type.INT, 500, "The longest a follower's fetch waits at the leader for data. "
   "Must not exceed replica.lag.time.max.ms or replica.socket.timeout.ms.", importance=HIGH)
_k("replica.fetch.min.bytes", Type.INT, 1, "The bytes a follower's fetch waits for before the leader answers.",
   importance=HIGH)
_k("replica.fetch.max.bytes", Type.INT, 1048576, "The bytes a follower asks for per partition; a bigger first "
   "batch is still returned whole so fetching always progresses.", at_least(0))
_k("replica.fetch.response.max.bytes", Type.INT, 10485760, "The bytes a follower asks for per fetch response in "
   "total (same first-batch exception).", at_least(0))
_k("replica.fetch.backoff.ms", Type.INT, 1000, "How long a follower waits before fetching again after a fetch "
   "error.", at_least(0))
_k("num.replica.fetchers", Type.INT, 1, "How many fetcher tasks this broker runs per source broker; partitions "
   "are spread over them.", importance=HIGH, dynamic=CLUSTER)
_k("replica.socket.timeout.ms", Type.INT, 30000, "The socket timeout of follower fetch connections.",
   importance=HIGH)
_k("replica.high.watermark.checkpoint.interval.ms", Type.LONG, 5000, "How often (ms) high watermarks are written "
   "to replication-offset-checkpoint.", importance=HIGH)
_k("controller.socket.timeout.ms", Type.INT, 30000, "The socket timeout of the controller's connections to "
   "brokers (LeaderAndIsr, UpdateMetadata, StopReplica).")
_k("leader.replication.throttled.rate", Type.LONG, LONG_MAX, "Upper bound (bytes/s) on replication traffic this "
   "broker serves as leader for the replicas listed in each topic's leader.replication.throttled.replicas. "
   "Normally set dynamically during reassignments.", at_least(0), dynamic=CLUSTER)
_k("follower.replication.throttled.rate", Type.LONG, LONG_MAX, "Upper bound (bytes/s) on replication traffic "
   "this broker fetches as follower for the replicas listed in each topic's "
   "follower.replication.throttled.replicas. Normally set dynamically during reassignments.",
   at_least(0), dynamic=CLUSTER)
_k("replica.alter.log.dirs.io.max.bytes.per.second", Type.LONG, LONG_MAX, "Bytes per second a broker may copy "
   "when it moves replicas between its log directories (AlterReplicaLogDirs).", at_least(0), dynamic=CLUSTER)

_group("Leader Balancing")
_k("auto.leader.rebalance.enable", Type.BOOLEAN, True, "Whether the controller periodically moves leadership "
   "back to each partition's preferred (first) replica.", importance=HIGH)
_k("leader.imbalance.check.interval.seconds", Type.LONG, 300, "How often (s) the controller checks leader "
   "balance.", at_least(1), HIGH)
_k("leader.imbalance.per.broker.percentage", Type.INT, 10, "The controller runs preferred elections for a broker "
   "when more than this percentage of the partitions it prefers to lead are led elsewhere.", importance=HIGH)

_group("Controlled Shutdown")
_k("controlled.shutdown.enable", Type.BOOLEAN, True, "Whether a stopping broker first asks the controller to move "
   "its leaderships away, so clients see no unavailability.")
_k("controlled.shutdown.max.retries", Type.INT, 3, "How many times a controlled shutdown is attempted before "
   "the broker stops anyway.")
_k("controlled.shutdown.retry.backoff.ms", Type.LONG, 5000, "The wait between controlled shutdown attempts.")

_group("Zookeeper")
_k("zookeeper.connect", Type.STRING, None, "The ZooKeeper ensemble as host:port[,host:port...], optionally "
   "followed by a chroot path (e.g. 127.0.0.1:2181/pylog) that is created if missing. Required.", importance=HIGH)
_k("zookeeper.session.timeout.ms", Type.INT, 18000, "The ZooKeeper session timeout. When the session expires, the "
   "broker's registration disappears and it re-registers with a new session.", importance=HIGH)
_k("zookeeper.connection.timeout.ms", Type.INT, None, "How long to wait for the first ZooKeeper connection "
   "before giving up. Unset means zookeeper.session.timeout.ms.", importance=HIGH)
_k("zookeeper.set.acl", Type.BOOLEAN, False, "Create znodes with ACLs: creator-all plus world-read, creator-only "
   "for SCRAM credentials (/config/users) and broker configs. Needs a ZooKeeper login: the Client section of the JAAS "
   "file named by -Djava.security.auth.login.config in KAFKA_OPTS (DigestLoginModule username/password, used as "
   "ZooKeeper digest auth). Tools given the same KAFKA_OPTS authenticate the same way.", importance=HIGH)

_group("Group Coordinator Settings")
_k("group.initial.rebalance.delay.ms", Type.INT, 3000, "How long the coordinator waits for more members to join "
   "a new (empty) group before the first rebalance. 0 suits development and tests.")
_k("group.min.session.timeout.ms", Type.INT, 6000, "The smallest session timeout a consumer may ask for.")
_k("group.max.session.timeout.ms", Type.INT, 1800000, "The largest session timeout a consumer may ask for.")
_k("group.max.size", Type.INT, 2147483647, "The most members a group may have (GROUP_MAX_SIZE_REACHED beyond it).",
   at_least(1))
_k("group.coordinator.rebalance.protocols", Type.LIST, ["classic", "consumer"], "The group protocols the coordinator "
   "serves: classic (JoinGroup/SyncGroup) and consumer (KIP-848's ConsumerGroupHeartbeat, advertised in ApiVersions "
   "only when listed).", ValidList(("classic", "consumer")))
_k("group.consumer.session.timeout.ms", Type.INT, 45000, "KIP-848 groups: a member that sends no heartbeat for this "
   "long is removed and its partitions go to the others.", at_least(1))
_k("group.consumer.min.session.timeout.ms", Type.INT, 45000, "The lower bound of group.consumer.session.timeout.ms.",
   at_least(1))
_k("group.consumer.max.session.timeout.ms", Type.INT, 60000, "The upper bound of group.consumer.session.timeout.ms.",
   at_least(1))
_k("group.consumer.heartbeat.interval.ms", Type.INT, 5000, "KIP-848 groups: how often members heartbeat (the "
   "coordinator tells them in each answer).", at_least(1))
_k("group.consumer.min.heartbeat.interval.ms", Type.INT, 5000, "The lower bound of "
   "group.consumer.heartbeat.interval.ms.", at_least(1))
_k("group.consumer.max.heartbeat.interval.ms", Type.INT, 15000, "The upper bound of "
   "group.consumer.heartbeat.interval.ms.", at_least(1))
_k("group.consumer.assignors", Type.LIST, ["uniform", "range"], "KIP-848 groups: the server-side assignors members "
   "may name, the first being the default: uniform (balanced, moves as few partitions as it can) and range "
   "(contiguous ranges per topic). Kafka's class names (org.apache.kafka.coordinator.group.assignor.UniformAssignor, "
   "...RangeAssignor) are accepted.",
   ValidList(("uniform", "range", "org.apache.kafka.coordinator.group.assignor.UniformAssignor",
              "org.apache.kafka.coordinator.group.assignor.RangeAssignor")))
_k("group.consumer.max.size", Type.INT, 2147483647, "The most members a KIP-848 group may have "
   "(GROUP_MAX_SIZE_REACHED beyond it).", at_least(1))
_k("group.consumer.migration.policy", Type.STRING, "bidirectional", "Online migration between the classic and the "
   "consumer protocol (Kafka 4.0's default): upgrade turns a non-empty classic group into a consumer group when a "
   "consumer-protocol member joins it; downgrade turns a consumer group back into a classic group when its last "
   "consumer-protocol member leaves; bidirectional both; disabled neither. Classic members may join a non-empty "
   "consumer group under any policy, as in Kafka.",
   CaseInsensitiveValidString(("disabled", "upgrade", "downgrade", "bidirectional")))

_group("Security", "TLS and SASL listeners, SCRAM credentials and ACLs, with Kafka's keys. Any of them may be given "
       "for one listener as listener.name.<listener>.<key> (lower-case listener name), and a listener's SASL "
       "login as listener.name.<listener>.<mechanism>.sasl.jaas.config.")
_k("ssl.keystore.type", Type.STRING, "JKS", "The format of ssl.keystore.location: PEM (as Kafka 2.7+) or PKCS12. "
   "JKS is refused with the keytool command that converts it to PKCS12: set PEM or PKCS12 when a listener uses SSL "
   "or SASL_SSL.")
_k("ssl.keystore.location", Type.STRING, None, "This broker's private key and certificate chain: a PEM file, or a "
   "PKCS12 store (keytool, openssl pkcs12).", importance=HIGH)
_k("ssl.keystore.password", Type.PASSWORD, None, "The PKCS12 keystore's password; PEM keystores have none (the key is "
   "protected by ssl.key.password).", importance=HIGH)
_k("ssl.key.password", Type.PASSWORD, None, "The password of an encrypted PEM private key.", importance=HIGH)
_k("ssl.truststore.type", Type.STRING, "JKS", "The format of ssl.truststore.location: PEM or PKCS12 (JKS is refused, "
   "as for ssl.keystore.type).")
_k("ssl.truststore.location", Type.STRING, None, "The CA certificates trusted for client certificates "
   "(ssl.client.auth) and for other brokers (inter-broker TLS), PEM or PKCS12. Unset means the system's CAs.",
   importance=HIGH)
_k("ssl.truststore.password", Type.PASSWORD, None, "The PKCS12 truststore's password; PEM truststores have none.",
   importance=HIGH)
_k("ssl.client.auth", Type.STRING, "none", "Whether TLS clients must present a certificate: required, requested "
   "(checked when given) or none. A client authenticated by certificate is the principal User:<subject DN>.",
   ValidString(("required", "requested", "none")))
_k("ssl.enabled.protocols", Type.LIST, ["TLSv1.2", "TLSv1.3"], "The TLS versions accepted.")
_k("ssl.protocol", Type.STRING, "TLSv1.3", "The TLS version the broker prefers as a client of other brokers.")
_k("ssl.cipher.suites", Type.LIST, [], "TLS 1.2 cipher suites allowed (OpenSSL or IANA names); empty means "
   "Python's defaults. TLS 1.3 suites are not configurable.")
_k("ssl.endpoint.identification.algorithm", Type.STRING, "https", "How the broker checks another broker's "
   "certificate: https verifies the host name; empty turns host name verification off.")
_k("sasl.enabled.mechanisms", Type.LIST, ["GSSAPI"], "The SASL mechanisms SASL listeners accept: PLAIN, "
   "SCRAM-SHA-256, SCRAM-SHA-512 (GSSAPI and OAUTHBEARER are Kafka's only).", importance=MEDIUM)
_k("sasl.mechanism.inter.broker.protocol", Type.STRING, "GSSAPI", "The SASL mechanism brokers use with each "
   "other when the inter-broker listener is SASL_PLAINTEXT or SASL_SSL.")
_k("connections.max.reauth.ms", Type.LONG, 0, "Longest SASL session: a client must re-authenticate (KIP-368) "
   "within this many ms or its connection is closed. 0 means never.")
_k("authorizer.class.name", Type.STRING, "", "kafka.security.authorizer.AclAuthorizer (or pylog's alias "
   "pylog.security.AclAuthorizer) turns ACLs on; empty means every request is allowed.", importance=LOW)
_k("super.users", Type.STRING, None, "Principals allowed everything, semicolon-separated (User:admin;User:broker).")
_k("allow.everyone.if.no.acl.found", Type.BOOLEAN, False, "With ACLs on: whether a resource that has no ACL at "
   "all is open to everyone.")
_k("delegation.token.secret.key", Type.PASSWORD, None, "The secret that signs delegation tokens (KIP-48): a "
   "token's password is HMAC-SHA512(secret, token id). Every broker must have the same one. Unset or empty: "
   "delegation tokens are disabled (their APIs answer DELEGATION_TOKEN_AUTH_DISABLED).", importance=MEDIUM)
_k("delegation.token.master.key", Type.PASSWORD, None, "Deprecated alias of delegation.token.secret.key, used "
   "when that is unset.", importance=LOW)
_k("delegation.token.max.lifetime.ms", Type.LONG, 7 * 24 * 3600 * 1000, "The longest a delegation token may "
   "live, renewals included; a token asked for with a longer (or no) max lifetime gets this one.", at_least(1))
_k("delegation.token.expiry.time.ms", Type.LONG, 24 * 3600 * 1000, "How long a new or renewed delegation token "
   "lives unless renewed (a renewal without a period uses it too).", at_least(1))
_k("delegation.token.expiry.check.interval.ms", Type.LONG, 3600 * 1000, "How often a broker removes the "
   "delegation tokens past their expiry or max lifetime.", at_least(1), LOW)

_group("Client Quotas", "Byte-rate and request quotas per user and client id (KIP-13/55/219) are set with "
       "pylog-configs --entity-type users|clients; these keys shape how their rates are measured.")
_k("quota.window.num", Type.INT, 11, "The number of samples a client's quota rate is measured over.", at_least(1), LOW)
_k("quota.window.size.seconds", Type.INT, 1, "The span of each quota sample, in seconds.", at_least(1), LOW)

_group("pylog Metrics", "pylog's own per-partition load sampling, which feeds the reassignment planner.")
_k("metrics.sample.interval.ms", Type.LONG, 60000, "How often (ms) each broker samples the load of the partitions "
   "it leads (bytes in, bytes out, messages in, log size) and publishes one record per partition to the internal "
   "topic __pylog_metrics. 0 disables sampling.", at_least(0), LOW)
_k("metrics.topic.replication.factor", Type.SHORT, 1, "The replication factor of __pylog_metrics when a broker "
   "creates it. The samples are advisory, so losing some is harmless.", at_least(1), LOW)
_k("prometheus.listener", Type.STRING, "", "Where the broker serves Prometheus metrics at /metrics with Kafka's "
   "names (docs/metrics.md), e.g. http://127.0.0.1:9404 (an empty host listens on all interfaces). Empty: no "
   "endpoint. It answers from the start of the process, while the broker loads its logs, runs, is fenced or "
   "shuts down.", HttpListener(), LOW)

BROKER_CONFIGS: dict[str, ConfigKey] = define(_keys)
del _keys
