"""pylog-topics: kafka-topics.sh for pylog (--create, --list, --describe, --alter, --delete).

Through --bootstrap-server it behaves and prints like Kafka 3.3's tool; through --zookeeper like
Kafka 2.8's ZooKeeper mode (which also accepts --alter --config/--delete-config, deprecated there).
Every operation error prints `Error while executing topic command : <msg>` and exits 1; option
mistakes print usage and exit 2.
"""

from __future__ import annotations

from typing import Any

import click

from pylog.cli.common import OptionRules, Target, command, open_admin, open_zk, require_target, target_options
from pylog.cli.topic_args import (ReportFlags, TopicRequest, parse_configs_to_delete, parse_replica_assignment,
                                  parse_topic_configs)

ACTIONS = ("create", "list", "alter", "describe", "delete")
REPORTS = ("under-replicated-partitions", "unavailable-partitions", "under-min-isr-partitions",
           "at-min-isr-partitions")
ERROR_PREFIX = "Error while executing topic command : "


def check_args(rules: OptionRules, target: Target) -> None:
    """TopicCommandOptions.checkArgs (3.3, plus 2.8's --zookeeper rules), with Kafka's messages."""
    if rules.count(ACTIONS) != 1:
        raise click.UsageError("Command must include exactly one action: --list, --describe, --create, --alter or "
                               "--delete")
    has = rules.has
    if has("describe") and has("if-exists") and not has("topic") and not has("topic-id"):
        raise click.UsageError("--topic or --topic-id is required to describe a topic")
    if not has("list") and not has("describe"):
        rules.required("topic")
    if has("alter"):
        if target.bootstrap_server and has("config"):
            raise click.UsageError('Option combination "[bootstrap-server],[config]" can\'t be used with option '
                                   '"[alter]" (the kafka-configs CLI supports altering topic configs with a '
                                   '--bootstrap-server option)')
        if target.bootstrap_server or not (has("config") or has("delete-config")):
            rules.required("partitions")
    if has("create") and target.zookeeper and not has("replica-assignment"):
        rules.required("partitions", "replication-factor")
    everything = set(ACTIONS)
    rules.invalid("config", everything - {"alter", "create"})
    rules.invalid("delete-config", everything - {"alter"} | {"bootstrap-server"})
    rules.invalid("partitions", everything - {"alter", "create"})
    rules.invalid("replication-factor", everything - {"create"})
    rules.invalid("replica-assignment", everything - {"create", "alter"})
    if has("create"):
        rules.invalid("replica-assignment", {"partitions", "replication-factor"})
    for report in REPORTS + ("topics-with-overrides",):
        rules.invalid(report, everything - {"describe"} | set(REPORTS) | {"topics-with-overrides"})
    rules.invalid("if-exists", everything - {"alter", "delete", "describe"})
    rules.invalid("if-not-exists", everything - {"create"})
    rules.invalid("exclude-internal", everything - {"list", "describe"})
    rules.invalid("disable-rack-aware", everything - {"create", "alter"})
    rules.invalid("topic-id", everything - {"describe"})


@command("pylog-topics", error_prefix=ERROR_PREFIX, help=(
    "Create, delete, describe, or change a topic.\n\n"
    "Connect with --bootstrap-server (Kafka 3.x's behaviour and texts) or --zookeeper (Kafka 2.8's)."))
@target_options
@click.option("--create", is_flag=True, help="Create a new topic.")
@click.option("--list", "list_", is_flag=True, help="List all available topics.")
@click.option("--describe", is_flag=True, help="List details for the given topics.")
@click.option("--alter", is_flag=True, help="Alter the number of partitions and replica assignment (through "
              "ZooKeeper also the configuration) of a topic.")
@click.option("--delete", is_flag=True, help="Delete a topic.")
@click.option("--topic", help="The topic to create, alter, describe or delete. A regular expression (',' also "
              "separates names) except for --create.")
@click.option("--topic-id", help="The topic id to describe (--describe only).")
@click.option("--partitions", type=int, help="The number of partitions for the topic being created or altered.")
@click.option("--replication-factor", type=int, help="The replication factor for each partition of a new topic.")
@click.option("--replica-assignment", metavar="B1:B2,B3:B4",
              help="Manual partition-to-broker assignment: partitions separated by ',', replicas by ':'.")
@click.option("--config", multiple=True, metavar="NAME=VALUE", help="A topic config override (repeatable).")
@click.option("--delete-config", multiple=True, metavar="NAME",
              help="A topic config override to remove (--alter through --zookeeper only).")
@click.option("--if-exists", is_flag=True, help="With alter, delete or describe: only act if the topic exists.")
@click.option("--if-not-exists", is_flag=True, help="With create: only create the topic if it does not exist.")
@click.option("--exclude-internal", is_flag=True, help="With list or describe: leave out internal topics.")
@click.option("--disable-rack-aware", is_flag=True, help="Place replicas without regard to racks.")
@click.option("--under-replicated-partitions", is_flag=True, help="Describe only under-replicated partitions.")
@click.option("--unavailable-partitions", is_flag=True,
              help="Describe only partitions without a leader or whose leader is not available.")
@click.option("--under-min-isr-partitions", is_flag=True,
              help="Describe only partitions whose ISR is smaller than min.insync.replicas.")
@click.option("--at-min-isr-partitions", is_flag=True,
              help="Describe only partitions whose ISR size equals min.insync.replicas.")
@click.option("--topics-with-overrides", is_flag=True, help="Describe only topics that have config overrides.")
def topics_command(zookeeper: str | None, bootstrap_server: str | None, **opts: Any) -> Any:
    """The pylog-topics command."""
    target = require_target(zookeeper, bootstrap_server)
    check_args(OptionRules(click.get_current_context()), target)
    req = TopicRequest(
        topic=opts["topic"], topic_id=opts["topic_id"], partitions=opts["partitions"],
        replication_factor=opts["replication_factor"],
        replica_assignment=parse_replica_assignment(opts["replica_assignment"]) if opts["replica_assignment"]
        else None,
        configs_to_add=parse_topic_configs(opts["config"]),
        configs_to_delete=parse_configs_to_delete(opts["delete_config"]),
        rack_aware=not opts["disable_rack_aware"], if_exists=opts["if_exists"], if_not_exists=opts["if_not_exists"],
        exclude_internal=opts["exclude_internal"],
        report=ReportFlags(opts["under_replicated_partitions"], opts["unavailable_partitions"],
                           opts["under_min_isr_partitions"], opts["at_min_isr_partitions"],
                           opts["topics_with_overrides"]))
    if opts["create"]:
        req.check_create()
    if target.zookeeper:
        from pylog.cli.topics_zk import ZkTopicService
        service: Any = ZkTopicService(open_zk(target.zookeeper))
    else:
        from pylog.cli.topics_broker import BrokerTopicService
        service = BrokerTopicService(open_admin(target.bootstrap_server or ""))
    if opts["create"]:
        return service.create(req)
    if opts["list_"]:
        return service.list(req)
    if opts["alter"]:
        return service.alter(req)
    if opts["describe"]:
        return service.describe(req)
    return service.delete(req)


def main() -> None:
    """Console entry point (bin/pylog-topics.sh, `pylog-topics`)."""
    topics_command.main(prog_name="pylog-topics")


if __name__ == "__main__":
    main()
