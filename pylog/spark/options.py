"""Options of the `pylog` format, parsed once on the driver: Spark's Kafka source and sink option names.

Spark hands a data source its options case-insensitively (keys arrive lower-cased), so every lookup here is
lower-case. Offsets travel as Spark's Kafka JSON, `{"topic": {"0": 123}}`, with -2 for earliest and -1 for
latest where a user writes them, and always as concrete offsets in the checkpoint.
"""
from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Mapping, Union

from pylog.common.types import TP

__all__ = ["OptionError", "SourceOptions", "SinkOptions", "TimestampSpec", "parse_source_options",
           "parse_sink_options", "parse_offsets_json", "offsets_json", "source_schema", "duration_ms", "EARLIEST",
           "LATEST"]

log = logging.getLogger(__name__)

EARLIEST, LATEST = -2, -1


@dataclass(frozen=True)
class TimestampSpec:
    """Offsets found by record time (Kafka's offsetsForTimes): one timestamp everywhere, or one per partition."""

    everywhere: int | None = None
    per_partition: Mapping[TP, int] | None = None


OffsetSpec = Union[str, dict, TimestampSpec]  # "earliest" / "latest" / {TP: offset or -1 / -2} / by time

BASE_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
               "timestampType int")
HEADERS_FIELD = "headers array<struct<key: string, value: binary>>"
# Spark's Kafka source refuses these because the source manages them itself (no group, no auto reset).
_FORBIDDEN_SOURCE = {"auto.offset.reset", "enable.auto.commit", "key.deserializer", "value.deserializer",
                     "interceptor.classes"}
# Spark's reason for each, in its words (KafkaSourceProvider); any other forbidden key gets the generic one.
_FORBIDDEN_WHY = {"auto.offset.reset": "Instead set the source option 'startingOffsets' to 'earliest' or 'latest' "
                                       "to specify where to start",
                  "key.deserializer": "keys are always read as byte arrays",
                  "value.deserializer": "values are always read as byte arrays"}
_TIMESTAMP_STRATEGIES = ("error", "latest")
# The per-trigger options: Spark accepts them on a batch read and warns that they are ignored there.
_TRIGGER_OPTIONS = ("maxoffsetspertrigger", "minoffsetspertrigger", "maxtriggerdelay", "maxbytespertrigger",
                    "commitoffsetstogroup")
_FORBIDDEN_SINK = {"key.serializer", "value.serializer", "interceptor.classes", "transactional.id"}


_SPELLING = {k.lower(): k for k in ("startingOffsets", "endingOffsets", "maxOffsetsPerTrigger", "minPartitions",
                                     "includeHeaders", "failOnDataLoss", "kafkaConsumer.pollTimeoutMs",
                                     "fetchOffset.numRetries", "fetchOffset.retryIntervalMs", "commitTopic",
                                     "startingTimestamp", "endingTimestamp", "startingOffsetsByTimestamp",
                                     "endingOffsetsByTimestamp", "startingOffsetsByTimestampStrategy",
                                     "minOffsetsPerTrigger", "maxTriggerDelay", "maxBytesPerTrigger",
                                     "groupIdPrefix", "commitOffsetsToGroup", "kafka.group.id")}
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
    timestamp_strategy: str = "error"
    min_offsets_per_trigger: int | None = None
    max_trigger_delay_ms: int = 15 * 60 * 1000
    max_bytes_per_trigger: int | None = None
    # Spark's consumers read with assign(): a group id names them but never stores anything. Kept for parity.
    group_id: str | None = None
    group_id_prefix: str = "spark-kafka-source"
    commit_offsets_to_group: str | None = None

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
            why = _FORBIDDEN_WHY.get(name, "the pylog data source manages it itself")
            raise OptionError(f'option "{_name(key)}" is not supported: {why}')
        if name == "group.id":  # Spark allows it (with a warning); consumers get it below, not as a setting
            continue
        if name == "sasl.jaas.config":  # Spark's way to pass a login, a delegation token's too
            config.update(_jaas(value))
            continue
        arg = name.replace(".", "_")
        if arg not in known:
            raise OptionError(f'option "{_name(key)}" is not a Kafka client setting pylog can pass on')
        default = known[arg]
        config[arg] = int(value) if isinstance(default, int) and not isinstance(default, bool) else value
    return config


def _jaas(text: str) -> dict:
    from pylog.common.configdef import ConfigError
    from pylog.spark.token_auth import jaas_client_config
    try:
        return jaas_client_config(text)
    except (ConfigError, ValueError) as exc:
        raise OptionError(str(exc)) from None


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


def parse_offsets_json(text: str, key: str, minimum: int = EARLIEST, what: str = "offset") -> dict[TP, int]:
    """Spark's per-partition JSON ({"topic": {"0": 23, "1": -1}}) -> {(topic, 0): 23, ...}, each >= minimum."""
    result = {}
    for topic, parts in _json(text, key).items():
        if not isinstance(parts, dict):
            raise OptionError(f'option "{_name(key)}": topic {topic!r} must map partitions to {what}s, got {parts!r}')
        for part, value in parts.items():
            if not str(part).isdigit() or isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise OptionError(f'option "{_name(key)}": bad partition/{what} {part!r}: {value!r} '
                                  f'for topic {topic!r}')
            result[(topic, int(part))] = value
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


def _by_time(opts: dict[str, str], prefix: str) -> TimestampSpec | None:
    """`<prefix>Timestamp` (wins) or `<prefix>OffsetsByTimestamp`, as Spark ranks them; None when neither."""
    if f"{prefix}timestamp" in opts:
        return TimestampSpec(everywhere=_int(opts, f"{prefix}timestamp", 0))
    if f"{prefix}offsetsbytimestamp" in opts:
        key = f"{prefix}offsetsbytimestamp"
        return TimestampSpec(per_partition=parse_offsets_json(opts[key], key, minimum=0, what="timestamp"))
    return None


def _starting(opts: dict[str, str], streaming: bool) -> OffsetSpec:
    """startingTimestamp > startingOffsetsByTimestamp > startingOffsets; a batch read cannot start at latest."""
    by_time = _by_time(opts, "starting")
    if by_time is not None:
        return by_time
    spec = _spec(opts, "startingoffsets", "latest" if streaming else "earliest", ("earliest", "latest"))
    if not streaming and (spec == "latest" or (isinstance(spec, dict) and LATEST in spec.values())):
        raise OptionError('option "startingOffsets": starting offset can\'t be latest for batch queries on Kafka')
    return spec


def _ending(opts: dict[str, str], streaming: bool) -> OffsetSpec:
    """endingTimestamp > endingOffsetsByTimestamp > endingOffsets; batch reads only, never earliest."""
    given = [k for k in ("endingtimestamp", "endingoffsetsbytimestamp", "endingoffsets") if k in opts]
    if streaming and given:
        what = "offset" if given[0] == "endingoffsets" else "timestamp"
        raise OptionError(f'option "{_name(given[0])}": ending {what} not valid in streaming queries')
    by_time = _by_time(opts, "ending")
    if by_time is not None:
        return by_time
    spec = _spec(opts, "endingoffsets", "latest", ("latest", "earliest"))
    if spec == "earliest" or (isinstance(spec, dict) and EARLIEST in spec.values()):
        raise OptionError('option "endingOffsets": ending offset can\'t be earliest for batch queries on Kafka')
    return spec


def duration_ms(text: str, key: str) -> int:
    """Spark's time strings (`15m`, `500ms`, `2h`; a bare number is milliseconds) -> milliseconds."""
    units = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}
    match = re.fullmatch(r"\s*(\d+)\s*([a-z]*)\s*", text.lower())
    if not match or (match.group(2) and match.group(2) not in units):
        raise OptionError(f'option "{_name(key)}" must be a duration such as 15m, 30s or 500ms, got {text!r}')
    return int(int(match.group(1)) * units[match.group(2) or "ms"])


def _trigger_limits(opts: dict[str, str], streaming: bool) -> dict:
    """maxOffsetsPerTrigger, minOffsetsPerTrigger + maxTriggerDelay, maxBytesPerTrigger, commitOffsetsToGroup."""
    if not streaming:
        for key in _TRIGGER_OPTIONS:
            if key in opts:
                log.warning('pylog data source: option "%s" is ignored in batch queries', _name(key))
        return {}
    limits = {"max_offsets_per_trigger": _int(opts, "maxoffsetspertrigger", 1),
              "min_offsets_per_trigger": _int(opts, "minoffsetspertrigger", 1),
              "max_bytes_per_trigger": _int(opts, "maxbytespertrigger", 1)}
    low, high = limits["min_offsets_per_trigger"], limits["max_offsets_per_trigger"]
    if low is not None and high is not None and low > high:
        raise OptionError(f"The value of minOffsetPerTrigger({low}) is higher than the maxOffsetsPerTrigger({high})")
    if "maxtriggerdelay" in opts:
        limits["max_trigger_delay_ms"] = duration_ms(opts["maxtriggerdelay"], "maxtriggerdelay")
    group = opts.get("commitoffsetstogroup")
    if group is not None:
        if not group.strip():
            raise OptionError('option "commitOffsetsToGroup" names no group')
        limits["commit_offsets_to_group"] = group.strip()
    return limits


def _groups(opts: dict[str, str]) -> dict:
    """groupIdPrefix and kafka.group.id: accepted as Spark accepts them (the latter with Spark's warning)."""
    result = {}
    if "groupidprefix" in opts:
        if not opts["groupidprefix"].strip():
            raise OptionError('option "groupIdPrefix" must not be empty')
        result["group_id_prefix"] = opts["groupidprefix"].strip()
    if "kafka.group.id" in opts:
        if not opts["kafka.group.id"].strip():
            raise OptionError('option "kafka.group.id" must not be empty')
        result["group_id"] = opts["kafka.group.id"].strip()
        log.warning('pylog data source: option "kafka.group.id" is set: concurrent queries or sources with the same '
                    "group id may interfere with each other (Spark's warning; the pylog source reads with assign() "
                    "and commits nothing under it, so only commitOffsetsToGroup writes to a group)")
    return result


def parse_source_options(options: Mapping[str, str], streaming: bool) -> SourceOptions:
    """Validate a read's options; OptionError names the first bad one."""
    from kafka import KafkaConsumer
    opts = _lower(options)
    strategy = opts.get("startingoffsetsbytimestampstrategy", "error").strip().lower()
    if strategy not in _TIMESTAMP_STRATEGIES:
        raise OptionError(f'option "startingOffsetsByTimestampStrategy" must be error or latest, got {strategy!r}')
    return SourceOptions(
        bootstrap=_bootstrap(opts), **_subscription(opts), starting=_starting(opts, streaming),
        ending=_ending(opts, streaming), timestamp_strategy=strategy, **_trigger_limits(opts, streaming),
        min_partitions=_int(opts, "minpartitions", 1),
        include_headers=_bool(opts, "includeheaders", False), fail_on_data_loss=_bool(opts, "failondataloss", True),
        poll_timeout_ms=_int(opts, "kafkaconsumer.polltimeoutms", 1) or 120_000,
        fetch_retries=_default(_int(opts, "fetchoffset.numretries", 0), 3),
        retry_interval_ms=_default(_int(opts, "fetchoffset.retryintervalms", 0), 1000), **_groups(opts),
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
