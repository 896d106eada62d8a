"""Kafka's error registry: wire number, name, retriability, the Java exception operators see, and
the default message; plus KafkaError, the base of every exception that carries one.

It lives in common/ so that every layer (protocol, zk admin, planner, broker, CLI) can name an
error the same way; pylog.protocol.errors re-exports ErrorCode under its protocol name.
"""

from __future__ import annotations

import enum

# code  name  retriable  java exception  default message -- from Kafka's Errors enum.
_TABLE = """
-1|UNKNOWN_SERVER_ERROR|0|UnknownServerException|The server experienced an unexpected error when processing the request.
0|NONE|0||
1|OFFSET_OUT_OF_RANGE|0|OffsetOutOfRangeException|The requested offset is not within the range of offsets maintained by the server.
2|CORRUPT_MESSAGE|1|CorruptRecordException|This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted topic, or is otherwise corrupt.
3|UNKNOWN_TOPIC_OR_PARTITION|1|UnknownTopicOrPartitionException|This server does not host this topic-partition.
4|INVALID_FETCH_SIZE|0|InvalidFetchSizeException|The requested fetch size is invalid.
5|LEADER_NOT_AVAILABLE|1|LeaderNotAvailableException|There is no leader for this topic-partition as we are in the middle of a leadership election.
6|NOT_LEADER_OR_FOLLOWER|1|NotLeaderOrFollowerException|For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition.
7|REQUEST_TIMED_OUT|1|TimeoutException|The request timed out.
8|BROKER_NOT_AVAILABLE|0|BrokerNotAvailableException|The broker is not available.
9|REPLICA_NOT_AVAILABLE|1|ReplicaNotAvailableException|The replica is not available for the requested topic-partition.
10|MESSAGE_TOO_LARGE|0|RecordTooLargeException|The request included a message larger than the max message size the server will accept.
11|STALE_CONTROLLER_EPOCH|0|ControllerMovedException|The controller moved to another broker.
12|OFFSET_METADATA_TOO_LARGE|0|OffsetMetadataTooLarge|The metadata field of the offset request was too large.
13|NETWORK_EXCEPTION|1|NetworkException|The server disconnected before a response was received.
14|COORDINATOR_LOAD_IN_PROGRESS|1|CoordinatorLoadInProgressException|The coordinator is loading and hence can't process requests.
15|COORDINATOR_NOT_AVAILABLE|1|CoordinatorNotAvailableException|The coordinator is not available.
16|NOT_COORDINATOR|1|NotCoordinatorException|This is not the correct coordinator.
17|INVALID_TOPIC_EXCEPTION|0|InvalidTopicException|The request attempted to perform an operation on an invalid topic.
18|RECORD_LIST_TOO_LARGE|0|RecordBatchTooLargeException|The request included message batch larger than the configured segment size on the server.
19|NOT_ENOUGH_REPLICAS|1|NotEnoughReplicasException|Messages are rejected since there are fewer in-sync replicas than required.
20|NOT_ENOUGH_REPLICAS_AFTER_APPEND|1|NotEnoughReplicasAfterAppendException|Messages are written to the log, but to fewer in-sync replicas than required.
21|INVALID_REQUIRED_ACKS|0|InvalidRequiredAcksException|Produce request specified an invalid value for required acks.
22|ILLEGAL_GENERATION|0|IllegalGenerationException|Specified group generation id is not valid.
23|INCONSISTENT_GROUP_PROTOCOL|0|InconsistentGroupProtocolException|The group member's supported protocols are incompatible with those of existing members or first group member tried to join with empty protocol type or empty protocol list.
24|INVALID_GROUP_ID|0|InvalidGroupIdException|The configured groupId is invalid.
25|UNKNOWN_MEMBER_ID|0|UnknownMemberIdException|The coordinator is not aware of this member.
26|INVALID_SESSION_TIMEOUT|0|InvalidSessionTimeoutException|The session timeout is not within the range allowed by the broker.
27|REBALANCE_IN_PROGRESS|0|RebalanceInProgressException|The group is rebalancing, so a rejoin is needed.
28|INVALID_COMMIT_OFFSET_SIZE|0|InvalidCommitOffsetSizeException|The committing offset data size is not valid.
29|TOPIC_AUTHORIZATION_FAILED|0|TopicAuthorizationException|Topic authorization failed.
30|GROUP_AUTHORIZATION_FAILED|0|GroupAuthorizationException|Group authorization failed.
31|CLUSTER_AUTHORIZATION_FAILED|0|ClusterAuthorizationException|Cluster authorization failed.
32|INVALID_TIMESTAMP|0|InvalidTimestampException|The timestamp of the message is out of acceptable range.
33|UNSUPPORTED_SASL_MECHANISM|0|UnsupportedSaslMechanismException|The broker does not support the requested SASL mechanism.
34|ILLEGAL_SASL_STATE|0|IllegalSaslStateException|Request is not valid given the current SASL state.
35|UNSUPPORTED_VERSION|0|UnsupportedVersionException|The version of API is not supported.
36|TOPIC_ALREADY_EXISTS|0|TopicExistsException|Topic with this name already exists.
37|INVALID_PARTITIONS|0|InvalidPartitionsException|Number of partitions is below 1.
38|INVALID_REPLICATION_FACTOR|0|InvalidReplicationFactorException|Replication factor is below 1 or larger than the number of available brokers.
39|INVALID_REPLICA_ASSIGNMENT|0|InvalidReplicaAssignmentException|Replica assignment is invalid.
40|INVALID_CONFIG|0|InvalidConfigurationException|Configuration is invalid.
41|NOT_CONTROLLER|1|NotControllerException|This is not the correct controller for this cluster.
42|INVALID_REQUEST|0|InvalidRequestException|This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details.
43|UNSUPPORTED_FOR_MESSAGE_FORMAT|0|UnsupportedForMessageFormatException|The message format version on the broker does not support the request.
44|POLICY_VIOLATION|0|PolicyViolationException|Request parameters do not satisfy the configured policy.
45|OUT_OF_ORDER_SEQUENCE_NUMBER|0|OutOfOrderSequenceException|The broker received an out of order sequence number.
46|DUPLICATE_SEQUENCE_NUMBER|0|DuplicateSequenceException|The broker received a duplicate sequence number.
47|INVALID_PRODUCER_EPOCH|0|InvalidProducerEpochException|Producer attempted to produce with an old epoch.
48|INVALID_TXN_STATE|0|InvalidTxnStateException|The producer attempted a transactional operation in an invalid state.
49|INVALID_PRODUCER_ID_MAPPING|0|InvalidPidMappingException|The producer attempted to use a producer id which is not currently assigned to its transactional id.
50|INVALID_TRANSACTION_TIMEOUT|0|InvalidTxnTimeoutException|The transaction timeout is larger than the maximum value allowed by the broker (as configured by transaction.max.timeout.ms).
51|CONCURRENT_TRANSACTIONS|1|ConcurrentTransactionsException|The producer attempted to update a transaction while another concurrent operation on the same transaction was ongoing.
52|TRANSACTION_COORDINATOR_FENCED|0|TransactionCoordinatorFencedException|Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current coordinator for a given producer.
53|TRANSACTIONAL_ID_AUTHORIZATION_FAILED|0|TransactionalIdAuthorizationException|Transactional Id authorization failed.
54|SECURITY_DISABLED|0|SecurityDisabledException|Security features are disabled.
55|OPERATION_NOT_ATTEMPTED|0|OperationNotAttemptedException|The broker did not attempt to execute this operation. This may happen for batched RPCs where some operations in the batch failed, causing the broker to respond without trying the rest.
56|KAFKA_STORAGE_ERROR|1|KafkaStorageException|Disk error when trying to access log file on the disk.
57|LOG_DIR_NOT_FOUND|0|LogDirNotFoundException|The user-specified log directory is not found in the broker config.
58|SASL_AUTHENTICATION_FAILED|0|SaslAuthenticationException|SASL Authentication failed.
59|UNKNOWN_PRODUCER_ID|0|UnknownProducerIdException|This exception is raised by the broker if it could not locate the producer metadata associated with the producerId in question.
60|REASSIGNMENT_IN_PROGRESS|0|ReassignmentInProgressException|A partition reassignment is in progress.
61|DELEGATION_TOKEN_AUTH_DISABLED|0|DelegationTokenDisabledException|Delegation Token feature is not enabled.
62|DELEGATION_TOKEN_NOT_FOUND|0|DelegationTokenNotFoundException|Delegation Token is not found on server.
63|DELEGATION_TOKEN_OWNER_MISMATCH|0|DelegationTokenOwnerMismatchException|Specified Principal is not valid Owner/Renewer.
64|DELEGATION_TOKEN_REQUEST_NOT_ALLOWED|0|UnsupportedByAuthenticationException|Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.
65|DELEGATION_TOKEN_AUTHORIZATION_FAILED|0|DelegationTokenAuthorizationException|Delegation Token authorization failed.
66|DELEGATION_TOKEN_EXPIRED|0|DelegationTokenExpiredException|Delegation Token is expired.
67|INVALID_PRINCIPAL_TYPE|0|InvalidPrincipalTypeException|Supplied principalType is not supported.
68|NON_EMPTY_GROUP|0|GroupNotEmptyException|The group is not empty.
69|GROUP_ID_NOT_FOUND|0|GroupIdNotFoundException|The group id does not exist.
70|FETCH_SESSION_ID_NOT_FOUND|1|FetchSessionIdNotFoundException|The fetch session ID was not found.
71|INVALID_FETCH_SESSION_EPOCH|1|InvalidFetchSessionEpochException|The fetch session epoch is invalid.
72|LISTENER_NOT_FOUND|1|ListenerNotFoundException|There is no listener on the leader broker that matches the listener on which metadata request was processed.
73|TOPIC_DELETION_DISABLED|0|TopicDeletionDisabledException|Topic deletion is disabled.
74|FENCED_LEADER_EPOCH|1|FencedLeaderEpochException|The leader epoch in the request is older than the epoch on the broker.
75|UNKNOWN_LEADER_EPOCH|1|UnknownLeaderEpochException|The leader epoch in the request is newer than the epoch on the broker.
76|UNSUPPORTED_COMPRESSION_TYPE|0|UnsupportedCompressionTypeException|The requesting client does not support the compression type of given partition.
77|STALE_BROKER_EPOCH|0|StaleBrokerEpochException|Broker epoch has changed.
78|OFFSET_NOT_AVAILABLE|1|OffsetNotAvailableException|The leader high watermark has not caught up from a recent leader election so the offsets cannot be guaranteed to be monotonically increasing.
79|MEMBER_ID_REQUIRED|0|MemberIdRequiredException|The group member needs to have a valid member id before actually entering a consumer group.
80|PREFERRED_LEADER_NOT_AVAILABLE|1|PreferredLeaderNotAvailableException|The preferred leader was not available.
81|GROUP_MAX_SIZE_REACHED|0|GroupMaxSizeReachedException|The consumer group has reached its max size.
82|FENCED_INSTANCE_ID|0|FencedInstanceIdException|The broker rejected this static consumer since another consumer with the same group.instance.id has registered with a different member.id.
83|ELIGIBLE_LEADERS_NOT_AVAILABLE|1|EligibleLeadersNotAvailableException|Eligible topic partition leaders are not available.
84|ELECTION_NOT_NEEDED|1|ElectionNotNeededException|Leader election not needed for topic partition.
85|NO_REASSIGNMENT_IN_PROGRESS|0|NoReassignmentInProgressException|No partition reassignment is in progress.
86|GROUP_SUBSCRIBED_TO_TOPIC|0|GroupSubscribedToTopicException|Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.
87|INVALID_RECORD|0|InvalidRecordException|This record has failed the validation on broker and hence will be rejected.
88|UNSTABLE_OFFSET_COMMIT|1|UnstableOffsetCommitException|There are unstable offsets that need to be cleared.
89|THROTTLING_QUOTA_EXCEEDED|1|ThrottlingQuotaExceededException|The throttling quota has been exceeded.
90|PRODUCER_FENCED|0|ProducerFencedException|There is a newer producer with the same transactionalId which fences the current one.
91|RESOURCE_NOT_FOUND|0|ResourceNotFoundException|A request illegally referred to a resource that does not exist.
92|DUPLICATE_RESOURCE|0|DuplicateResourceException|A request illegally referred to the same resource twice.
93|UNACCEPTABLE_CREDENTIAL|0|UnacceptableCredentialException|Requested credential would not meet criteria for acceptability.
94|INCONSISTENT_VOTER_SET|0|InconsistentVoterSetException|Indicates that the either the sender or recipient of a voter-only request is not one of the expected voters
95|INVALID_UPDATE_VERSION|0|InvalidUpdateVersionException|The given update version was invalid.
96|FEATURE_UPDATE_FAILED|0|FeatureUpdateFailedException|Unable to update finalized features due to an unexpected server error.
97|PRINCIPAL_DESERIALIZATION_FAILURE|0|PrincipalDeserializationException|Request principal deserialization failed during forwarding. This indicates an internal error on the broker cluster security setup.
98|SNAPSHOT_NOT_FOUND|0|SnapshotNotFoundException|Requested snapshot was not found
99|POSITION_OUT_OF_RANGE|0|PositionOutOfRangeException|Requested position is not greater than or equal to zero, and less than the size of the snapshot.
100|UNKNOWN_TOPIC_ID|1|UnknownTopicIdException|This server does not host this topic ID.
101|DUPLICATE_BROKER_REGISTRATION|0|DuplicateBrokerRegistrationException|This broker ID is already in use.
102|BROKER_ID_NOT_REGISTERED|0|BrokerIdNotRegisteredException|The given broker ID was not registered.
103|INCONSISTENT_TOPIC_ID|1|InconsistentTopicIdException|The log's topic ID did not match the topic ID in the request
104|INCONSISTENT_CLUSTER_ID|0|InconsistentClusterIdException|The clusterId in the request does not match that found on the server
105|TRANSACTIONAL_ID_NOT_FOUND|0|TransactionalIdNotFoundException|The transactionalId could not be found
106|FETCH_SESSION_TOPIC_ID_ERROR|1|FetchSessionTopicIdException|The fetch session encountered inconsistent topic ID usage
107|INELIGIBLE_REPLICA|0|IneligibleReplicaException|The new ISR contains at least one ineligible replica.
108|NEW_LEADER_ELECTED|0|NewLeaderElectedException|The AlterPartition request successfully updated the partition state but the leader has changed.
110|FENCED_MEMBER_EPOCH|0|FencedMemberEpochException|The member epoch is fenced by the group coordinator. The member must abandon all its partitions and rejoin.
111|UNRELEASED_INSTANCE_ID|0|UnreleasedInstanceIdException|The instance ID is still used by another member in the consumer group. That member must leave first.
112|UNSUPPORTED_ASSIGNOR|0|UnsupportedAssignorException|The assignor or its version range is not supported by the consumer group.
113|STALE_MEMBER_EPOCH|0|StaleMemberEpochException|The member epoch is stale. The member must retry after receiving its updated member epoch via the ConsumerGroupHeartbeat API.
120|TRANSACTION_ABORTABLE|0|TransactionAbortableException|The server encountered an error with the transaction. The client can abort the transaction to continue using this transactional ID.
128|INVALID_REGULAR_EXPRESSION|0|InvalidRegularExpression|The regular expression is not valid.
"""


class ErrorCode(enum.IntEnum):
    """Kafka's error codes by their protocol names (Errors.java)."""

    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    SASL_AUTHENTICATION_FAILED = 58
    UNKNOWN_PRODUCER_ID = 59
    REASSIGNMENT_IN_PROGRESS = 60
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_NOT_FOUND = 62
    DELEGATION_TOKEN_OWNER_MISMATCH = 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65
    DELEGATION_TOKEN_EXPIRED = 66
    INVALID_PRINCIPAL_TYPE = 67
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    LISTENER_NOT_FOUND = 72
    TOPIC_DELETION_DISABLED = 73
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    STALE_BROKER_EPOCH = 77
    OFFSET_NOT_AVAILABLE = 78
    MEMBER_ID_REQUIRED = 79
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88
    THROTTLING_QUOTA_EXCEEDED = 89
    PRODUCER_FENCED = 90
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93
    INCONSISTENT_VOTER_SET = 94
    INVALID_UPDATE_VERSION = 95
    FEATURE_UPDATE_FAILED = 96
    PRINCIPAL_DESERIALIZATION_FAILURE = 97
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_TOPIC_ID = 103
    INCONSISTENT_CLUSTER_ID = 104
    TRANSACTIONAL_ID_NOT_FOUND = 105
    FETCH_SESSION_TOPIC_ID_ERROR = 106
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    FENCED_MEMBER_EPOCH = 110  # KIP-848 consumer groups (ConsumerGroupHeartbeat, OffsetCommit/OffsetFetch v9)
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    TRANSACTION_ABORTABLE = 120
    INVALID_REGULAR_EXPRESSION = 128

    @property
    def retriable(self) -> bool:
        """Whether a client may retry the same request unchanged."""
        return _INFO[self][0]

    @property
    def exception_name(self) -> str:
        """The fully qualified Java exception Kafka's tools print for this code."""
        return f"org.apache.kafka.common.errors.{_INFO[self][1]}" if _INFO[self][1] else ""

    @property
    def message(self) -> str:
        """Kafka's default human-readable description."""
        return _INFO[self][2]


def _load() -> dict[ErrorCode, tuple[bool, str, str]]:
    info: dict[ErrorCode, tuple[bool, str, str]] = {}
    for line in _TABLE.strip().splitlines():
        code, name, retriable, exc, msg = line.split("|", 4)
        err = ErrorCode(int(code))
        if err.name != name:  # the enum and the table must agree; fail at import, not at run time
            raise AssertionError(f"error table mismatch for {code}: {name} != {err.name}")
        info[err] = (retriable == "1", exc, msg)
    missing = set(ErrorCode) - set(info)
    if missing:
        raise AssertionError(f"error table lacks {sorted(missing)}")
    return info


_INFO = _load()


class KafkaError(Exception):
    """Kafka's ApiException: an operation refused with an error code a client should see.

    The one base of every exception that carries a Kafka error code. Subclasses name their code as the
    class attribute `code`; where one class stands for many codes (a refusal passed on from a response,
    a SASL failure), the instance gets its own with `code=`. The message defaults to Kafka's.
    """

    code: ErrorCode = ErrorCode.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str | None = None, *, code: int | None = None) -> None:
        if code is not None:
            self.code = ErrorCode(code)
        super().__init__(message if message is not None else self.code.message)

    @property
    def message(self) -> str:
        """The text the client is shown (the response's error message)."""
        return str(self.args[0])

    @property
    def error_code(self) -> int:
        """The wire number of `code`."""
        return int(self.code)


# Kafka's ApiExceptions that more than one part raises (the ZooKeeper admin client, the planner's placement, the
# broker's topic admin): one class each, so a caller catches the same type whoever refused.


class InvalidPartitionsError(KafkaError):
    """Kafka's InvalidPartitionsException: a partition count that is not allowed."""

    code = ErrorCode.INVALID_PARTITIONS


class InvalidReplicationFactorError(KafkaError):
    """Kafka's InvalidReplicationFactorException."""

    code = ErrorCode.INVALID_REPLICATION_FACTOR


class InvalidReplicaAssignmentError(KafkaError):
    """Kafka's InvalidReplicaAssignmentException: an inconsistent replica assignment."""

    code = ErrorCode.INVALID_REPLICA_ASSIGNMENT


class BrokerNotAvailableError(KafkaError):
    """Kafka's BrokerNotAvailableException: a replica on a broker that is not registered."""

    code = ErrorCode.BROKER_NOT_AVAILABLE
