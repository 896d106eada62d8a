"""Options of the `pylog` Spark format and its offset arithmetic: Spark's Kafka rules, checked by hand."""
from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from pylog.spark.options import (OptionError, TimestampSpec, duration_ms, offsets_json,  # noqa: E402
                                 parse_offsets_json, parse_sink_options, parse_source_options, source_schema)
from pylog.spark.ranges import OffsetRange, byte_limit, delay_batch, rate_limit, split_ranges  # noqa: E402

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}


def test_source_options_defaults_and_spellings():
    stream = parse_source_options({**BOOT, "subscribe": "a, b"}, streaming=True)
    assert (stream.subscribe, stream.starting, stream.fail_on_data_loss, stream.include_headers) == \
        (("a", "b"), "latest", True, False)
    batch = parse_source_options({"bootstrap.servers": "h:1", "topic": "a"}, streaming=False)
    assert (batch.bootstrap, batch.subscribe, batch.starting, batch.ending) == ("h:1", ("a",), "earliest", "latest")
    # Spark lower-cases option keys; both spellings must mean the same.
    opts = parse_source_options({"kafka.bootstrap.servers": "h:1", "assign": '{"t": [1, 0]}',
                                 "STARTINGOFFSETS": '{"t": {"0": -2, "1": 7}}', "maxOffsetsPerTrigger": "5",
                                 "minPartitions": "4", "includeHeaders": "TRUE", "failOnDataLoss": "false",
                                 "kafka.fetch.max.bytes": "1000"}, streaming=True)
    assert opts.assign == (("t", 0), ("t", 1))
    assert opts.starting == {("t", 0): -2, ("t", 1): 7}
    assert (opts.max_offsets_per_trigger, opts.min_partitions, opts.include_headers, opts.fail_on_data_loss) == \
        (5, 4, True, False)
    assert opts.client == {"fetch_max_bytes": 1000, "isolation_level": "read_committed"}
    assert parse_source_options({**BOOT, "subscribePattern": "t.*"}, streaming=True).pattern == "t.*"


def test_isolation_level_is_read_committed_unless_asked():
    for streaming in (True, False):
        assert parse_source_options({**BOOT, "subscribe": "t"}, streaming).client["isolation_level"] == \
            "read_committed"
    for key in ("isolation.level", "kafka.isolation.level"):
        opts = parse_source_options({**BOOT, "subscribe": "t", key: "READ_UNCOMMITTED"}, streaming=True)
        assert opts.client["isolation_level"] == "read_uncommitted"


@pytest.mark.parametrize("options, streaming, message", [
    ({**BOOT, "subscribe": "t", "isolation.level": "dirty"}, True, '"isolation.level" must be read_committed'),
    ({**BOOT, "subscribe": "t", "isolation.level": "read_committed", "kafka.isolation.level": "read_uncommitted"},
     False, "disagree"),
    ({"subscribe": "t"}, True, '"kafka.bootstrap.servers" is required'),
    ({**BOOT}, True, 'exactly one of "subscribe"'),
    ({**BOOT, "subscribe": "t", "assign": '{"t": [0]}'}, True, "exactly one of"),
    ({**BOOT, "subscribe": "t", "startingOffsets": '{"t": {"0": 1}'}, True, '"startingOffsets" is not valid JSON'),
    ({**BOOT, "subscribe": "t", "startingOffsets": '{"t": {"x": 1}}'}, True, "bad partition/offset"),
    ({**BOOT, "subscribe": "t", "startingOffsets": "newest"}, True, "must be earliest or latest"),
    ({**BOOT, "assign": '{"t": 0}'}, True, "list of partitions"),
    ({**BOOT, "subscribePattern": "("}, True, "not a valid pattern"),
    ({**BOOT, "subscribe": "t", "maxOffsetsPerTrigger": "0"}, True, "at least 1"),
    ({**BOOT, "subscribe": "t", "endingOffsets": "latest"}, True, "ending offset not valid in streaming queries"),
    ({**BOOT, "subscribe": "t", "endingTimestamp": "5"}, True, "ending timestamp not valid in streaming queries"),
    ({**BOOT, "subscribe": "t", "endingOffsets": '{"t": {"0": -2}}'}, False, "can't be earliest for batch"),
    ({**BOOT, "subscribe": "t", "endingOffsets": "earliest"}, False, "can't be earliest for batch"),
    ({**BOOT, "subscribe": "t", "startingOffsets": "latest"}, False, "can't be latest for batch"),
    ({**BOOT, "subscribe": "t", "startingOffsets": '{"t": {"0": -1}}'}, False, "can't be latest for batch"),
    ({**BOOT, "subscribe": "t", "kafka.auto.offset.reset": "earliest"}, True, "set the source option 'startingOffsets'"),
    ({**BOOT, "subscribe": "t", "kafka.enable.auto.commit": "true"}, True, "manages it itself"),
    ({**BOOT, "subscribe": "t", "kafka.group.id": " "}, True, "must not be empty"),
    ({**BOOT, "subscribe": "t", "groupIdPrefix": ""}, True, "must not be empty"),
    ({**BOOT, "subscribe": "t", "startingTimestamp": "soon"}, True, '"startingTimestamp" must be an integer'),
    ({**BOOT, "subscribe": "t", "startingOffsetsByTimestamp": '{"t": {"0": -5}}'}, True, "bad partition/timestamp"),
    ({**BOOT, "subscribe": "t", "startingOffsetsByTimestampStrategy": "earliest"}, True, "must be error or latest"),
    ({**BOOT, "subscribe": "t", "minOffsetsPerTrigger": "50", "maxOffsetsPerTrigger": "10"}, True,
     "minOffsetPerTrigger.50. is higher than the maxOffsetsPerTrigger.10."),
    ({**BOOT, "subscribe": "t", "maxTriggerDelay": "soon"}, True, '"maxTriggerDelay" must be a duration'),
    ({**BOOT, "subscribe": "t", "maxBytesPerTrigger": "0"}, True, "at least 1"),
    ({**BOOT, "subscribe": "t", "commitOffsetsToGroup": ""}, True, "names no group"),
    ({**BOOT, "subscribe": "t", "kafka.no.such.thing": "1"}, True, "not a Kafka client setting"),
    ({**BOOT, "subscribe": "t", "failOnDataLoss": "maybe"}, True, "true or false"),
])
def test_bad_source_options_get_one_clear_error(options, streaming, message):
    with pytest.raises(OptionError, match="^pylog data source: .*" + message.replace("(", r"\(")):
        parse_source_options(options, streaming=streaming)


def test_sink_options():
    assert parse_sink_options({**BOOT, "topic": "out"}).topic == "out"
    assert parse_sink_options({**BOOT, "kafka.linger.ms": "5"}).client == {"linger_ms": 5}
    default = parse_sink_options({**BOOT})
    assert (default.exactly_once, default.commit_topic) == (True, "_pylog_spark_commits")
    fast = parse_sink_options({**BOOT, "semantics": "AT-LEAST-ONCE", "commitTopic": "marks"})
    assert (fast.exactly_once, fast.commit_topic) == (False, "marks")
    with pytest.raises(OptionError, match='"semantics" must be "exactly-once" or "at-least-once"'):
        parse_sink_options({**BOOT, "semantics": "at-most-once"})
    with pytest.raises(OptionError, match='"kafka.transactional.id" is not supported'):
        parse_sink_options({**BOOT, "kafka.transactional.id": "mine"})
    with pytest.raises(OptionError, match="required"):
        parse_sink_options({"topic": "out"})


def test_offsets_json_round_trip_is_sorted_numerically():
    parsed = parse_offsets_json('{"b": {"10": 5, "9": 1}, "a": {"0": -1}}', "x")
    assert parsed == {("b", 10): 5, ("b", 9): 1, ("a", 0): -1}
    out = offsets_json(parsed)
    assert list(out) == ["a", "b"] and list(out["b"]) == ["9", "10"]


def test_schema_is_spark_kafka_source_schema():
    assert source_schema(False).endswith("timestampType int")
    assert source_schema(True).endswith("headers array<struct<key: string, value: binary>>")


def test_rate_limit_shares_by_backlog_and_never_starves():
    start = {("t", 0): 0, ("t", 1): 0, ("t", 2): 100}
    latest = {("t", 0): 900, ("t", 1): 100, ("t", 2): 100, ("t", 3): 4}
    assert rate_limit(start, latest, 100) == {("t", 0): 90, ("t", 1): 10, ("t", 2): 100, ("t", 3): 4}
    assert rate_limit(start, latest, 5000) == latest
    # 1000 of backlog on one partition and 1 on another: the small one still gets its offset.
    assert rate_limit({("a", 0): 0, ("a", 1): 0}, {("a", 0): 1000, ("a", 1): 1}, 10) == {("a", 0): 9, ("a", 1): 1}


def test_split_ranges_for_min_partitions():
    ranges = [OffsetRange("t", 0, 0, 300), OffsetRange("t", 1, 10, 110), OffsetRange("t", 2, 5, 5)]
    assert [(r.partition, r.start, r.end) for r in split_ranges(ranges, None)] == [(0, 0, 300), (1, 10, 110)]
    split = split_ranges(ranges, 4)
    assert [(r.partition, r.start, r.end) for r in split] == [(0, 0, 100), (0, 100, 200), (0, 200, 300), (1, 10, 110)]
    assert sum(r.size for r in split_ranges(ranges, 7)) == 400


def test_timestamp_options_rank_as_spark_ranks_them():
    both = parse_source_options({**BOOT, "subscribe": "t", "startingTimestamp": "1000", "startingOffsets": "earliest",
                                 "startingOffsetsByTimestamp": '{"t": {"0": 5}}'}, streaming=True)
    assert both.starting == TimestampSpec(everywhere=1000) and both.timestamp_strategy == "error"
    per = parse_source_options({**BOOT, "subscribe": "t", "startingOffsetsByTimestamp": '{"t": {"0": 5, "1": 7}}',
                                "startingOffsetsByTimestampStrategy": "LATEST"}, streaming=False)
    assert per.starting == TimestampSpec(per_partition={("t", 0): 5, ("t", 1): 7})
    assert per.timestamp_strategy == "latest"
    ending = parse_source_options({**BOOT, "subscribe": "t", "endingTimestamp": "9", "endingOffsets": "latest"},
                                  streaming=False)
    assert ending.ending == TimestampSpec(everywhere=9)


def test_trigger_options_are_streaming_ones_and_only_warned_about_in_batch(caplog):
    stream = parse_source_options({**BOOT, "subscribe": "t", "minOffsetsPerTrigger": "5", "maxTriggerDelay": "2s",
                                   "maxBytesPerTrigger": "1000", "commitOffsetsToGroup": "lag-view",
                                   "groupIdPrefix": "mine", "kafka.group.id": "g"}, streaming=True)
    assert (stream.min_offsets_per_trigger, stream.max_trigger_delay_ms, stream.max_bytes_per_trigger) == \
        (5, 2000, 1000)
    assert (stream.commit_offsets_to_group, stream.group_id_prefix, stream.group_id) == ("lag-view", "mine", "g")
    assert "group_id" not in stream.client  # consumers read with assign(); the id never reaches them as a setting
    assert parse_source_options({**BOOT, "subscribe": "t"}, streaming=True).max_trigger_delay_ms == 15 * 60 * 1000
    batch = parse_source_options({**BOOT, "subscribe": "t", "maxOffsetsPerTrigger": "10"}, streaming=False)
    assert batch.max_offsets_per_trigger is None
    assert 'option "maxOffsetsPerTrigger" is ignored in batch queries' in caplog.text


@pytest.mark.parametrize("text, ms", [("15m", 900_000), ("500", 500), ("500ms", 500), ("2s", 2000), ("1h", 3_600_000),
                                      ("3min", 180_000), ("1d", 86_400_000)])
def test_durations_as_spark_reads_them(text, ms):
    assert duration_ms(text, "maxtriggerdelay") == ms


def test_byte_budget_shares_by_backlog_bytes():
    start = {("t", 0): 0, ("t", 1): 0}
    latest = {("t", 0): 1000, ("t", 1): 1000}
    # 10 bytes per offset on 0, 100 on 1: 10,000 bytes of backlog each; a 10,000-byte budget reads half of each.
    assert byte_limit(start, {("t", 0): 1000, ("t", 1): 100}, 10_000, {("t", 0): 10.0, ("t", 1): 100.0}) == \
        {("t", 0): 500, ("t", 1): 50}
    assert byte_limit(start, latest, 10**9, {("t", 0): 10.0, ("t", 1): 100.0}) == latest
    # A budget smaller than one record still moves every partition with a backlog by one offset.
    assert byte_limit(start, latest, 1, {("t", 0): 10.0, ("t", 1): 100.0}) == {("t", 0): 1, ("t", 1): 1}


@pytest.mark.parametrize("available, since_last, delayed", [(4, 1000, True), (5, 1000, False), (0, 2000, False),
                                                             (0, 1999, True)])
def test_min_offsets_wait_at_most_max_trigger_delay(available, since_last, delayed):
    assert delay_batch(available, 5, since_last, 2000) is delayed
    assert delay_batch(available, None, since_last, 2000) is False
