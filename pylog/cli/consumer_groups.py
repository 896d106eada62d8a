"""pylog-consumer-groups: kafka-consumer-groups.sh for pylog (--list [--state], --describe, --delete).

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
from pylog.cli.results import (GroupDescribed, GroupListing, GroupMemberRow, GroupOffsetRow, GroupsDeleted,
                               GroupsDescribed, GroupStateRow)
from pylog.coordinator.group.state import GroupState, parse_state
from pylog.protocol.errors import ErrorCode

ACTIONS = ("list", "describe", "delete")
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
    """ConsumerGroupCommandOptions.checkArgs for the actions we implement, with Kafka's messages."""
    if rules.count(ACTIONS) != 1:
        raise click.UsageError("Command must include exactly one action: --list, --describe, --delete")
    if (rules.has("describe") or rules.has("delete")) and not groups and not all_groups:
        raise click.UsageError("Option [describe] takes one of these options: [all-groups], [group]"
                               if rules.has("describe") else
                               "Option [delete] takes one of these options: [all-groups], [group]")
    if groups and all_groups:
        raise click.UsageError("Option [all-groups] can't be used with option [group]")
    rules.invalid("state", {"delete"})
    for view in ("members", "offsets"):
        rules.invalid(view, {"list", "delete"})
    rules.invalid("verbose", {"list", "delete", "offsets", "state"})
    if rules.count(("members", "offsets")) + (rules.has("describe") and rules.has("state")) > 1:
        raise click.UsageError("Option [describe] takes at most one of these options: [members], [offsets], [state]")


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
    "List all consumer groups, describe a consumer group, or delete consumer group info.\n\n"
    "Kafka's kafka-consumer-groups.sh flags and texts (--list [--state], --describe, --delete)."))
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
@click.option("--timeout", type=int, default=5000, show_default=True, help="Timeout (ms) for some use cases.")
def consumer_groups_command(bootstrap_server: str, list_: bool, describe: bool, delete: bool,
                            groups: tuple[str, ...], all_groups: bool, state: str | None, members: bool,
                            offsets: bool, verbose: bool, timeout: int, **_: Any) -> Any:
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


def main() -> None:
    """Console entry point (bin/pylog-consumer-groups.sh)."""
    consumer_groups_command.main(prog_name="pylog-consumer-groups")


if __name__ == "__main__":
    main()
