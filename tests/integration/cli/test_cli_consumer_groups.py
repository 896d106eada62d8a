"""pylog-consumer-groups against a real broker and a real confluent-kafka group: Kafka 3.3's texts, lag against
the high watermark, JSON for cron checks, and one clear error (exit 1) for bad input."""

import json

import pytest

from pylog.cli.consumer_groups import consumer_groups_command

from cli_helpers import cli, script
from support.clients import create_topic, kcat
from support.groups import GROUPS, poll_values, produce

pytestmark = pytest.mark.integration


def header(consumer_width: int) -> str:
    return (f"{'GROUP':<15} {'TOPIC':<15} {'PARTITION':<10} {'CURRENT-OFFSET':<15} {'LOG-END-OFFSET':<15} "
            f"{'LAG':<15} {'CONSUMER-ID':<{consumer_width}} {'HOST':<15} CLIENT-ID")


def test_list_describe_delete(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "cg", partitions=1)
    produce(c.bootstrap, "cg", [f"m{i}" for i in range(30)])
    kcat(c.bootstrap, "-G", "done", "-o", "beginning", "-e", "cg")  # leaves an Empty group at offset 30
    cons = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "live", "auto.offset.reset": "earliest",
                        "enable.auto.commit": False, "client.id": "lag-checker"})
    cons.subscribe(["cg"])
    try:
        poll_values(cons, 10)
        cons.commit(asynchronous=False)
        run = lambda *a: cli(consumer_groups_command, "--bootstrap-server", c.bootstrap, *a)  # noqa: E731

        listed = run("--list")
        assert (listed.exit_code, listed.stdout) == (0, "done\nlive\n")
        states = run("--list", "--state")
        assert states.stdout == f"{'GROUP':<15} STATE\n{'done':<15} Empty\n{'live':<15} Stable\n"
        assert run("--list", "--state", "STABLE").stdout == f"{'GROUP':<15} STATE\n{'live':<15} Stable\n"

        described = run("--describe", "--group", "live")
        member = cons.memberid()
        w = max(15, len(member))
        assert described.exit_code == 0, described.output
        assert described.stdout == (
            "\n" + header(w) + "\n" + f"{'live':<15} {'cg':<15} {'0':<10} {'10':<15} {'30':<15} {'20':<15} "
            f"{member:<{w}} {'/127.0.0.1':<15} lag-checker\n")
        members = run("--describe", "--group", "live", "--members", "--verbose")
        assert members.stdout == (
            f"\n{'GROUP':<15} {'CONSUMER-ID':<{w}} {'HOST':<15} {'CLIENT-ID':<15} {'#PARTITIONS':<15} ASSIGNMENT\n"
            f"{'live':<15} {member:<{w}} {'/127.0.0.1':<15} {'lag-checker':<15} {'1':<15} cg(0)\n")
        state = run("--describe", "--group", "live", "--state")
        coordinator = state.stdout.splitlines()[2].split()[1:3]
        assert coordinator[1] == "(0)" and coordinator[0] == c.bootstrap
        where = f"{c.bootstrap} (0)"
        width = max(25, len(where))
        assert state.stdout == (
            f"\n{'GROUP':<{width}} {'COORDINATOR (ID)':<25} {'ASSIGNMENT-STRATEGY':<20} {'STATE':<15} #MEMBERS\n"
            f"{'live':<{width}} {where:<25} {'range':<20} {'Stable':<15} 1\n")
        empty = run("--describe", "--group", "done")
        assert "Consumer group 'done' has no active members." in empty.stderr
        assert empty.stdout.splitlines()[2].split() == ["done", "cg", "0", "30", "30", "0", "-", "-", "-"]

        doc = json.loads(run("--describe", "--all-groups", "--output", "json").stdout)
        lag = {(g["group"], r["partition"]): r["lag"] for g in doc["groups"] for r in g["rows"]}
        assert lag == {("done", 0): 0, ("live", 0): 20}

        missing = run("--describe", "--group", "nope")
        assert (missing.exit_code, missing.stderr) == (1, "Error: Consumer group 'nope' does not exist.\n")
        bad = run("--list", "--state", "bogus")
        assert bad.exit_code == 1 and bad.stderr.startswith("Error: Invalid state list 'bogus'.")
        assert run("--describe").exit_code == 2
        assert run("--describe", "--group", "live", "--members", "--state").exit_code == 2

        deleted = script("pylog-consumer-groups.sh", "--bootstrap-server", c.bootstrap, "--delete",
                         "--group", "live", "--group", "done")
        assert deleted.returncode == 1
        assert deleted.stdout == (
            "* Group 'live' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: "
            "The group is not empty.\n\nThese consumer groups were deleted successfully: 'done'\n")
        assert deleted.stderr == "Error: Deletion of some consumer groups failed:\n"
        assert run("--list").stdout == "live\n"
    finally:
        cons.close()


def test_reset_and_delete_offsets(cluster_factory, tmp_path):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "rs", partitions=2)
    produce(c.bootstrap, "rs", [f"m{i}" for i in range(40)], 2)
    kcat(c.bootstrap, "-G", "idle", "-o", "beginning", "-e", "rs")  # Empty group, offsets 20/20
    run = lambda *a: cli(consumer_groups_command, "--bootstrap-server", c.bootstrap, *a)  # noqa: E731

    def committed(group):
        doc = json.loads(run("--describe", "--group", group, "--output", "json").stdout)
        return {r["partition"]: r["current_offset"] for g in doc["groups"] for r in g["rows"]}

    def table(*rows):
        head = f"{'GROUP':<30} {'TOPIC':<30} {'PARTITION':<10} {'NEW-OFFSET':<15}"
        return "\n" + "\n".join([head] + [f"{g:<30} {t:<30} {p:<10} {o:<15}" for g, t, p, o in rows]) + "\n"

    dry = run("--reset-offsets", "--group", "idle", "--all-topics", "--to-earliest")
    assert dry.exit_code == 0 and dry.stdout == table(("idle", "rs", "0", "0"), ("idle", "rs", "1", "0"))
    assert dry.stderr.startswith("WARN: No action will be performed as the --execute option is missing.")
    assert committed("idle") == {0: 20, 1: 20}  # a dry run changes nothing

    shifted = run("--reset-offsets", "--group", "idle", "--topic", "rs:0", "--shift-by", "-25", "--execute")
    assert shifted.stdout == table(("idle", "rs", "0", "0"))
    assert "New offset (-5) is lower than earliest offset for topic partition rs-0. Value will be set to 0" in \
        shifted.stderr
    assert committed("idle") == {0: 0, 1: 20}

    exported = run("--reset-offsets", "--group", "idle", "--topic", "rs", "--to-offset", "7", "--export", "--dry-run")
    assert exported.stdout == "rs,0,7\nrs,1,7\n\n"
    plan = tmp_path / "plan.csv"
    plan.write_text(exported.stdout)
    assert run("--reset-offsets", "--group", "idle", "--from-file", str(plan), "--execute").exit_code == 0
    assert committed("idle") == {0: 7, 1: 7}

    bad = tmp_path / "bad.csv"
    bad.write_text("rs,zero,1\n")
    broken = run("--reset-offsets", "--group", "idle", "--from-file", str(bad), "--execute")
    assert broken.exit_code == 1 and broken.stderr.startswith("Error: Invalid reset plan")
    assert committed("idle") == {0: 7, 1: 7}

    cons = ck.Consumer({"bootstrap.servers": c.bootstrap, "group.id": "busy", "auto.offset.reset": "earliest"})
    cons.subscribe(["rs"])
    try:
        poll_values(cons, 5)
        refused = run("--reset-offsets", "--group", "busy", "--all-topics", "--to-latest", "--execute")
        assert refused.exit_code == 1
        assert refused.stderr == ("Error: Assignments can only be reset if the group 'busy' is inactive, but the "
                                  "current state is Stable.\n")
        subscribed = run("--delete-offsets", "--group", "busy", "--topic", "rs")
        assert subscribed.exit_code == 1
        assert "Error: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed" \
            in subscribed.stdout
    finally:
        cons.close()

    deleted = run("--delete-offsets", "--group", "idle", "--topic", "rs:1")
    assert deleted.exit_code == 0
    assert deleted.stdout == ("Request succeed for deleting offsets with topic rs:1 group idle\n\n"
                              f"{'TOPIC':<30} {'PARTITION':<15} {'STATUS':<15}\n{'rs':<30} {'1':<15} {'Successful':<15}\n")
    assert committed("idle") == {0: 7}
