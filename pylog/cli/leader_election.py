"""pylog-leader-election: kafka-leader-election.sh (preferred or unclean leader elections).

Through --bootstrap-server it sends ElectLeaders (API 43) to the controller. Through --zookeeper
(preferred elections only) it writes /admin/preferred_replica_election for the partitions whose
leader is not their preferred replica, waits (up to --timeout) until the controller has processed
and deleted it, then reads the partition states to report what was elected.
Exit 1 if any partition could not be elected; with --all-topic-partitions nothing is printed when
nothing needed electing, so it is safe to run from cron.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterable

import click

from pylog.cli.admin_client import PREFERRED, UNCLEAN, ApiError
from pylog.cli.common import (DEFAULT_TIMEOUT_MS, OperationError, OptionRules, command, open_admin, open_zk,
                              progress, target_options)
from pylog.cli.results import ElectionFailure, ElectionResult
from pylog.protocol.errors import ErrorCode
from pylog.zk import admin as zk_admin
from pylog.zk import paths
from pylog.zk.client import ZkClient
from pylog.zk.codecs import TopicPartition

ELECTION_TYPES = {"PREFERRED": PREFERRED, "UNCLEAN": UNCLEAN}
_POLL_S = 0.1


def parse_election_file(path: str) -> list[TopicPartition]:
    """{"partitions":[{"topic":"foo","partition":1},...]} (LeaderElectionCommand.parseReplicaElectionData)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        data = json.loads(text)
    except ValueError as exc:
        # Kafka's text first (its JSON parser reports unparsable input as empty data), then why
        raise OperationError(f"Replica election data is empty: {path} is not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise OperationError("Replica election data is empty")
    if "partitions" not in data:
        raise OperationError('Replica election data is missing "partitions" field')
    partitions = []
    for item in data["partitions"] if isinstance(data["partitions"], list) else [None]:
        if not (isinstance(item, dict) and isinstance(item.get("topic"), str) and isinstance(item.get("partition"), int)
                and not isinstance(item.get("partition"), bool)):
            raise OperationError(f'Each entry of "partitions" needs a string "topic" and an integer "partition", '
                                 f"got {json.dumps(item)}")
        partitions.append(TopicPartition(item["topic"], item["partition"]))
    duplicates = sorted({tp for tp in partitions if partitions.count(tp) > 1})
    if duplicates:
        raise OperationError("Replica election data contains duplicate partitions: "
                             f"{','.join(map(str, duplicates))}")
    return partitions


def check_args(rules: OptionRules) -> None:
    """LeaderElectionCommand.validate, with --zookeeper as an alternative to --bootstrap-server."""
    missing: list[str] = []
    if not rules.has("bootstrap-server") and not rules.has("zookeeper"):
        missing.insert(0, "bootstrap-server")
    if not rules.has("election-type"):
        missing.insert(0, "election-type")
    if missing:
        raise click.UsageError(f"Missing required option(s): {', '.join(missing)}")
    if rules.has("bootstrap-server") and rules.has("zookeeper"):
        raise click.UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
    if rules.count(("topic", "all-topic-partitions", "path-to-json-file")) != 1:
        raise click.UsageError("One and only one of the following options is required: topic, all-topic-partitions, "
                               "path-to-json-file")
    if rules.has("topic") and not rules.has("partition"):
        raise click.UsageError("Missing required option(s): partition")
    if rules.has("partition") and not rules.has("topic"):
        raise click.UsageError("Option partition is only allowed if topic is used")


def _sorted(tps: Iterable[tuple[str, int]]) -> list[str]:
    return [str(TopicPartition(*tp)) for tp in sorted(tps)]


def _result(election_type: str, outcome: dict[Any, ApiError | None], all_partitions: bool, via: str
            ) -> ElectionResult:
    """Split per-partition outcomes the way LeaderElectionCommand.electLeaders prints them."""
    succeeded = [tp for tp, err in outcome.items() if err is None]
    not_needed = [tp for tp, err in outcome.items() if err is not None and err.code == ErrorCode.ELECTION_NOT_NEEDED]
    failed = {tp: err for tp, err in outcome.items() if err is not None and err.code != ErrorCode.ELECTION_NOT_NEEDED}
    if all_partitions:
        not_needed = []  # the broker drops these for an all-partitions request; so do we, whatever it sent
    result = ElectionResult(election_type, _sorted(succeeded), _sorted(not_needed),
                            [ElectionFailure(str(TopicPartition(*tp)), err.code.exception_name, err.message)
                             for tp, err in sorted(failed.items())], via)
    if failed:
        result.failure = f"{len(failed)} replica(s) could not be elected"
    return result


def elect_through_zookeeper(zk: ZkClient, requested: list[TopicPartition] | None, timeout_ms: int
                            ) -> dict[TopicPartition, ApiError | None]:
    """Preferred election via /admin/preferred_replica_election; outcome per requested partition."""
    assignments = zk.get_topic_assignments(zk.get_all_topics() if requested is None
                                           else sorted({tp.topic for tp in requested}))
    if requested is None:
        requested = [TopicPartition(t, p) for t, a in sorted(assignments.items()) for p in sorted(a.partitions)]
    deleting = set(zk.get_topic_deletions())
    known = [tp for tp in requested if tp.topic in assignments and tp.partition in assignments[tp.topic].partitions]
    states = zk.get_partition_states(known)
    outcome: dict[TopicPartition, ApiError | None] = {}
    to_elect = []
    for tp in requested:
        if tp.topic in deleting:
            outcome[tp] = ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, "The topic is being deleted")
        elif tp not in states:
            outcome[tp] = ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        elif states[tp] is not None and states[tp].leader == assignments[tp.topic].replicas(tp.partition)[0]:
            outcome[tp] = ApiError(ErrorCode.ELECTION_NOT_NEEDED)
        else:
            to_elect.append(tp)
    if not to_elect:
        return outcome
    zk_admin.AdminZkClient(zk).write_preferred_replica_election(to_elect)
    deadline = time.monotonic() + timeout_ms / 1000
    with progress(f"Waiting for the controller to elect {len(to_elect)} preferred leader(s)") as update:
        while zk.exists(paths.preferred_replica_election()) is not None:
            if time.monotonic() >= deadline:
                raise OperationError("Timeout waiting for election results")
            update(0)
            time.sleep(_POLL_S)
    after = zk.get_partition_states(to_elect)
    for tp in to_elect:
        st, preferred = after.get(tp), assignments[tp.topic].replicas(tp.partition)[0]
        outcome[tp] = None if st is not None and st.leader == preferred else ApiError(
            ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
            f"Failed to elect leader for partition {tp} under strategy PreferredReplicaPartitionLeaderElectionStrategy")
    return outcome


@command("pylog-leader-election", help=(
    "Elect the preferred (or, when no in-sync replica is alive, any live) replica as leader of partitions "
    "(kafka-leader-election.sh).\n\n"
    "--bootstrap-server sends ElectLeaders to the controller; --zookeeper (preferred elections only) writes "
    "/admin/preferred_replica_election and waits for the controller to process it."))
@target_options
@click.option("--election-type", type=click.Choice(["preferred", "unclean"], case_sensitive=False),
              help="Type of election: preferred or unclean (either case).")
@click.option("--all-topic-partitions", is_flag=True, help="Elect leaders of every partition that needs it.")
@click.option("--topic", help="The topic of the partition (with --partition).")
@click.option("--partition", type=int, help="The partition (with --topic).")
@click.option("--path-to-json-file", type=click.Path(dir_okay=False),
              help='A file {"partitions":[{"topic":"foo","partition":1},...]} naming the partitions.')
@click.option("--timeout", type=click.IntRange(min=1), default=DEFAULT_TIMEOUT_MS, show_default=True,
              help="Milliseconds to wait for the election results.")
def leader_election_command(zookeeper: str | None, bootstrap_server: str | None, **opts: Any) -> Any:
    """The pylog-leader-election command."""
    check_args(OptionRules(click.get_current_context()))
    election_type = opts["election_type"].upper()
    if zookeeper and election_type != "PREFERRED":
        raise click.UsageError("Unclean elections need --bootstrap-server (ZooKeeper only carries preferred "
                               "election requests)")
    requested: list[TopicPartition] | None = None
    if opts["topic"] is not None:
        requested = [TopicPartition(opts["topic"], opts["partition"])]
    elif opts["path_to_json_file"]:
        requested = parse_election_file(opts["path_to_json_file"])
    if zookeeper:
        outcome = elect_through_zookeeper(open_zk(zookeeper), requested, opts["timeout"])
        return _result(election_type, outcome, requested is None, "zookeeper")
    admin = open_admin(bootstrap_server or "", opts["timeout"])
    try:
        outcome = admin.elect_leaders(ELECTION_TYPES[election_type], requested)
    except ApiError as exc:
        if exc.code == ErrorCode.REQUEST_TIMED_OUT:
            raise OperationError("Timeout waiting for election results") from exc
        if exc.code == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            raise OperationError("Not authorized to perform leader election") from exc
        raise
    return _result(election_type, outcome, requested is None, "bootstrap-server")


def main() -> None:
    """Console entry point (bin/pylog-leader-election.sh, `pylog-leader-election`)."""
    leader_election_command.main(prog_name="pylog-leader-election")


if __name__ == "__main__":
    main()
