"""Committed offsets outlive the group's coordinator: kill -9 of the broker leading the group's
`__consumer_offsets` partition, and a consumer restarted elsewhere resumes where the group committed."""

from __future__ import annotations

import pytest

from support.clients import create_topic, wait_for
from support.inspect import partitions
from support.groups import GROUPS, committed, describe, poll_values, produce

pytestmark = pytest.mark.integration

FAST = {"zookeeper.session.timeout.ms": "4000", "replica.lag.time.max.ms": "4000",
        "auto.leader.rebalance.enable": "false", "offsets.topic.replication.factor": "3"}


def test_committed_offsets_survive_kill_9_of_the_coordinator(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(3, overrides={**GROUPS, **FAST})
    create_topic(c.bootstrap, "dur", partitions=2, rf=3)
    values = [f"d{i}" for i in range(100)]
    produce(c.bootstrap, "dur", values, 2)
    conf = {"bootstrap.servers": c.bootstrap, "group.id": "dur-g", "auto.offset.reset": "earliest"}
    first = ck.Consumer(conf)
    first.subscribe(["dur"])
    seen = poll_values(first, 60)
    first.close()  # commits the 60 consumed records' positions
    offsets = partitions(c.bootstrap, "__consumer_offsets")
    assert len(offsets) == 3 and all(len(p.replicas) == 3 for p in offsets.values())
    wait_for(lambda: all(len(p.isr) == 3 for p in partitions(c.bootstrap, "__consumer_offsets").values()), 30,
             "full ISRs of __consumer_offsets")
    before = committed(c.bootstrap, "dur-g")
    assert sum(before.values()) == 60
    victim = describe(c.bootstrap, "dur-g").coordinator.id
    c.brokers[victim].kill()
    rest = ",".join(b.address for i, b in c.brokers.items() if i != victim)
    wait_for(lambda: describe(rest, "dur-g").coordinator.id != victim, 60, "a new coordinator for dur-g")
    assert committed(rest, "dur-g") == before  # loaded from the log by the new leader
    second = ck.Consumer({**conf, "bootstrap.servers": rest})
    second.subscribe(["dur"])
    try:
        rest_values = poll_values(second, 40)
        assert sorted(seen + rest_values) == sorted(values)  # nothing lost, nothing consumed twice
        assert second.poll(1.0) is None
    finally:
        second.close()
    assert committed(rest, "dur-g") == {("dur", 0): 50, ("dur", 1): 50}


def test_committed_offsets_follow_a_reassignment_of_the_offsets_partition(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    from pylog.cli.admin_client import BrokerAdmin
    from pylog.coordinator.ownership import partition_for

    c = cluster_factory(3, overrides=GROUPS)  # offsets RF 1: the move leaves nothing behind on the old broker
    create_topic(c.bootstrap, "mv", partitions=1, rf=3)
    produce(c.bootstrap, "mv", [f"r{i}" for i in range(20)])
    conf = {"bootstrap.servers": c.bootstrap, "group.id": "mv-g", "auto.offset.reset": "earliest"}
    first = ck.Consumer(conf)
    first.subscribe(["mv"])
    seen = poll_values(first, 12)
    first.close()
    assert committed(c.bootstrap, "mv-g") == {("mv", 0): 12}
    p = partition_for("mv-g", 3)
    old = partitions(c.bootstrap, "__consumer_offsets")[p].leader
    target = next(b for b in c.brokers if b != old)
    admin = BrokerAdmin(c.bootstrap)
    try:
        assert admin.alter_partition_reassignments({("__consumer_offsets", p): [target]}) == {
            ("__consumer_offsets", p): None}
    finally:
        admin.close()
    wait_for(lambda: (v := partitions(c.bootstrap, "__consumer_offsets")[p]) and v.leader == target
             and list(v.replicas) == [target], 60, f"__consumer_offsets-{p} moved to broker {target}")
    wait_for(lambda: describe(c.bootstrap, "mv-g").coordinator.id == target, 30, "the coordinator to follow")
    assert committed(c.bootstrap, "mv-g") == {("mv", 0): 12}
    second = ck.Consumer(conf)
    second.subscribe(["mv"])
    try:
        assert sorted(seen + poll_values(second, 8)) == sorted(f"r{i}" for i in range(20))
    finally:
        second.close()


def _events(path) -> list[tuple[str, int, int]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [(k, int(p), int(o)) for k, p, o in (ln.split() for ln in lines if len(ln.split()) == 3)]


def test_a_group_keeps_working_through_kill_9_of_the_controller_and_of_its_coordinator(cluster_factory, tmp_path):
    """A member that processes then commits each record (tests/support/group_worker.py) rides through both kills,
    its commits landing on the new coordinator; a member started after it is kill -9'd resumes from the
    committed offsets: the records processed twice are only those the killed one processed after its last
    successful commit of that partition, and none is skipped."""
    pytest.importorskip("confluent_kafka")
    import subprocess
    import sys
    from pathlib import Path

    from support.inspect import controller

    worker = Path(__file__).resolve().parents[2] / "support" / "group_worker.py"
    c = cluster_factory(3, overrides={**GROUPS, **FAST})
    create_topic(c.bootstrap, "cf", partitions=3, rf=3)
    total = 600
    produce(c.bootstrap, "cf", [f"c{i}" for i in range(total)], 3)
    procs: dict[str, subprocess.Popen] = {}

    def start(name: str) -> None:
        with open(tmp_path / f"{name}.err", "w") as err:  # -P: tests/support must not shadow the stdlib
            procs[name] = subprocess.Popen([sys.executable, "-P", str(worker), c.bootstrap, "cf-g", "cf",
                                            str(tmp_path / f"{name}.log"), name], stdout=subprocess.DEVNULL,
                                           stderr=err)

    def commits(name: str) -> int:
        return sum(1 for k, _, _ in _events(tmp_path / f"{name}.log") if k == "C")

    def commits_after(name: str, n: int, what: str) -> None:
        wait_for(lambda: commits(name) >= n, 90, f"{what} ({commits(name)} commits so far)")

    try:
        start("a")
        commits_after("a", 30, "member a to commit")
        wait_for(lambda: len(partitions(c.bootstrap, "__consumer_offsets")) == 3 and all(
            len(p.isr) == 3 for p in partitions(c.bootstrap, "__consumer_offsets").values()), 30,
            "full ISRs of __consumer_offsets")
        ctl, epoch = controller(c.zk_connect)
        c.brokers[ctl].kill()
        wait_for(lambda: controller(c.zk_connect)[1] > epoch and controller(c.zk_connect)[0] not in (-1, ctl), 60,
                 "a new controller")
        commits_after("a", commits("a") + 30, "commits after the controller failover")
        c.brokers[ctl].start()
        c.brokers[ctl].wait_ready()
        victim = describe(c.bootstrap, "cf-g").coordinator.id
        c.brokers[victim].kill()
        commits_after("a", commits("a") + 30, "commits on the new coordinator")
        rest = ",".join(b.address for i, b in c.brokers.items() if i != victim)
        assert describe(rest, "cf-g").coordinator.id != victim
        procs["a"].kill()  # kill -9 of the member: what it processed after its last commit comes again
        procs["a"].wait(10)
        start("b")
        wait_for(lambda: len({(p, o) for f in ("a", "b") for k, p, o in _events(tmp_path / f"{f}.log")
                              if k == "P"}) == total, 120, "every record processed")
        wait_for(lambda: committed(rest, "cf-g") == {("cf", p): total // 3 for p in range(3)}, 30,
                 "member b to commit the end of every partition")
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)
    a, b = _events(tmp_path / "a.log"), _events(tmp_path / "b.log")
    last_commit = {p: max((o for k, q, o in a if k == "C" and q == p), default=-1) for p in range(3)}
    processed_a = [(p, o) for k, p, o in a if k == "P"]
    processed_b = [(p, o) for k, p, o in b if k == "P"]
    assert len(set(processed_a)) == len(processed_a)  # no re-delivery to the member that rode the failovers
    assert sorted(set(processed_a) | set(processed_b)) == [(p, o) for p in range(3) for o in range(total // 3)]
    twice = set(processed_a) & set(processed_b)
    assert all(o > last_commit[p] for p, o in twice), sorted(twice)[:10]  # only what a never committed
    # b resumes at a committed offset: at least one past a's last recorded commit, and at most one past
    # what a processed (a commit may land while a is killed before it records it, never beyond processing).
    last_processed = {p: max((o for q, o in processed_a if q == p), default=-1) for p in range(3)}
    for p in range(3):
        starts = [o for q, o in processed_b if q == p]
        if starts:
            assert last_commit[p] + 1 <= min(starts) <= last_processed[p] + 1, (p, min(starts), last_commit[p])
