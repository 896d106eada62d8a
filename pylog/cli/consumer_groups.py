"""pylog-consumer-groups: kafka-consumer-groups.sh for pylog (--list, --describe, --delete, --reset-offsets,
--delete-offsets).

--describe prints Kafka 3.3's offsets view by default: one row per partition a member owns or the
group committed, with the committed offset, the high watermark and the lag between them;
--members [--verbose] and --state print its other two views. An unknown group is an error
(exit 1); option mistakes print usage and exit 2.
"""

from __future__ import annotations

from typing import Any

import click

from pylog.cli.common import OperationError, OptionRules, command, open_admin
from pylog.cli.groups_admin import GroupAdmin
from pylog.cli.groups_reset import SCENARIOS, ResetSpec, delete_offsets, read_plan, reset_offsets
from pylog.cli.results import (GroupDescribed, GroupListing, GroupMemberRow, GroupOffsetRow, GroupsDeleted,
                               GroupsDescribed, GroupStateRow, OffsetsReset)
from pylog.coordinator.group.state import GroupState, parse_state
from pylog.protocol.errors import ErrorCode

ACTIONS = ("list", "describe", "delete", "reset-offsets", "delete-offsets")
NO_EXECUTE_WARNING = ("WARN: No action will be performed as the --execute option is missing.In a future major "
                      "release, the default behavior of this command will be to prompt the user before executing the "
                      "reset rather than doing a dry run. You should add the --dry-run option explicitly if you are "
                      "scripting this command and want to keep the current default behavior without prompting.")
# Kafka's ConsumerGroupState values, in its order (they show in the error message).
KAFKA_STATES = ("Unknown", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty")


def parse_states(value: str) -> list[str]:
    """--state's comma-separated, case-insensitive list, as Kafka's names."""
    names = [v.strip() for v in value.split(",") if v.strip()]
    parsed = [parse_state(n) for n in names]
    if not names or any(p is None for p in parsed):
        raise OperationError(f"Invalid state list '{value}'. Valid states are: {', '.join(KAFKA_STATES)}")
    return [p.value for p in parsed if isinstance(p, GroupState)]


def check_args(rules: OptionRules, groups: tuple[str, ...], all_groups: bool) -> None:
    """ConsumerGroupCommandOptions.checkArgs, with Kafka's messages."""
    if rules.count(ACTIONS) != 1:
        raise click.UsageError("Command must include exactly one action: --list, --describe, --delete, "
                               "--reset-offsets, --delete-offsets")
    for action in ("describe", "delete", "reset-offsets"):
        if rules.has(action) and not groups and not all_groups:
            raise click.UsageError(f"Option [{action}] takes one of these options: [all-groups], [group]")
    if groups and all_groups:
        raise click.UsageError("Option [all-groups] can't be used with option [group]")
    if rules.has("delete") and rules.has("topic"):
        raise click.UsageError("The consumer does not support topic-specific offset deletion from a consumer group.")
    if rules.has("delete-offsets") and (not groups or not rules.has("topic")):
        raise click.UsageError("Option [delete-offsets] takes the following options: [group], [topic]")
    if rules.has("reset-offsets"):
        _check_reset(rules)
    rules.invalid("state", {"delete", "reset-offsets", "delete-offsets"})
    for view in ("members", "offsets"):
        rules.invalid(view, set(ACTIONS) - {"describe"})
    rules.invalid("verbose", set(ACTIONS) - {"describe"} | {"offsets", "state"})
    rules.invalid("topic", {"list", "describe"})
    for opt in ("all-topics", "dry-run", "execute", "export") + SCENARIOS:
        rules.invalid(opt, set(ACTIONS) - {"reset-offsets"})
    if rules.count(("members", "offsets")) + (rules.has("describe") and rules.has("state")) > 1:
        raise click.UsageError("Option [describe] takes at most one of these options: [members], [offsets], [state]")


def _check_reset(rules: OptionRules) -> None:
    if rules.has("dry-run") and rules.has("execute"):
        raise click.UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
    for scenario in SCENARIOS:
        rules.invalid(scenario, set(SCENARIOS) - {scenario})
    if rules.count(SCENARIOS) != 1:
        raise click.UsageError("Option [reset-offsets] requires one of the following scenarios: "
                               + ", ".join(f"[{s}]" for s in SCENARIOS))
    if not rules.has("from-file") and not rules.has("topic") and not rules.has("all-topics"):
        raise click.UsageError("One of the reset scopes should be defined: --all-topics, --topic.")
    if not rules.has("dry-run") and not rules.has("execute"):
        click.echo(NO_EXECUTE_WARNING, err=True)


def describe_group(ga: GroupAdmin, group: str, view: str, verbose: bool
                   ) -> tuple[GroupDescribed, list[GroupMemberRow], GroupStateRow | None]:
    """One group in the asked view (offsets: members' partitions, most first, then committed-only ones)."""
    g = ga.describe(group)
    if g.state == "Dead":
        return GroupDescribed(group, "Dead", []), [], None
    if view == "state":
        return GroupDescribed(group, g.state, []), [], GroupStateRow(group, g.coordinator, g.protocol, g.state,
                                                                     len(g.members))
    if view == "members":
        return GroupDescribed(group, g.state, []), [
            GroupMemberRow(group, m.member_id, m.instance_id, m.host, m.client_id, len(m.assignment),
                           list(m.assignment) if verbose else None) for m in g.members], None
    committed = ga.committed(group)
    members = sorted((m for m in g.members if m.assignment), key=lambda m: -len(m.assignment))
    # Kafka sorts each member's partitions by partition number only (stably, in assignment order).
    owned = [(m, tp) for m in members for tp in sorted(m.assignment, key=lambda tp: tp[1])]
    orphans = sorted(set(committed) - {tp for _, tp in owned}, key=lambda tp: (tp[1], tp[0]))
    ends = ga.end_offsets([tp for _, tp in owned] + orphans)

    def row(tp: tuple[str, int], m: Any) -> GroupOffsetRow:
        cur, end = committed.get(tp), ends.get(tp)
        return GroupOffsetRow(group, tp[0], tp[1], cur, end, end - cur if cur is not None and end is not None
                              else None, m.member_id if m else None, m.host if m else None, m.client_id if m else None)
    return GroupDescribed(group, g.state, [row(tp, m) for m, tp in owned] + [row(tp, None) for tp in orphans]), [], None


@command("pylog-consumer-groups", help=(
    "List all consumer groups, describe a consumer group, delete consumer group info, or reset consumer group "
    "offsets.\n\nKafka's kafka-consumer-groups.sh flags and texts."))
@click.option("--bootstrap-server", required=True, metavar="HOST:PORT", help="The server(s) to connect to.")
@click.option("--list", "list_", is_flag=True, help="List all consumer groups.")
@click.option("--describe", is_flag=True, help="Describe consumer group and list offset lag (number of messages "
              "not yet processed) related to given group.")
@click.option("--delete", is_flag=True, help="Pass in groups to delete topic partition offsets and ownership "
              "information over the entire consumer group.")
@click.option("--group", "groups", multiple=True, help="The consumer group we wish to act on (repeatable).")
@click.option("--all-groups", is_flag=True, help="Apply to all consumer groups.")
@click.option("--state", "state", is_flag=False, flag_value="", default=None, metavar="[STATES]",
              help="With --list: show each group's state, optionally only groups in these (comma-separated) states. "
              "With --describe: the group's coordinator, assignment strategy, state and member count.")
@click.option("--members", is_flag=True, help="With --describe: the group's members.")
@click.option("--offsets", is_flag=True, help="With --describe: the group's offsets and lag (the default view).")
@click.option("--verbose", is_flag=True, help="With --describe --members: each member's partitions too.")
@click.option("--reset-offsets", is_flag=True, help="Reset offsets of inactive consumer groups: --dry-run (the "
              "default) shows the plan, --execute commits it, --export prints it as CSV.")
@click.option("--delete-offsets", is_flag=True, help="Delete offsets of one consumer group for the --topic(s).")
@click.option("--topic", "topics", multiple=True, metavar="TOPIC[:P,...]", help="A topic (optionally some of its "
              "partitions) for --reset-offsets / --delete-offsets (repeatable).")
@click.option("--all-topics", is_flag=True, help="With --reset-offsets: every topic the group has offsets for.")
@click.option("--dry-run", is_flag=True, help="Only show the new offsets (the default).")
@click.option("--execute", is_flag=True, help="Commit the new offsets.")
@click.option("--export", is_flag=True, help="Print the new offsets as CSV (the --from-file format).")
@click.option("--to-offset", type=int, help="Reset to this offset.")
@click.option("--to-datetime", help="Reset to the first offset at or after 'YYYY-MM-DDTHH:mm:SS.sss'.")
@click.option("--by-duration", help="Reset to the first offset at or after now minus 'PnDTnHnMnS'.")
@click.option("--to-earliest", is_flag=True, help="Reset to the earliest offset.")
@click.option("--to-latest", is_flag=True, help="Reset to the latest offset (the high watermark).")
@click.option("--to-current", is_flag=True, help="Reset to the committed offset (latest where none).")
@click.option("--shift-by", type=int, help="Shift the committed offset by n (negative: back).")
@click.option("--from-file", type=click.Path(), help="Reset to the offsets in this CSV file.")
@click.option("--timeout", type=int, default=5000, show_default=True, help="Timeout (ms) for some use cases.")
def consumer_groups_command(bootstrap_server: str, list_: bool, describe: bool, delete: bool,
                            groups: tuple[str, ...], all_groups: bool, state: str | None, members: bool,
                            offsets: bool, verbose: bool, timeout: int, **opts: Any) -> Any:
    """The pylog-consumer-groups command."""
    check_args(OptionRules(click.get_current_context()), groups, all_groups)
    if describe and state:
        raise click.UsageError("--state takes no value with --describe")
    states = parse_states(state) if state and list_ else []
    ga = GroupAdmin(open_admin(bootstrap_server, max(timeout, 30000)))
    if list_:
        listed = ga.list_groups(states)
        return GroupListing([g for g, _ in listed], dict(listed) if state is not None else None)
    names = sorted(set(groups)) if groups else [g for g, _ in ga.list_groups()]
    if opts["delete_offsets"]:
        return delete_offsets(ga, groups[0], list(opts["topics"]))
    if opts["reset_offsets"]:
        return _reset(ga, names, opts)
    if describe:
        view = "state" if state is not None else "members" if members else "offsets"
        out = GroupsDescribed([], view=view)
        for g in names:
            described, member_rows, state_row = describe_group(ga, g, view, verbose)
            out.groups.append(described)
            if member_rows:
                out.members[g] = member_rows
            if state_row is not None:
                out.states.append(state_row)
        dead = [d.group for d in out.groups if d.state == "Dead"]
        out.failure = "; ".join(f"Consumer group '{g}' does not exist." for g in dead) or None
        return out
    results = {g: ga.delete(g) for g in names}
    failed = {g: f"{e.exception_name}: {e.message}" for g, e in results.items() if e != ErrorCode.NONE}
    deleted = [g for g, e in results.items() if e == ErrorCode.NONE]
    return GroupsDeleted(deleted, failed, "Deletion of some consumer groups failed:" if failed else None)


def _reset(ga: GroupAdmin, names: list[str], opts: dict[str, Any]) -> OffsetsReset:
    scenario = next(s for s in SCENARIOS if opts[s.replace("-", "_")] not in (None, False))
    value = opts[scenario.replace("-", "_")]
    plan = read_plan(str(value), names) if scenario == "from-file" else None
    spec = ResetSpec(scenario, value, tuple(opts["topics"]), bool(opts["all_topics"]), plan)
    result, refused = reset_offsets(ga, names, spec, bool(opts["execute"]))
    rows = [(g, t, p, o) for g, offs in result.offsets.items() for (t, p), o in sorted(offs.items())]
    return OffsetsReset(rows, bool(opts["export"]), len(names) != 1, result.notes, result.warnings, refused)


def main() -> None:
    """Console entry point (bin/pylog-consumer-groups.sh)."""
    consumer_groups_command.main(prog_name="pylog-consumer-groups")


if __name__ == "__main__":
    main()
