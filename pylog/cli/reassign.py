"""pylog-reassign-partitions: kafka-reassign-partitions.sh, with a minimal-movement --generate.

Kafka's actions, flags, option checks, texts and exit codes (3.3's through --bootstrap-server,
2.8's --zookeeper variants through ZooKeeper), plus: --generate's pylog planner (default), --planner
kafka, --spark, --cluster-snapshot and the planner's options; --export-snapshot; --list, --cancel
and --additional through ZooKeeper too; --execute --wait with a progress bar.
"""

from __future__ import annotations

from typing import Any

import click

from pylog.cli.common import OptionRules, command, open_admin, open_zk
from pylog.cli.reassign_cluster import BrokerCluster, ClusterView, ZkCluster
from pylog.planner.model import PlanOptions

ACTIONS = ("generate", "execute", "verify", "cancel", "list", "export-snapshot")
CONNECTION = ("bootstrap-server", "zookeeper")
PLANNER_OPTIONS = ("balance-by", "max-moves", "max-bytes", "leader-changes", "no-topic-balance")
# validateAndParseArgs' requiredArgs and permittedArgs, extended with pylog's options.
REQUIRED = {"generate": ("topics-to-move-json-file", "broker-list"), "execute": ("reassignment-json-file",),
            "verify": ("reassignment-json-file",), "cancel": ("reassignment-json-file",), "list": (),
            "export-snapshot": ()}
PERMITTED = {
    "generate": ("disable-rack-aware", "planner", "cluster-snapshot", "broker-racks", "spark", "spark-master",
                 "changed-only") + PLANNER_OPTIONS,
    "execute": ("additional", "throttle", "replica-alter-log-dirs-throttle", "timeout", "wait", "wait-timeout",
                "preserve-throttles"),
    "verify": ("preserve-throttles",),
    "cancel": ("preserve-throttles", "timeout"),
    "list": (),
    "export-snapshot": (),
}
ALWAYS = CONNECTION + ("output", "debug")


def check_args(rules: OptionRules, opts: dict[str, Any]) -> str:
    """validateAndParseArgs (and pylog's additions); returns the action."""
    actions = [a for a in ACTIONS if rules.has(a)]
    if len(actions) != 1:
        raise click.UsageError("Command must include exactly one action: " + ", ".join(f"--{a}" for a in ACTIONS))
    action = actions[0]
    offline = action == "generate" and rules.has("cluster-snapshot")
    if rules.has("bootstrap-server") and rules.has("zookeeper"):
        raise click.UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
    if offline and rules.count(CONNECTION):
        raise click.UsageError("--cluster-snapshot plans offline: give it instead of --bootstrap-server or "
                               "--zookeeper")
    if not offline and not rules.count(CONNECTION):
        raise click.UsageError("Please specify --bootstrap-server")
    rules.required(*REQUIRED[action])
    allowed = set(REQUIRED[action]) | set(PERMITTED[action]) | set(ALWAYS) | {action}
    for option in sorted(rules.given - allowed, key=_declared_order):
        raise click.UsageError(f'Option "[{option}]" can\'t be used with action "[{action}]"')
    _dependent(rules, "spark-master", "spark")
    _dependent(rules, "broker-racks", "cluster-snapshot")
    _dependent(rules, "wait-timeout", "wait")
    if action == "execute":
        _dependent(rules, "preserve-throttles", "wait")
    if opts.get("planner") == "kafka":
        for option in ("spark",) + PLANNER_OPTIONS:
            if rules.has(option):
                raise click.UsageError(f'Option "[{option}]" only applies to the pylog planner, not '
                                       f'"--planner kafka"')
    return action


def _dependent(rules: OptionRules, option: str, needs: str) -> None:
    if rules.has(option) and not rules.has(needs):
        raise click.UsageError(f'Option "[{option}]" can only be used with "[{needs}]"')


def _load_bootstrap(bootstrap_server: str | None, opts: dict[str, Any]) -> str | None:
    """The cluster the Spark job reads load from: a live --bootstrap-server one (the pylog data source speaks
    plaintext only here, so not with --command-config)."""
    if opts["spark"] and bootstrap_server and not opts.get("command_config") and not opts["cluster_snapshot"]:
        return bootstrap_server
    return None


def _declared_order(option: str) -> int:
    names = [p.name.replace("_", "-") for p in reassign_command.params if p.name]
    return names.index(option) if option in names else len(names)


def _cluster(zookeeper: str | None, bootstrap_server: str | None) -> ClusterView:
    if zookeeper:
        cluster = ZkCluster(open_zk(zookeeper))
        click.get_current_context().call_on_close(cluster.close)
        return cluster
    return BrokerCluster(open_admin(bootstrap_server or ""))


@command("pylog-reassign-partitions", help=(
    "This tool helps to move topic partitions between replicas (kafka-reassign-partitions.sh).\n\n"
    "--bootstrap-server uses AlterPartitionReassignments / ListPartitionReassignments and IncrementalAlterConfigs "
    "(Kafka 3.x texts); --zookeeper writes /admin/reassign_partitions and /config znodes (Kafka 2.8 texts). "
    "--generate proposes the fewest replica moves that balance the brokers (--planner kafka: Kafka's own)."))
@click.option("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT]", help="Work through a broker's admin APIs.")
@click.option("--command-config", type=click.Path(dir_okay=False), metavar="FILE",
              help="Client properties for --bootstrap-server (security.protocol, ssl.*, sasl.*).")
@click.option("--zookeeper", metavar="HOST:PORT[/chroot]",
              help="Work through ZooKeeper, writing the znodes the controller watches.")
@click.option("--generate", is_flag=True, help="Generate a candidate partition reassignment configuration.")
@click.option("--execute", is_flag=True, help="Kick off the reassignment in --reassignment-json-file.")
@click.option("--verify", is_flag=True, help="Verify the reassignment; clears the throttles once none is left.")
@click.option("--cancel", is_flag=True, help="Cancel an active reassignment (back to the original replicas).")
@click.option("--list", "list_", is_flag=True, help="List all active partition reassignments.")
@click.option("--export-snapshot", type=click.Path(dir_okay=False), metavar="FILE",
              help="Write the live cluster as a snapshot JSON file (for --cluster-snapshot).")
@click.option("--reassignment-json-file", type=click.Path(dir_okay=False),
              help='{"version":1,"partitions":[{"topic":"foo","partition":1,"replicas":[1,2,3],'
                   '"log_dirs":["any","/data/b","any"]}]} (log_dirs optional; "any" = no move)')
@click.option("--topics-to-move-json-file", type=click.Path(dir_okay=False),
              help='{"topics":[{"topic":"foo"},{"topic":"foo1"}],"version":1}')
@click.option("--broker-list", metavar="0,1,2", help="The brokers to reassign the topics' partitions to.")
@click.option("--disable-rack-aware", is_flag=True, help="Disable rack aware replica assignment.")
@click.option("--throttle", type=int, default=-1, show_default=True,
              help="Throttle replication of the moving replicas to this many bytes/s (at least 1 KB/s advised).")
@click.option("--replica-alter-log-dirs-throttle", type=int, default=-1, show_default=True,
              help="Throttle moves between the log dirs of a broker (log_dirs in the JSON) to this many bytes/s.")
@click.option("--timeout", type=int, default=10000, show_default=True,
              help="How long (ms) to keep trying to start log-dir moves (a replica must exist on its broker first).")
@click.option("--additional", is_flag=True, help="Execute in addition to ongoing reassignments (or change the "
                                                 "throttle by resubmitting the current one).")
@click.option("--preserve-throttles", is_flag=True, help="Do not modify broker or topic throttles.")
@click.option("--planner", type=click.Choice(["pylog", "kafka"]), default="pylog", show_default=True,
              help="pylog: fewest replica moves that balance the brokers; kafka: Kafka's own --generate.")
@click.option("--cluster-snapshot", type=click.Path(dir_okay=False), metavar="FILE",
              help="Plan from a snapshot file instead of a live cluster.")
@click.option("--broker-racks", metavar="3:r1,4:r2", help="Racks of --broker-list brokers absent from the snapshot.")
@click.option("--spark", is_flag=True, help="Make the plan with the Spark job (same plan, fanned out per topic).")
@click.option("--spark-master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--balance-by", type=click.Choice(["count", "bytes"]), default="count", show_default=True,
              help="Balance replica counts, or bytes on disk.")
@click.option("--max-moves", type=click.IntRange(min=0), help="At most this many replica moves.")
@click.option("--max-bytes", type=click.IntRange(min=0), help="At most this many bytes moved.")
@click.option("--leader-changes", type=click.IntRange(min=0),
              help="At most this many preferred-leader changes (the rest wait for a later plan).")
@click.option("--no-topic-balance", is_flag=True, help="Balance the brokers overall only, not each topic.")
@click.option("--changed-only", is_flag=True, help="Propose only the partitions whose replicas change (by default "
                                                   "every partition of the topics, as Kafka does).")
@click.option("--wait", is_flag=True, help="With --execute: follow the reassignment until it completes, then "
                                           "--verify it (a progress bar on a terminal).")
@click.option("--wait-timeout", type=click.FloatRange(min=0), metavar="SECONDS",
              help="With --wait: give up waiting after this long (the reassignment continues).")
def reassign_command(zookeeper: str | None, bootstrap_server: str | None, **opts: Any) -> Any:
    """The pylog-reassign-partitions command."""
    rules = OptionRules(click.get_current_context())
    action = check_args(rules, opts)
    from pylog.cli import reassign_generate as gen
    from pylog.cli import reassign_ops as ops
    if action == "generate":
        gen_opts = gen.GenerateOptions(
            opts["planner"], PlanOptions(opts["balance_by"], not opts["no_topic_balance"],
                                         not opts["disable_rack_aware"], True, opts["max_moves"], opts["max_bytes"],
                                         opts["leader_changes"]),
            gen.parse_broker_racks(opts["broker_racks"]) or None, opts["spark"], opts["spark_master"],
            changed_only=opts["changed_only"], load_bootstrap=_load_bootstrap(bootstrap_server, opts))
        cluster = None if opts["cluster_snapshot"] else _cluster(zookeeper, bootstrap_server)
        result = gen.generate(cluster, opts["cluster_snapshot"], opts["topics_to_move_json_file"],
                              opts["broker_list"], gen_opts)
        if (opts.get("output") or "text") == "text":  # the plan's report goes to stderr, Kafka's text to stdout
            from pylog.cli.reassign_results import report_text
            click.echo(report_text(result.report), err=True)
        return result
    cluster = _cluster(zookeeper, bootstrap_server)
    if action == "export-snapshot":
        return gen.export_snapshot(cluster, opts["export_snapshot"])
    if action == "list":
        return ops.list_reassignments(cluster)
    text = gen.read_text(opts["reassignment_json_file"])
    if action == "verify":
        return ops.verify(cluster, text, opts["preserve_throttles"])
    if action == "cancel":
        return ops.cancel(cluster, text, opts["preserve_throttles"], opts["timeout"])
    return ops.execute(cluster, text, ops.ExecuteOptions(
        opts["additional"], opts["throttle"], opts["replica_alter_log_dirs_throttle"], opts["wait"],
        opts["wait_timeout"], opts["preserve_throttles"], opts["timeout"]))


def main() -> None:
    """Console entry point (bin/pylog-reassign-partitions.sh, `pylog-reassign-partitions`)."""
    reassign_command.main(prog_name="pylog-reassign-partitions")


if __name__ == "__main__":
    main()
