"""pylog-alter-cluster without a cluster: refusals, the dry-run plan and its cost, and the steps it takes.

The cluster is the in-memory fake of reassign_fakes.py; the real thing runs in
tests/integration/cli/test_cli_alter_cluster.py.
"""

import json
import re

import pytest
from click.testing import CliRunner

from pylog.cli import alter_cluster as alter_cli
from pylog.cli.alter_cluster import alter_cluster_command
from pylog.cli.reassign_logic import Ongoing

from reassign_fakes import FakeCluster

BS = ["--bootstrap-server", "127.0.0.1:1"]


def three_brokers(live=(0, 1, 2, 3, 4), **kw):
    """Topic t: 6 partitions, RF 2, on brokers 0-2 only (3 and 4 are new)."""
    current = {("t", p): [p % 3, (p + 1) % 3] for p in range(6)}
    return FakeCluster("bootstrap-server", {b: None for b in live}, current, **kw)


def run(monkeypatch, cluster, *args):
    monkeypatch.setattr(alter_cli, "BrokerCluster", lambda admin: cluster)
    monkeypatch.setattr(alter_cli, "open_admin", lambda bootstrap: None)
    return CliRunner().invoke(alter_cluster_command, list(args))


@pytest.mark.parametrize("args, message", [
    (BS, "Command must include exactly one action: --add-brokers, --remove-brokers"),
    (BS + ["--add-brokers", "3", "--remove-brokers", "1"], "exactly one action"),
    (BS + ["--add-brokers", "x"], "Invalid broker list: x"),
    (BS + ["--remove-brokers", "1", "--no-wait"], "--no-wait is only for --add-brokers"),
    (["--add-brokers", "3"], "One of the required --bootstrap-server or --zookeeper arguments must be specified"),
])
def test_usage_errors_exit_2(args, message):
    r = CliRunner().invoke(alter_cluster_command, args)
    assert r.exit_code == 2 and message in r.stderr


@pytest.mark.parametrize("live, args, message", [
    ((0, 1, 2, 3), ["--add-brokers", "3,4"], "Broker(s) 4 are not registered: start them (with their broker.id) "
                                             "before adding them"),
    ((0, 1, 2), ["--remove-brokers", "7"], "Broker(s) 7 are not part of the cluster"),
    ((0, 1, 2), ["--remove-brokers", "1,2"], "Cannot remove broker(s) 1,2: the remaining 1 broker(s) cannot hold "
                                             "topic t's replication factor 2"),
    ((0, 2, 3, 4), ["--add-brokers", "3,4"], "Broker(s) 1 hold replicas but are not registered; start them again, "
                                             "or remove them, before altering the cluster"),
    ((0, 1, 2, 3), ["--add-brokers", "3,3"], "Broker list contains duplicate entries: 3"),
])
def test_refusals_change_nothing(monkeypatch, live, args, message):
    c = three_brokers(live)
    r = run(monkeypatch, c, *BS, *args)
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", f"Error: {message}\n")
    assert c.started == [] and c.throttles == []


def test_refuses_while_a_reassignment_runs(monkeypatch):
    c = three_brokers(ongoing={("t", 0): Ongoing((3, 0, 1), (3,), (0,))})
    r = run(monkeypatch, c, *BS, "--add-brokers", "3,4")
    assert r.exit_code == 1 and "A partition reassignment is in progress" in r.stderr


def test_dry_run_prints_the_plan_and_its_cost_only(monkeypatch):
    c = three_brokers()
    r = run(monkeypatch, c, *BS, "--add-brokers", "3,4", "--dry-run")
    assert r.exit_code == 0, r.output
    lines = r.stdout.split("\n")
    assert lines[0] == ("Plan to add brokers 3,4: 4 replica move(s) (lower bound 4), 0 bytes to copy, "
                        "2 preferred leader change(s)")
    assert lines[1] == "Proposed partition reassignment configuration"
    proposed = json.loads(lines[2])["partitions"]
    moved = sum(len(set(p["replicas"]) - set(c.current[(p["topic"], p["partition"])])) for p in proposed)
    assert moved == 4
    assert "replicas moved: 4  lower bound: 4  gap: 0" in r.stdout
    assert r.stdout.endswith("Dry run: nothing was changed.\n")
    assert c.started == [] and c.throttles == []
    data = json.loads(run(monkeypatch, c, *BS, "--add-brokers", "3,4", "--dry-run", "--output", "json").stdout)
    assert (data["dry_run"], data["report"]["replicas_moved"], data["proposed"]["partitions"]) == (True, 4, proposed)


class InstantController(FakeCluster):
    """Every started move has completed by the next look."""

    def ongoing(self):
        for tp in list(self.in_flight):
            self.finish(tp)
        return {}


def test_add_runs_the_plan_waits_clears_the_throttle_and_elects_leaders(monkeypatch):
    c = InstantController("bootstrap-server", {b: None for b in range(5)},
                          {("t", p): [p % 3, (p + 1) % 3] for p in range(6)})
    r = run(monkeypatch, c, *BS, "--add-brokers", "3,4", "--throttle", "5000")
    assert r.exit_code == 0, r.output
    assert len(c.started) == 1 and c.throttles[0][2] == 5000
    counts = {}
    for reps in c.current.values():
        for b in reps:
            counts[b] = counts.get(b, 0) + 1
    assert sorted(counts) == [0, 1, 2, 3, 4] and max(counts.values()) - min(counts.values()) <= 1
    started = sorted(c.started[0])
    assert (f"Successfully started partition reassignments for {','.join(f'{t}-{p}' for t, p in started)}\n"
            f"Reassignment of {len(started)} partition(s) completed.\n"
            "Clearing broker-level throttles on brokers 0,1,2,3,4\n"
            "Clearing topic-level throttles on topic t\n"
            "Successfully completed leader election (PREFERRED) for partitions ") in r.stdout
    assert c.cleared == [([0, 1, 2, 3, 4], ["t"])]
    assert {c.leaders[tp] for tp in c.current} >= {3, 4}  # the new brokers lead partitions now
    # Not a terminal (a log, a pipe): one line per step on stderr (issue 25).
    n = len(started)
    assert r.stderr.splitlines() == [f"Started the reassignment of {n} partition(s)",
                                     f"Reassigning: {n}/{n} partitions done, 0 s",
                                     "Electing the preferred leaders of the moved partitions"]


def test_a_wait_that_times_out_still_prints_the_plan_that_was_started(monkeypatch):
    c = three_brokers()  # the controller never finishes; a zero timeout gives up at the first look
    r = run(monkeypatch, c, *BS, "--add-brokers", "3,4", "--wait-timeout", "0")
    progress, error = r.stderr.splitlines()[-2:]  # not a terminal: a line of progress, then the failure
    assert r.exit_code == 1 and error.startswith("Error: Timed out after 0 s waiting for the reassignment")
    assert re.fullmatch(r"Reassigning: 0/\d+ partitions done(, .* MB copied)?, 0 s", progress), progress
    lines = r.stdout.split("\n")
    assert lines[1] == "Proposed partition reassignment configuration"  # what --verify needs
    assert json.loads(lines[2])["partitions"] and len(c.started) == 1
    assert "Successfully started partition reassignments for " in r.stdout
    assert "Reassignment of" not in r.stdout  # it did not complete


def test_add_moves_replicas_only_onto_the_brokers_named(monkeypatch):
    c = three_brokers(live=(0, 1, 2, 3, 4))  # 4 is registered too, but only 3 is being added
    r = run(monkeypatch, c, *BS, "--add-brokers", "3", "--dry-run")
    assert r.exit_code == 0, r.output
    proposed = json.loads(r.stdout.split("\n")[2])["partitions"]
    assert proposed and {b for p in proposed for b in p["replicas"]} <= {0, 1, 2, 3}
    assert r.stdout.startswith("Plan to add broker 3: 3 replica move(s)")
    # Naming a broker that already holds replicas adds nobody else.
    r = run(monkeypatch, c, *BS, "--add-brokers", "1", "--dry-run")
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("Plan to add broker 1: 0 replica move(s)")
    assert "No partition needs to move." in r.stdout
