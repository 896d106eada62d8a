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
from pylog.spark.options import EARLIEST, LATEST, OffsetSpec, OptionError, SourceOptions

__all__ = ["OffsetReader", "DataLossError", "report_data_loss", "consumer", "new_partition_starts"]

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

    @staticmethod
    def _offsets(tps: list[TP], fetch) -> dict[TP, int]:
        from kafka import TopicPartition
        if not tps:
            return {}
        got = fetch([TopicPartition(t, p) for t, p in tps], _TIMEOUT_MS)
        return {(tp.topic, tp.partition): off for tp, off in got.items()}

    def resolve(self, spec: OffsetSpec, tps: list[TP], key: str) -> dict[TP, int]:
        """Concrete offsets for "earliest" / "latest" / per-partition JSON over exactly the partitions `tps`."""
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

