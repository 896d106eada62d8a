"""Partition logs on disk: segments, indexes, checkpoints, recovery, retention.

Kafka's on-disk layout and file formats, so a log dir can be inspected with Kafka's own tools
(and ours: bin/pylog-dump-log.sh). Everything here is synchronous and single-threaded.
"""

from pylog.log.checkpoint import (
    CheckpointFile,
    EpochEntry,
    LeaderEpochCheckpoint,
    OffsetCheckpoint,
    PartitionMetadataFile,
)
from pylog.log.config import LogConfig
from pylog.log.epoch_cache import LeaderEpochCache
from pylog.log.errors import (
    CheckpointError,
    CorruptIndexError,
    InvalidTimestampError,
    KafkaStorageError,
    LogError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
    RecordTooLargeError,
    RecordValidationError,
    UnexpectedAppendOffsetError,
)
from pylog.log.log import AppendInfo, FileSlice, Log, OffsetTimestamp, parse_partition_dir
from pylog.log.manager import CLEAN_SHUTDOWN_FILE, LogManager

__all__ = [
    "AppendInfo",
    "CLEAN_SHUTDOWN_FILE",
    "CheckpointError",
    "CheckpointFile",
    "CorruptIndexError",
    "EpochEntry",
    "InvalidTimestampError",
    "FileSlice",
    "KafkaStorageError",
    "LeaderEpochCache",
    "LeaderEpochCheckpoint",
    "Log",
    "LogConfig",
    "LogError",
    "LogManager",
    "OffsetCheckpoint",
    "OffsetOutOfRangeError",
    "OffsetTimestamp",
    "PartitionMetadataFile",
    "RecordBatchTooLargeError",
    "RecordTooLargeError",
    "RecordValidationError",
    "UnexpectedAppendOffsetError",
    "parse_partition_dir",
]
