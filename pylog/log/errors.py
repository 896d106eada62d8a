"""Errors raised by the partition log; those with a Kafka error code carry it as `error_code`."""

from __future__ import annotations

from pylog.common.errors import ErrorCode, KafkaError
from pylog.protocol.records import RecordError


class LogError(Exception):
    """Base of the log's own errors that have no wire error code (a broker bug or disk state)."""


class OffsetOutOfRangeError(KafkaError):
    """A read or log-start move outside [log start offset, log end offset] (OFFSET_OUT_OF_RANGE)."""

    code = ErrorCode.OFFSET_OUT_OF_RANGE


class KafkaStorageError(KafkaError):
    """The log's files are unusable, e.g. flushed data is corrupt (KAFKA_STORAGE_ERROR)."""

    code = ErrorCode.KAFKA_STORAGE_ERROR


class RecordTooLargeError(RecordError):
    """A batch larger than max.message.bytes (MESSAGE_TOO_LARGE, 10)."""

    code = ErrorCode.MESSAGE_TOO_LARGE


class RecordBatchTooLargeError(RecordError):
    """An append larger than segment.bytes (RECORD_LIST_TOO_LARGE, 18)."""

    code = ErrorCode.RECORD_LIST_TOO_LARGE


class InvalidTimestampError(RecordError):
    """A CreateTime timestamp too far from the broker's clock (INVALID_TIMESTAMP, 32)."""

    code = ErrorCode.INVALID_TIMESTAMP


class InvalidProducerEpochError(RecordError):
    """A produce with an epoch older than the partition last saw from that producer."""

    code = ErrorCode.INVALID_PRODUCER_EPOCH


class OutOfOrderSequenceError(RecordError):
    """A produce whose first sequence does not follow the producer's last one (a gap)."""

    code = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidProducerRecordError(RecordError):
    """An idempotent batch without a sequence number (Kafka's LogValidator check)."""

    code = ErrorCode.INVALID_RECORD


class UnexpectedAppendOffsetError(LogError):
    """A follower append that does not start at the log end offset, or whose offsets go backwards."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class CorruptIndexError(LogError):
    """An index file that fails its sanity check; the segment's indexes get rebuilt."""


class CheckpointError(LogError, OSError):
    """A malformed checkpoint file (Kafka: IOException with the same message)."""


class RecordValidationError(RecordError):
    """Records refused one by one (INVALID_RECORD, 87): Kafka's RecordValidationException.

    `record_errors` holds (index of the record in its batch, message) for the produce response.
    """

    code = ErrorCode.INVALID_RECORD

    def __init__(self, record_errors: list[tuple[int, str]]) -> None:
        shown = ", ".join(f"RecordError(batchIndex={i}, message='{m}')" for i, m in record_errors[:3])
        super().__init__(
            f"One or more records have been rejected due to {len(record_errors)} record errors in total, "
            f"and only showing the first three errors at most: [{shown}]"
        )
        self.record_errors = record_errors
