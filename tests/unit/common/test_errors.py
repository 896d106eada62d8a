"""One error registry: the exceptions of the admin client and the planner carry its codes."""

import pytest

from pylog import common
from pylog.cli.admin_client import ApiError
from pylog.common.errors import ErrorCode, KafkaError
from pylog.log import errors as log_errors
from pylog.planner import assignment as placement
from pylog.protocol import records
from pylog.protocol.errors import ErrorCode as ProtocolErrorCode
from pylog.security.sasl import SaslFailure
from pylog.zk import admin as zk_admin


@pytest.mark.parametrize("cls,code", [
    (zk_admin.AdminError, -1),
    (zk_admin.UnknownTopicOrPartitionError, 3),
    (zk_admin.BrokerNotAvailableError, 8),
    (zk_admin.InvalidTopicError, 17),
    (zk_admin.TopicExistsError, 36),
    (zk_admin.InvalidPartitionsError, 37),
    (zk_admin.InvalidReplicaAssignmentError, 39),
    (zk_admin.ReassignmentInProgressError, 60),
    (zk_admin.TopicAlreadyMarkedForDeletionError, 0),  # Kafka's broker reports success
    (zk_admin.PreferredLeaderElectionInProgressError, -1),  # an AdminOperationException in Kafka
    (placement.AssignmentError, -1),
    (placement.AdminOperationError, -1),
    (placement.InvalidPartitionsError, 37),
    (placement.InvalidReplicationFactorError, 38),
    (placement.InvalidReplicaAssignmentError, 39),
    (placement.BrokerNotAvailableError, 8),
])
def test_exception_codes_come_from_the_registry(cls, code):
    exc = cls("why")
    assert isinstance(exc, KafkaError)
    assert (exc.code, exc.error_code, str(exc)) == (ErrorCode(code), code, "why")


def test_default_message_is_kafkas():
    assert str(zk_admin.TopicExistsError()) == "Topic with this name already exists."
    assert str(KafkaError(code=ErrorCode.INVALID_RECORD)) == ErrorCode.INVALID_RECORD.message


@pytest.mark.parametrize("exc,code,message", [
    (KafkaError("why", code=ErrorCode.INVALID_CONFIG), ErrorCode.INVALID_CONFIG, "why"),
    (ApiError(29), ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
    (ApiError(29, ""), ErrorCode.TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
    (SaslFailure(ErrorCode.SASL_AUTHENTICATION_FAILED, "bad"), ErrorCode.SASL_AUTHENTICATION_FAILED, "bad"),
    (records.CorruptRecordError("crc"), ErrorCode.CORRUPT_MESSAGE, "crc"),
    (log_errors.OffsetOutOfRangeError("past the end"), ErrorCode.OFFSET_OUT_OF_RANGE, "past the end"),
])
def test_one_base_for_every_coded_exception(exc, code, message):
    # Whether the class or the instance fixes the code, callers read the same three things.
    assert isinstance(exc, KafkaError)
    assert (exc.code, exc.error_code, exc.message, str(exc)) == (code, int(code), message, message)


def test_shared_api_exceptions_have_one_class():
    # The ZooKeeper admin client and the placement raise the same types: one `except` catches either.
    for name in ("InvalidPartitionsError", "InvalidReplicaAssignmentError", "BrokerNotAvailableError"):
        assert getattr(zk_admin, name) is getattr(placement, name) is getattr(common.errors, name)


def test_protocol_names_the_same_registry():
    assert ProtocolErrorCode is ErrorCode
    assert ErrorCode.NOT_CONTROLLER.retriable and not ErrorCode.TOPIC_ALREADY_EXISTS.retriable
    assert ErrorCode.NOT_CONTROLLER.exception_name == "org.apache.kafka.common.errors.NotControllerException"
