"""pylog-log-dirs: kafka-log-dirs.sh (LogDirsCommand): each broker's log directories and the replicas in them.

Sends DescribeLogDirs (API 35) to every broker asked for and prints Kafka's two lines and its
version-1 JSON: brokers -> logDirs -> partitions with size, offsetLag and isFuture. Kafka builds
that JSON from java.util.HashMaps, so the keys come out in HashMap order; java_order reproduces it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import click

from pylog.cli import render
from pylog.cli.common import OperationError, command, open_admin, output_format
from pylog.cli.java_order import hashmap_order, ordered_object, string_hash, topic_partition_hash
from pylog.common.errors import ErrorCode
from pylog.protocol.api import ApiKey


@dataclass
class ReplicaDir:
    """One replica in a log dir (DescribeLogDirs' partition entry)."""

    topic: str
    partition: int
    size: int
    offset_lag: int
    is_future: bool


@dataclass
class LogDir:
    """A log directory of a broker; error is the Java exception class Kafka names, or None."""

    log_dir: str
    error: str | None
    replicas: list[ReplicaDir]


@dataclass
class LogDirsDescribed:
    """--describe: the brokers queried and their log dirs."""

    brokers: list[int]
    log_dirs: dict[int, list[LogDir]]


def _split(value: str) -> list[str]:
    return [x for x in value.split(",") if x]


def _int_order(ids: set[int], capacity: int = 16) -> list[int]:
    return hashmap_order(sorted(ids), lambda i: i, capacity)


def _broker_dirs(admin: Any, broker: int, topics: set[str]) -> list[LogDir]:
    resp = admin.client.call(ApiKey.DescribeLogDirs, lambda cls, v: cls(topics=None), node=broker)
    top_error = getattr(resp, "error_code", ErrorCode.NONE)
    if top_error != ErrorCode.NONE:
        raise OperationError(f"{ErrorCode(top_error).exception_name}: {ErrorCode(top_error).message}")
    dirs = []
    for d in resp.results:
        error = None if d.error_code == ErrorCode.NONE else ErrorCode(d.error_code).exception_name
        replicas = [ReplicaDir(t.name, p.partition_index, p.partition_size, p.offset_lag, bool(p.is_future_key))
                    for t in d.topics for p in t.partitions if not topics or t.name in topics]
        dirs.append(LogDir(d.log_dir, error, replicas))
    return dirs


def describe_log_dirs(bootstrap: str, broker_list: str, topic_list: str) -> LogDirsDescribed:
    """LogDirsCommand.execute: check --broker-list against the cluster, then ask each broker."""
    try:
        wanted = {int(b) for b in _split(broker_list)}
    except ValueError as exc:
        raise OperationError(f"For input string: {str(exc).rsplit(': ', 1)[-1]}") from None
    admin = open_admin(bootstrap)
    cluster = set(admin.metadata([]).brokers)
    missing = wanted - cluster
    if missing:
        raise OperationError("ERROR: The given brokers do not exist from --broker-list: "
                             f"{','.join(map(str, _int_order(missing)))}. Current existent brokers: "
                             f"{','.join(map(str, _int_order(cluster)))}")
    brokers = _int_order((wanted or cluster) & cluster)
    if output_format() == "text":  # Kafka prints it before asking; JSON output stays one document
        click.echo("Querying brokers for log directories information")
    return LogDirsDescribed(brokers, {b: _broker_dirs(admin, b, set(_split(topic_list))) for b in brokers})


def kafka_json(result: LogDirsDescribed) -> str:
    """The version-1 JSON document, keys in Kafka's (HashMap) order, compact like Jackson."""
    def replicas(rs: list[ReplicaDir]) -> list[Any]:
        by_tp = {(r.topic, r.partition): r for r in rs}
        order = hashmap_order(by_tp, lambda tp: topic_partition_hash(*tp))
        return [ordered_object({"partition": f"{t}-{p}", "size": by_tp[(t, p)].size,
                                "offsetLag": by_tp[(t, p)].offset_lag, "isFuture": by_tp[(t, p)].is_future})
                for t, p in order]

    def dirs(ds: list[LogDir]) -> list[Any]:
        by_path = {d.log_dir: d for d in ds}
        return [ordered_object({"logDir": path, "error": by_path[path].error,
                                "partitions": replicas(by_path[path].replicas)})
                for path in hashmap_order(by_path, string_hash)]

    brokers = [ordered_object({"broker": b, "logDirs": dirs(result.log_dirs[b])})
               for b in hashmap_order(result.log_dirs, lambda i: i, max(1, len(result.log_dirs)))]
    return json.dumps(ordered_object({"version": 1, "brokers": brokers}), separators=(",", ":"))


@render.text.register
def _text(result: LogDirsDescribed) -> list[str]:
    return [f"Received log directory information from brokers {','.join(map(str, result.brokers))}",
            kafka_json(result)]


@command("pylog-log-dirs", error_prefix="", help=(
    "This tool helps to query log directory usage on the specified brokers (kafka-log-dirs.sh)."))
@click.option("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: the server(s) to use for bootstrapping")
@click.option("--command-config", type=click.Path(dir_okay=False),
              help="Property file containing configs to be passed to Admin Client.")
@click.option("--describe", is_flag=True, help="Describe the specified log directories on the specified brokers.")
@click.option("--topic-list", default="", metavar="TOPICS",
              help='The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be '
                   "queried if no topic list is specified")
@click.option("--broker-list", default="", metavar="BROKERS",
              help='The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be '
                   "queried if no broker list is specified")
def log_dirs_command(bootstrap_server: str | None, describe: bool, topic_list: str, broker_list: str,
                     **_: Any) -> LogDirsDescribed:
    """The pylog-log-dirs command."""
    if not bootstrap_server:
        raise click.UsageError('Missing required argument "[bootstrap-server]"')
    if not describe:
        raise click.UsageError('Missing required argument "[describe]"')
    return describe_log_dirs(bootstrap_server, broker_list, topic_list)


def main() -> None:
    """Console entry point (bin/pylog-log-dirs.sh, `pylog-log-dirs`)."""
    log_dirs_command.main(prog_name="pylog-log-dirs")


if __name__ == "__main__":
    main()
