"""Options of the `pylog` format, parsed once on the driver: Spark's Kafka source and sink option names.

Spark hands a data source its options case-insensitively (keys arrive lower-cased), so every lookup here is
lower-case. Offsets travel as Spark's Kafka JSON, `{"topic": {"0": 123}}`, with -2 for earliest and -1 for
latest where a user writes them, and always as concrete offsets in the checkpoint.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Mapping, Union

from pylog.common.types import TP

__all__ = ["OptionError", "SourceOptions", "SinkOptions", "parse_source_options", "parse_sink_options",
           "parse_offsets_json", "offsets_json", "source_schema", "EARLIEST", "LATEST"]

EARLIEST, LATEST = -2, -1
OffsetSpec = Union[str, dict]  # "earliest" / "latest" / {TP: offset or -1 / -2}

BASE_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
               "timestampType int")
HEADERS_FIELD = "headers array<struct<key: string, value: binary>>"
# Spark's Kafka source refuses these because the source manages them itself (no group, no auto reset).
_FORBIDDEN_SOURCE = {"group.id", "auto.offset.reset", "enable.auto.commit", "key.deserializer",
                     "value.deserializer", "interceptor.classes"}
_FORBIDDEN_SINK = {"key.serializer", "value.serializer", "interceptor.classes", "transactional.id"}


_SPELLING = {k.lower(): k for k in ("startingOffsets", "endingOffsets", "maxOffsetsPerTrigger", "minPartitions",
                                     "includeHeaders", "failOnDataLoss", "kafkaConsumer.pollTimeoutMs",
                                     "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "commitTopic")}
ISOLATION_LEVELS = ("read_committed", "read_uncommitted")
SEMANTICS = ("exactly-once", "at-least-once")
# The exactly-once sink's markers (txn_sink.py); not "__...": brokers report those as internal, clients hide them.
COMMIT_TOPIC = "_pylog_spark_commits"


def _name(key: str) -> str:
    """An option's name as Spark's documentation spells it (Spark hands them to us lower-cased)."""
    return _SPELLING.get(key, key)


class OptionError(ValueError):
    """A `pylog` data source option is missing, malformed or contradictory."""

    def __init__(self, message: str) -> None:
        super().__init__(f"pylog data source: {message}")


@dataclass(frozen=True)
class SourceOptions:
    """What a read of the `pylog` format was asked for."""

    bootstrap: str
    subscribe: tuple[str, ...] = ()
    pattern: str | None = None
    assign: tuple[TP, ...] = ()
    starting: OffsetSpec = "latest"
    ending: OffsetSpec = "latest"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    include_headers: bool = False
    fail_on_data_loss: bool = True
    poll_timeout_ms: int = 120_000
    fetch_retries: int = 3
    retry_interval_ms: int = 1000
    client: dict = field(default_factory=dict)

    def describe(self) -> str:
        """The subscription, as a user wrote it (for error messages)."""
        if self.pattern is not None:
            return f"subscribePattern {self.pattern!r}"
        if self.assign:
            return f"assign {sorted(self.assign)}"
        return f"subscribe {list(self.subscribe)}"


@dataclass(frozen=True)
class SinkOptions:
    """What a write to the `pylog` format was asked for."""

    bootstrap: str
    topic: str | None = None
    client: dict = field(default_factory=dict)
    exactly_once: bool = True
    commit_topic: str = COMMIT_TOPIC


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in options.items()}


def _bootstrap(opts: dict[str, str]) -> str:
    value = opts.get("kafka.bootstrap.servers") or opts.get("bootstrap.servers")
    if not value or not value.strip():
        raise OptionError('option "kafka.bootstrap.servers" is required (e.g. "127.0.0.1:9092")')
    return value.strip()


def _client_config(opts: dict[str, str], known: Mapping[str, object], forbidden: set[str]) -> dict:
    """`kafka.*` options -> kafka-python keyword arguments, refusing what the source or sink must own."""
    config = {}
    for key, value in opts.items():
        if not key.startswith("kafka.") or key == "kafka.bootstrap.servers":
            continue
        name = key[len("kafka."):]
        if name in forbidden:
            raise OptionError(f'option "{_name(key)}" is not supported: the pylog data source manages it itself')
        arg = name.replace(".", "_")
        if arg not in known:
            raise OptionError(f'option "{_name(key)}" is not a Kafka client setting pylog can pass on')
        default = known[arg]
        config[arg] = int(value) if isinstance(default, int) and not isinstance(default, bool) else value
    return config


def _int(opts: dict[str, str], key: str, minimum: int) -> int | None:
    if key not in opts:
        return None
    try:
        value = int(opts[key])
    except ValueError:
        raise OptionError(f'option "{_name(key)}" must be an integer, got {opts[key]!r}') from None
    if value < minimum:
        raise OptionError(f'option "{_name(key)}" must be at least {minimum}, got {value}')
    return value


def _default(value: int | None, default: int) -> int:
    return default if value is None else value


def _bool(opts: dict[str, str], key: str, default: bool) -> bool:
    value = opts.get(key)
    if value is None:
        return default
    if value.lower() not in ("true", "false"):
        raise OptionError(f'option "{_name(key)}" must be true or false, got {value!r}')
    return value.lower() == "true"


def _json(text: str, key: str) -> dict:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise OptionError(f'option "{_name(key)}" is not valid JSON ({exc.msg} at character {exc.pos}): '
                          f'{text!r}') from None
    if not isinstance(value, dict):
        raise OptionError(f'option "{_name(key)}" must be a JSON object, got {text!r}')
    return value


def parse_offsets_json(text: str, key: str) -> dict[TP, int]:
    """Spark's per-partition offsets JSON ({"topic": {"0": 23, "1": -1}}) -> {(topic, 0): 23, ...}."""
    result = {}
    for topic, parts in _json(text, key).items():
        if not isinstance(parts, dict):
            raise OptionError(f'option "{_name(key)}": topic {topic!r} must map partitions to offsets, got {parts!r}')
        for part, offset in parts.items():
            if not str(part).isdigit() or isinstance(offset, bool) or not isinstance(offset, int) or offset < -2:
                raise OptionError(f'option "{_name(key)}": bad partition/offset {part!r}: {offset!r} '
                                  f'for topic {topic!r}')
            result[(topic, int(part))] = offset
    return result


def offsets_json(offsets: Mapping[TP, int]) -> dict:
    """{(topic, 0): 23} -> {"topic": {"0": 23}}, sorted so equal offsets always serialize equally."""
    out: dict[str, dict[str, int]] = {}
    for topic, part in sorted(offsets):
        out.setdefault(topic, {})[str(part)] = int(offsets[(topic, part)])
    return out


def _spec(opts: dict[str, str], key: str, default: str, allowed: tuple[str, ...]) -> OffsetSpec:
    value = opts.get(key, default).strip()
    if value.lower() in allowed:
        return value.lower()
    if value.startswith("{"):
        return parse_offsets_json(value, key)
    raise OptionError(f'option "{_name(key)}" must be {" or ".join(allowed)} or per-partition JSON, got {value!r}')


def _subscription(opts: dict[str, str]) -> dict:
    given = [k for k in ("subscribe", "subscribepattern", "assign", "topic") if opts.get(k, "").strip()]
    if "topic" in given and len(given) > 1:  # `topic` is the batch reader's older spelling of `subscribe`
        given.remove("topic")
    if len(given) != 1:
        raise OptionError('exactly one of "subscribe", "subscribePattern" or "assign" is required'
                          + (f", got {len(given)}" if given else ""))
    key, value = given[0], opts[given[0]].strip()
    if key in ("subscribe", "topic"):
        topics = tuple(t.strip() for t in value.split(",") if t.strip())
        if not topics:
            raise OptionError('option "subscribe" names no topic')
        return {"subscribe": topics}
    if key == "subscribepattern":
        try:
            re.compile(value)
        except re.error as exc:
            raise OptionError(f'option "subscribePattern" is not a valid pattern ({exc}): {value!r}') from None
        return {"pattern": value}
    assigned = []
    for topic, parts in _json(value, "assign").items():
        if not isinstance(parts, list) or not all(isinstance(p, int) and p >= 0 for p in parts):
            raise OptionError(f'option "assign": topic {topic!r} must map to a list of partitions, got {parts!r}')
        assigned += [(topic, p) for p in parts]
    if not assigned:
        raise OptionError('option "assign" names no partition')
    return {"assign": tuple(sorted(assigned))}


def parse_source_options(options: Mapping[str, str], streaming: bool) -> SourceOptions:
    """Validate a read's options; OptionError names the first bad one."""
    from kafka import KafkaConsumer
    opts = _lower(options)
    starting = _spec(opts, "startingoffsets", "latest" if streaming else "earliest", ("earliest", "latest"))
    ending = _spec(opts, "endingoffsets", "latest", ("latest", "earliest"))
    if streaming and "endingoffsets" in opts:
        raise OptionError('option "endingOffsets" is for batch reads only')
    if isinstance(ending, dict) and EARLIEST in ending.values():
        raise OptionError('option "endingOffsets" cannot use -2 (earliest) for a partition')
    max_per_trigger = _int(opts, "maxoffsetspertrigger", 1)
    if max_per_trigger is not None and not streaming:
        raise OptionError('option "maxOffsetsPerTrigger" is for streaming reads only')
    return SourceOptions(
        bootstrap=_bootstrap(opts), **_subscription(opts), starting=starting, ending=ending,
        max_offsets_per_trigger=max_per_trigger, min_partitions=_int(opts, "minpartitions", 1),
        include_headers=_bool(opts, "includeheaders", False), fail_on_data_loss=_bool(opts, "failondataloss", True),
        poll_timeout_ms=_int(opts, "kafkaconsumer.polltimeoutms", 1) or 120_000,
        fetch_retries=_default(_int(opts, "fetchoffset.numretries", 0), 3),
        retry_interval_ms=_default(_int(opts, "fetchoffset.retryintervalms", 0), 1000),
        client={**_client_config(opts, KafkaConsumer.DEFAULT_CONFIG, _FORBIDDEN_SOURCE),
                "isolation_level": _isolation(opts)})


def _isolation(opts: dict[str, str]) -> str:
    """`isolation.level` (or Spark's `kafka.isolation.level`): read_committed unless asked otherwise."""
    given = {opts[k].strip().lower() for k in ("isolation.level", "kafka.isolation.level") if k in opts}
    if len(given) > 1:
        raise OptionError('options "isolation.level" and "kafka.isolation.level" disagree')
    level = given.pop() if given else "read_committed"
    if level not in ISOLATION_LEVELS:
        raise OptionError(f'option "isolation.level" must be read_committed or read_uncommitted, got {level!r}')
    return level


def parse_sink_options(options: Mapping[str, str]) -> SinkOptions:
    """Validate a write's options; OptionError names the first bad one."""
    from kafka import KafkaProducer
    opts = _lower(options)
    semantics = opts.get("semantics", "exactly-once").strip().lower()
    if semantics not in SEMANTICS:
        raise OptionError(f'option "semantics" must be "exactly-once" or "at-least-once", got {semantics!r}')
    topic = opts.get("topic", "").strip() or None
    commit_topic = opts.get("committopic", COMMIT_TOPIC).strip()
    if not commit_topic:
        raise OptionError('option "commitTopic" names no topic')
    return SinkOptions(_bootstrap(opts), topic, _client_config(opts, KafkaProducer.DEFAULT_CONFIG, _FORBIDDEN_SINK),
                       exactly_once=semantics == "exactly-once", commit_topic=commit_topic)


def source_schema(include_headers: bool) -> str:
    """The row schema of Spark's Kafka source (with `headers` when asked for)."""
    return BASE_SCHEMA + (", " + HEADERS_FIELD if include_headers else "")
