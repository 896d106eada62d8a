"""The driver's view of the subscribed partitions and their offsets (kafka-python, no consumer group).

Metadata is re-read on every call so that partitions added to a topic, and topics matching a pattern, are
found on the next trigger.
"""
from __future__ import annotations

import logging
import re
import time
from typing import Callable, Mapping

from pylog.common.types import TP
from pylog.spark.options import EARLIEST, LATEST, OffsetSpec, OptionError, SourceOptions, TimestampSpec

__all__ = ["OffsetReader", "DataLossError", "report_data_loss", "consumer", "new_partition_starts",
           "commit_to_group"]

log = logging.getLogger(__name__)
_TIMEOUT_MS = 30_000


class DataLossError(RuntimeError):
    """Offsets the query needs are gone (retention, deletion, truncation) and failOnDataLoss is true."""


def report_data_loss(opts: SourceOptions, message: str) -> None:
    """Raise DataLossError, or log a warning when failOnDataLoss is false."""
    if opts.fail_on_data_loss:
        raise DataLossError(f"pylog data source: {message}. Some data may have been lost. If you want the query "
                            "to go on anyway, set the option \"failOnDataLoss\" to \"false\".")
    log.warning("pylog data source: %s. Some data may have been lost; going on (failOnDataLoss=false).", message)


def consumer(opts: SourceOptions):
    """A kafka-python consumer with no group that never resets offsets by itself."""
    from kafka import KafkaConsumer  # imported on executors too
    config = {"request_timeout_ms": _TIMEOUT_MS, **opts.client}
    return KafkaConsumer(bootstrap_servers=opts.bootstrap.split(","), group_id=None, enable_auto_commit=False,
                         auto_offset_reset="none", allow_auto_create_topics=False, **config)


class OffsetReader:
    """Lists the subscribed partitions and their earliest / latest offsets."""

    def __init__(self, opts: SourceOptions) -> None:
        self.opts = opts
        self._consumer = None

    def __getstate__(self) -> dict:  # the reader travels to executors; its socket must not
        return {"opts": self.opts, "_consumer": None}

    def _client(self):
        if self._consumer is None:
            self._consumer = consumer(self.opts)
        return self._consumer

    def close(self) -> None:
        """Close the connection, if any."""
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None

    def _retrying(self, action: Callable):
        """action(consumer), retried on a fresh connection after Kafka errors (a broker died, a leader moved)."""
        from kafka.errors import KafkaError
        for attempt in range(self.opts.fetch_retries + 1):
            try:
                return action(self._client())
            except KafkaError as exc:
                if attempt == self.opts.fetch_retries:
                    raise
                log.warning("pylog data source: %r; retrying (fetchOffset.numRetries=%d)", exc, self.opts.fetch_retries)
                self.close()
                time.sleep(self.opts.retry_interval_ms / 1000)

    def partitions(self) -> list[TP]:
        """The subscribed partitions that exist now."""
        return self._retrying(self._partitions)

    def _partitions(self, c) -> list[TP]:
        # topics() always asks the cluster; it leaves out internal topics, as a pattern subscription should,
        # but the partitions it caches include them, so a topic named outright is found either way.
        topics = c.topics()
        if self.opts.pattern is not None:
            rx = re.compile(self.opts.pattern)
            wanted = sorted(t for t in topics if rx.fullmatch(t))
        elif self.opts.assign:
            return [tp for tp in self.opts.assign if tp[1] in (c.partitions_for_topic(tp[0]) or ())]
        else:
            wanted = list(self.opts.subscribe)
        return [(t, p) for t in wanted for p in sorted(c.partitions_for_topic(t) or ())]

    def require_partitions(self) -> list[TP]:
        """partitions(), but an error naming what is missing when a named topic or partition does not exist."""
        found = self.partitions()
        if self.opts.assign:
            missing = sorted(set(self.opts.assign) - set(found))
            if missing:
                raise OptionError(f"assigned partitions do not exist: {missing}")
        elif self.opts.subscribe:
            missing = [t for t in self.opts.subscribe if not any(tp[0] == t for tp in found)]
            if missing:
                raise OptionError(f"topic(s) {', '.join(map(repr, missing))} do not exist")
        return found

    def earliest(self, tps: list[TP]) -> dict[TP, int]:
        """The log start offset of each partition."""
        return self._retrying(lambda c: self._offsets(tps, c.beginning_offsets))

    def latest(self, tps: list[TP]) -> dict[TP, int]:
        """The log end offset (high watermark) of each partition."""
        return self._retrying(lambda c: self._offsets(tps, c.end_offsets))

    def bytes_per_offset(self, tps: list[TP], earliest: Mapping[TP, int], latest: Mapping[TP, int]) -> dict[TP, float]:
        """Each partition's average bytes per offset on disk (its largest replica over its offset span)."""
        from kafka.admin import KafkaAdminClient
        security = {k: v for k, v in self.opts.client.items() if k.startswith(("security_", "sasl_", "ssl_"))}
        admin = KafkaAdminClient(bootstrap_servers=self.opts.bootstrap.split(","), **security)
        try:
            dirs = admin.describe_log_dirs(topic_partitions=sorted({t for t, _ in tps}))
        finally:
            admin.close()
        sizes: dict[TP, int] = {}
        for broker in dirs:
            for log_dir in broker["log_dirs"]:
                for topic in log_dir.get("topics", ()):
                    for part in topic.get("partitions", ()):
                        tp = (topic["name"], part["partition_index"])
                        sizes[tp] = max(sizes.get(tp, 0), part["partition_size"])
        return {tp: sizes.get(tp, 0) / max(1, latest[tp] - earliest[tp]) for tp in tps if tp in latest}

    @staticmethod
    def _offsets(tps: list[TP], fetch) -> dict[TP, int]:
        from kafka import TopicPartition
        if not tps:
            return {}
        got = fetch([TopicPartition(t, p) for t, p in tps], _TIMEOUT_MS)
        return {(tp.topic, tp.partition): off for tp, off in got.items()}

    def by_time(self, timestamps: Mapping[TP, int]) -> dict[TP, int | None]:
        """The first offset whose timestamp is at or after each partition's timestamp; None where there is none."""
        from kafka import TopicPartition

        def ask(c) -> dict[TP, int | None]:
            got = c.offsets_for_times({TopicPartition(t, p): ts for (t, p), ts in timestamps.items()})
            return {(tp.topic, tp.partition): (None if found is None else found.offset) for tp, found in got.items()}
        return self._retrying(ask) if timestamps else {}

    def _resolve_time(self, spec: TimestampSpec, tps: list[TP], key: str) -> dict[TP, int]:
        """Offsets by record time; a partition with no record that late starts per the strategy or ends at latest."""
        if spec.per_partition is not None and set(spec.per_partition) != set(tps):
            raise OptionError(f'option "{key.replace("Offsets", "OffsetsByTimestamp")}" must name every subscribed '
                              'partition; named '
                              f'{sorted(spec.per_partition)}, subscribed {sorted(tps)}')
        wanted = dict(spec.per_partition) if spec.per_partition is not None else {tp: spec.everywhere for tp in tps}
        found = self.by_time(wanted)
        missing = sorted(tp for tp in tps if found.get(tp) is None)
        name = key.replace("Offsets", "Timestamp" if spec.everywhere is not None else "OffsetsByTimestamp")
        if missing and key.startswith("starting") and self.opts.timestamp_strategy == "error":
            raise OptionError(f'option "{name}": no record at or after the given timestamp in {missing} (set '
                              '"startingOffsetsByTimestampStrategy" to "latest" to start those at the latest offset)')
        return {**{tp: off for tp, off in found.items() if off is not None}, **self.latest(missing)}

    def resolve(self, spec: OffsetSpec, tps: list[TP], key: str) -> dict[TP, int]:
        """Concrete offsets for "earliest" / "latest" / per-partition JSON / timestamps over exactly `tps`."""
        if isinstance(spec, TimestampSpec):
            return self._resolve_time(spec, tps, key)
        if spec == "earliest":
            return self.earliest(tps)
        if spec == "latest":
            return self.latest(tps)
        if set(spec) != set(tps):
            raise OptionError(f'option "{key}" must name every subscribed partition (-2 for earliest, -1 for '
                              f'latest); named {sorted(spec)}, subscribed {sorted(tps)}')
        specific = {tp: o for tp, o in spec.items() if o >= 0}
        earliest = self.earliest([tp for tp, o in spec.items() if o == EARLIEST])
        latest = self.latest([tp for tp, o in spec.items() if o == LATEST])
        return {**specific, **earliest, **latest}


def new_partition_starts(reader: OffsetReader, start: Mapping[TP, int], tps: list[TP]) -> dict[TP, int]:
    """Where partitions unknown to `start` begin: their earliest offset (a loss when that is not 0)."""
    fresh = [tp for tp in tps if tp not in start]
    earliest = reader.earliest(fresh)
    for tp, off in earliest.items():
        if off != 0:
            report_data_loss(reader.opts, f"added partition {tp[0]}-{tp[1]} starts from {off} instead of 0")
    return earliest



def commit_to_group(opts: SourceOptions, offsets: Mapping[TP, int]) -> None:
    """Commit a finished batch's end offsets to the group `commitOffsetsToGroup` (as a simple, memberless consumer).

    Only lag tools read them: the checkpoint stays the query's truth. A failure is logged, never raised, so a
    group that other consumers hold (UNKNOWN_MEMBER_ID, ...) never stops the query.
    """
    from kafka import KafkaConsumer, TopicPartition
    from kafka.errors import KafkaError
    from kafka.structs import OffsetAndMetadata
    group = opts.commit_offsets_to_group
    config = {k: v for k, v in opts.client.items() if k != "isolation_level"}
    c = KafkaConsumer(bootstrap_servers=opts.bootstrap.split(","), group_id=group, enable_auto_commit=False,
                      request_timeout_ms=_TIMEOUT_MS, **config)
    try:
        c.commit({TopicPartition(t, p): OffsetAndMetadata(off, "", -1) for (t, p), off in offsets.items()})
    except KafkaError as exc:
        log.warning("pylog data source: committing the batch's offsets to group %r failed (%r); the query goes on",
                    group, exc)
    finally:
        c.close()
