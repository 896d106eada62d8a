"""pylog-get-offsets: kafka-get-offsets.sh (GetOffsetShell): each partition's offset at a time.

Lists the topics (internal ones unless --exclude-internal-topics), keeps the partitions the filters
allow, sends ListOffsets (API 2) to each leader and prints `topic:partition:offset` lines sorted
by "topic-partition" as a string, as Kafka's TreeMap does. Partitions without an offset at that
time (-1) are left out; failing partitions are reported on stderr and skipped, like Kafka.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

import click

from pylog.cli import render
from pylog.cli.common import OperationError, command, open_admin
from pylog.common.errors import ErrorCode
from pylog.protocol.api import ApiKey

_PATTERN = re.compile(r"([^:,]*)(?::(?:([0-9]*)|(?:([0-9]*)-([0-9]*))))?")
_NAMED = {"earliest": -2, "latest": -1, "max-timestamp": -3, "earliest-local": -4, "latest-tiered": -5}
_INT_MAX = 2**31 - 1
TIME_HELP = ("timestamp of the offsets before that. [Note: No offset is returned, if the timestamp greater than "
             "recently committed record timestamp is given.] <timestamp> / -1 or latest / -2 or earliest / -3 or "
             "max-timestamp / -4 or earliest-local / -5 or latest-tiered")
Rule = Callable[[str, int | None], bool]  # partition None: "may this topic match at all?"


@dataclass
class PartitionOffsets:
    """(topic, partition, offset) in Kafka's output order."""

    offsets: list[tuple[str, int, int]]


@render.text.register
def _text(result: PartitionOffsets) -> list[str]:
    return [f"{t}:{p}:{o}" for t, p, o in result.offsets]


def parse_time(value: str) -> int:
    """GetOffsetShell.parseOffsetSpec, as the ListOffsets timestamp it sends."""
    if value in _NAMED:
        return _NAMED[value]
    try:
        return int(value)
    except ValueError:
        raise OperationError(f"Malformed time argument {value}. Please use -1 or latest / -2 or earliest / -3 or "
                             "max-timestamp / -4 or earliest-local / -5 or latest-tiered, or a specified long "
                             "format timestamp") from None


def _topic_regex(pattern: str) -> re.Pattern[str]:
    # IncludeList: commas separate alternatives; the whole name must match.
    return re.compile(pattern.strip().replace(",", "|"))


def rule_from_spec(spec: str) -> Rule:
    """One --topic-partitions entry: TOPIC_REGEX[:N | :N-M | :N- | :-M]."""
    m = _PATTERN.fullmatch(spec)
    if not m:
        raise OperationError(f"Invalid rule specification: {spec}")
    topic = _topic_regex(m.group(1) or ".*")
    if m.group(2):
        low, high = int(m.group(2)), int(m.group(2)) + 1
    else:
        low, high = int(m.group(3) or 0), int(m.group(4) or _INT_MAX)
    return lambda t, p: bool(topic.fullmatch(t)) and (p is None or low <= p < high)


def rule_from_options(topic: str | None, partitions: str | None) -> Rule:
    """--topic (a regex) and --partitions (ids; none means all)."""
    regex = _topic_regex(topic or ".*")
    try:
        ids = {int(x) for x in partitions.split(",")} if partitions else set()
    except ValueError:
        raise OperationError("--partitions expects a comma separated list of numeric partition ids, but received: "
                             f"{partitions}") from None
    return lambda t, p: bool(regex.fullmatch(t)) and (p is None or not ids or p in ids)


def _list_offsets(admin: Any, leader: int, parts: list[tuple[str, int]], timestamp: int
                  ) -> dict[tuple[str, int], tuple[int, int]]:
    by_topic: dict[str, list[int]] = {}
    for t, p in parts:
        by_topic.setdefault(t, []).append(p)
    # max-timestamp needs v7; earliest-local/latest-tiered v8/v9 (the broker answers what it supports).
    resp = admin.client.call(ApiKey.ListOffsets, lambda cls, v: cls(replica_id=-1, isolation_level=0, topics=[
        cls.ListOffsetsTopic(name=t, partitions=[cls.ListOffsetsTopic.ListOffsetsPartition(
            partition_index=p, timestamp=timestamp) for p in ps]) for t, ps in by_topic.items()]), node=leader)
    return {(t.name, p.partition_index): (p.error_code, p.offset) for t in resp.topics for p in t.partitions}


def fetch_offsets(bootstrap: str, rule: Rule, timestamp: int, exclude_internal: bool) -> PartitionOffsets:
    """GetOffsetShell.fetchOffsets."""
    admin = open_admin(bootstrap)
    meta = admin.metadata(None)
    chosen = [(t.name, p, meta_p.leader) for t in meta.topics.values()
              if not (exclude_internal and t.is_internal) and rule(t.name, None)
              for p, meta_p in sorted(t.partitions.items()) if rule(t.name, p)]
    if not chosen:
        raise OperationError("Could not match any topic-partitions with the specified filters")
    by_leader: dict[int | None, list[tuple[str, int]]] = {}
    for t, p, leader in chosen:
        by_leader.setdefault(leader, []).append((t, p))
    found: dict[tuple[str, int], int] = {}
    for leader, parts in by_leader.items():
        answers = ({tp: (int(ErrorCode.LEADER_NOT_AVAILABLE), -1) for tp in parts} if leader is None
                   else _list_offsets(admin, leader, parts, timestamp))
        for (t, p), (code, offset) in answers.items():
            if code != ErrorCode.NONE:
                err = ErrorCode(code)
                click.echo(f"Skip getting offsets for topic-partition {t}-{p} due to error: "
                           f"{err.exception_name}: {err.message}", err=True)
            elif offset != -1:
                found[(t, p)] = offset
    return PartitionOffsets([(t, p, o) for (t, p), o in sorted(found.items(), key=lambda i: f"{i[0][0]}-{i[0][1]}")])


@command("pylog-get-offsets", error_prefix="Error occurred: ",
         help="An interactive shell for getting topic-partition offsets (kafka-get-offsets.sh).")
@click.option("--bootstrap-server", metavar="HOST1:PORT1,...",
              help="REQUIRED. The server(s) to connect to in the form HOST1:PORT1,HOST2:PORT2.")
@click.option("--broker-list", metavar="HOST1:PORT1,...",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--topic-partitions", metavar="topic1:1,topic2:0-3,topic3,topic4:5-,topic5:-3",
              help="Comma separated list of topic-partition patterns to get the offsets for, with the format of "
                   "'TOPIC_REGEX:PARTITIONS'; partitions: a number, N-M (upper exclusive), N- or -M, or omitted.")
@click.option("--topic", metavar="topic", help="The topic to get the offsets for. It also accepts a regular "
              "expression. If not present, all authorized topics are queried. Cannot be used if "
              "--topic-partitions is present.")
@click.option("--partitions", metavar="partition ids", help="Comma separated list of partition ids to get the "
              "offsets for. If not present, all partitions of the authorized topics are queried.")
@click.option("--time", "time_", default="latest", show_default=True, metavar="TIME", help=TIME_HELP)
@click.option("--command-config", type=click.Path(dir_okay=False),
              help="Property file containing configs to be passed to Admin Client.")
@click.option("--exclude-internal-topics", is_flag=True,
              help="By default, internal topics are included. If specified, internal topics are excluded.")
def get_offsets_command(bootstrap_server: str | None, broker_list: str | None, topic_partitions: str | None,
                        topic: str | None, partitions: str | None, time_: str, exclude_internal_topics: bool,
                        **_: Any) -> PartitionOffsets:
    """The pylog-get-offsets command."""
    bootstrap = bootstrap_server or broker_list
    if not bootstrap:
        raise click.UsageError('Missing required argument "[bootstrap-server]"')
    if topic_partitions is not None and (topic is not None or partitions is not None):
        raise OperationError("--topic-partitions cannot be used with --topic or --partitions")
    timestamp = parse_time(time_)
    if topic_partitions is not None:
        rules = [rule_from_spec(spec) for spec in topic_partitions.split(",")]
        rule: Rule = lambda t, p: any(r(t, p) for r in rules)  # noqa: E731
    else:
        rule = rule_from_options(topic, partitions)
    return fetch_offsets(bootstrap, rule, timestamp, exclude_internal_topics)


def main() -> None:
    """Console entry point (bin/pylog-get-offsets.sh, `pylog-get-offsets`)."""
    get_offsets_command.main(prog_name="pylog-get-offsets")


if __name__ == "__main__":
    main()
