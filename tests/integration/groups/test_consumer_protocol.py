"""KIP-848 (`group.protocol=consumer`) with confluent-kafka's defaults otherwise: the broker assigns the partitions
and members reconcile through ConsumerGroupHeartbeat."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.clients import create_topic, wait_for
from support.groups import GROUPS, committed, produce

pytestmark = pytest.mark.integration
WORKER = Path(__file__).resolve().parents[2] / "support" / "consumer_worker.py"

# Broker settings (Kafka's keys): sessions short enough for a test to see a killed member expire.
KIP848 = {**GROUPS, "group.consumer.min.session.timeout.ms": "6000", "group.consumer.session.timeout.ms": "6000",
          "group.consumer.min.heartbeat.interval.ms": "500", "group.consumer.heartbeat.interval.ms": "500"}


def _consumer(bootstrap: str, group: str, **extra):
    ck = pytest.importorskip("confluent_kafka")
    return ck.Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                        "auto.offset.reset": "earliest", **extra})


def _poll_all(consumers: dict, seen: dict, want: int, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while sum(len(v) for v in seen.values()) < want and time.monotonic() < deadline:
        for name, c in consumers.items():
            m = c.poll(0.1)
            if m is not None and m.error() is None:
                seen[name].append((m.partition(), m.offset()))


def test_three_members_share_a_topic_and_read_each_record_once(cluster_factory):
    c = cluster_factory(1, overrides=KIP848)
    create_topic(c.bootstrap, "shared", partitions=6)
    produce(c.bootstrap, "shared", [f"v{i}" for i in range(300)], 6)
    consumers = {n: _consumer(c.bootstrap, "g3", **{"client.id": n}) for n in ("a", "b", "c")}
    try:
        for cons in consumers.values():
            cons.subscribe(["shared"])
        seen: dict[str, list] = {n: [] for n in consumers}

        def three_way():
            _poll_all(consumers, seen, 10**9, 0.5)
            return all(len(cons.assignment()) == 2 for cons in consumers.values())
        wait_for(three_way, 60, "each of three members to own two of the six partitions")
        _poll_all(consumers, seen, 300, 60)
        got = [r for v in seen.values() for r in v]
        assert len(got) == 300 and len(set(got)) == 300
        owners = {p: n for n, v in seen.items() for p, _ in v}
        assert sorted(owners) == list(range(6))
        _tools_show_the_consumer_group(c.bootstrap, "g3", consumers)
        _metadata_by_topic_id(c.bootstrap, "shared")
    finally:
        for cons in consumers.values():
            cons.close()


def test_join_and_leave_move_partitions_without_losing_records(cluster_factory):
    c = cluster_factory(1, overrides=KIP848)
    create_topic(c.bootstrap, "jl", partitions=4)
    first = _consumer(c.bootstrap, "jl-g")
    second = _consumer(c.bootstrap, "jl-g")
    consumers = {"first": first}
    seen: dict[str, list] = {"first": [], "second": []}
    try:
        first.subscribe(["jl"])
        wait_for(lambda: _poll_all(consumers, seen, 10**9, 0.3) or len(first.assignment()) == 4, 60,
                 "the first member to own all four partitions")
        second.subscribe(["jl"])
        consumers["second"] = second
        wait_for(lambda: _poll_all(consumers, seen, 10**9, 0.3) or
                 (len(first.assignment()), len(second.assignment())) == (2, 2), 60, "a two-two split after the join")
        produce(c.bootstrap, "jl", [f"a{i}" for i in range(100)], 4)
        _poll_all(consumers, seen, 100, 60)
        assert len(seen["first"]) == 50 and len(seen["second"]) == 50  # each reads its two partitions
        second.close()  # leaves the group (member epoch -1): its partitions go back to the first member
        del consumers["second"]
        wait_for(lambda: _poll_all(consumers, seen, 10**9, 0.3) or len(first.assignment()) == 4, 30,
                 "the first member to own all four partitions again")
        produce(c.bootstrap, "jl", [f"b{i}" for i in range(40)], 4)
        _poll_all(consumers, seen, 140, 60)
        got = seen["first"] + seen["second"]
        assert len(got) == 140 and len(set(got)) == 140
    finally:
        first.close()
    # Empty now: DeleteGroups takes the group and its committed offsets.
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": c.bootstrap})
    assert sum(committed(c.bootstrap, "jl-g").values()) == 140
    admin.delete_consumer_groups(["jl-g"])["jl-g"].result(30)
    assert committed(c.bootstrap, "jl-g") == {}


def _worker(c, tmp_path, procs, name, group, topic, instance=None):
    args = [sys.executable, "-P", str(WORKER), c.bootstrap, group, topic, str(tmp_path / f"{name}.log"), name]
    with open(tmp_path / f"{name}.err", "w") as err:
        procs[name] = subprocess.Popen(args + ([instance] if instance else []), stdout=subprocess.DEVNULL,
                                       stderr=err)


def _processed(tmp_path) -> dict[str, list[tuple[int, int]]]:
    out = {}
    for f in tmp_path.glob("*.log"):
        out[f.stem] = [(int(p), int(o)) for kind, p, o in
                       (ln.split() for ln in f.read_text().splitlines() if ln.startswith("P "))]
    return out


def _owned(tmp_path) -> dict[str, list[int]]:
    """Each worker's latest assignment (its last `A` line)."""
    out = {}
    for f in tmp_path.glob("*.log"):
        lines = [ln[2:] for ln in f.read_text().splitlines() if ln.startswith("A ")]
        out[f.stem] = [int(p) for p in lines[-1].split(",") if p] if lines else []
    return out


def _assignments(log: Path) -> list[str]:
    return [ln for ln in log.read_text().splitlines() if ln.startswith("A ")]


def _stop_all(procs) -> None:
    for p in procs.values():
        if p.poll() is None:
            p.kill()
            p.wait(10)


def test_a_killed_member_expires_and_its_partitions_are_consumed_by_the_others(cluster_factory, tmp_path):
    c = cluster_factory(1, overrides=KIP848)
    create_topic(c.bootstrap, "kill", partitions=6)
    procs: dict[str, subprocess.Popen] = {}
    try:
        for name in ("a", "b", "c"):
            _worker(c, tmp_path, procs, name, "kill-g", "kill")
        wait_for(lambda: sorted(map(len, _owned(tmp_path).values())) == [2, 2, 2], 60, "two partitions each")
        produce(c.bootstrap, "kill", [f"x{i}" for i in range(60)], 6)
        wait_for(lambda: sum(len(v) for v in _processed(tmp_path).values()) >= 60, 60, "the first records")
        procs["a"].kill()  # kill -9: no leave; its session (6 s here) expires on the broker
        procs["a"].wait(10)
        produce(c.bootstrap, "kill", [f"y{i}" for i in range(60)], 6)
        wait_for(lambda: len({r for k, v in _processed(tmp_path).items() if k != "a" for r in v if r[1] >= 10}) == 60,
                 60, "b and c to process every later record, a's partitions too")
        # OffsetCommit v9 with the members' epochs: every processed record's commit was taken.
        wait_for(lambda: committed(c.bootstrap, "kill-g") == {("kill", p): 20 for p in range(6)}, 30,
                 "the group's commits at the end of every partition")
    finally:
        _stop_all(procs)
    later = [r for k, v in _processed(tmp_path).items() if k != "a" for r in v if r[1] >= 10]
    assert len(later) == len(set(later)) == 60  # each once
    assert {p for p, _ in later} == set(range(6))


def test_a_static_member_restarts_without_a_reassignment(cluster_factory, tmp_path):
    c = cluster_factory(1, overrides=KIP848)
    create_topic(c.bootstrap, "st", partitions=4)
    procs: dict[str, subprocess.Popen] = {}
    try:
        _worker(c, tmp_path, procs, "a1", "st-g", "st", instance="alpha")
        _worker(c, tmp_path, procs, "b", "st-g", "st", instance="beta")
        wait_for(lambda: sorted(map(len, _owned(tmp_path).values())) == [2, 2], 60, "two partitions each")
        produce(c.bootstrap, "st", [f"x{i}" for i in range(40)], 4)
        wait_for(lambda: sum(len(v) for v in _processed(tmp_path).values()) == 40, 60, "the first 40 records")
        before = {k: {p for p, _ in v} for k, v in _processed(tmp_path).items()}
        assert len(before["a1"]) == 2 and len(before["b"]) == 2
        b_changes = _assignments(tmp_path / "b.log")
        procs["a1"].terminate()  # close(): a static member leaves for now (member epoch -2)
        procs["a1"].wait(30)
        _worker(c, tmp_path, procs, "a2", "st-g", "st", instance="alpha")
        produce(c.bootstrap, "st", [f"y{i}" for i in range(40)], 4)
        wait_for(lambda: sum(len(v) for v in _processed(tmp_path).values()) == 80, 60, "the next 40 records")
    finally:
        _stop_all(procs)
    after = _processed(tmp_path)
    assert {p for p, _ in after["a2"]} == before["a1"]  # the restarted instance got its partitions back
    assert {p for p, _ in after["b"]} == before["b"]  # and the other member never lost or gained any
    assert _assignments(tmp_path / "b.log") == b_changes
    assert len(set(after["b"])) == len(after["b"]) == 40


def test_regex_subscription_picks_up_a_topic_created_later(cluster_factory):
    c = cluster_factory(1, overrides=KIP848)
    create_topic(c.bootstrap, "rx-one", partitions=2)
    create_topic(c.bootstrap, "other", partitions=1)
    produce(c.bootstrap, "rx-one", [f"o{i}" for i in range(10)], 2)
    produce(c.bootstrap, "other", ["nope"], 1)
    cons = _consumer(c.bootstrap, "rx-g", **{"topic.metadata.refresh.interval.ms": "1000"})
    try:
        cons.subscribe(["^rx-.*"])  # librdkafka sends it as SubscribedTopicRegex; the broker resolves it
        got: list[tuple[str, str]] = []

        def read(n):
            deadline = time.monotonic() + 60
            while len(got) < n and time.monotonic() < deadline:
                m = cons.poll(0.2)
                if m is not None and m.error() is None:
                    got.append((m.topic(), m.value().decode()))
        read(10)
        create_topic(c.bootstrap, "rx-two", partitions=1)
        produce(c.bootstrap, "rx-two", [f"t{i}" for i in range(5)], 1)
        read(15)
        assert sorted(t for t, _ in got) == ["rx-one"] * 10 + ["rx-two"] * 5
    finally:
        cons.close()


def test_the_group_survives_kill_9_of_its_coordinator(cluster_factory, tmp_path):
    from pylog.coordinator.ownership import partition_for
    from support.inspect import partitions

    fast = {"zookeeper.session.timeout.ms": "4000", "replica.lag.time.max.ms": "4000",
            "auto.leader.rebalance.enable": "false", "offsets.topic.replication.factor": "3"}
    c = cluster_factory(3, overrides={**KIP848, **fast})
    create_topic(c.bootstrap, "fo", partitions=4, rf=3)
    procs: dict[str, subprocess.Popen] = {}
    try:
        _worker(c, tmp_path, procs, "a", "fo-g", "fo")
        _worker(c, tmp_path, procs, "b", "fo-g", "fo")
        wait_for(lambda: sorted(map(len, _owned(tmp_path).values())) == [2, 2], 60, "two partitions each")
        produce(c.bootstrap, "fo", [f"x{i}" for i in range(40)], 4)
        wait_for(lambda: sum(len(v) for v in _processed(tmp_path).values()) == 40, 60, "the first 40 records")
        split = {k: _assignments(tmp_path / f"{k}.log") for k in procs}
        p = partition_for("fo-g", 3)
        victim = partitions(c.bootstrap, "__consumer_offsets")[p].leader
        c.brokers[victim].kill()
        rest = ",".join(b.address for i, b in c.brokers.items() if i != victim)
        wait_for(lambda: partitions(rest, "__consumer_offsets")[p].leader not in (victim, -1), 60,
                 "a new leader of the group's __consumer_offsets partition")
        produce(rest, "fo", [f"y{i}" for i in range(40)], 4)
        wait_for(lambda: sum(len(v) for v in _processed(tmp_path).values()) >= 80, 90, "the next 40 records")
    finally:
        _stop_all(procs)
    done = [r for v in _processed(tmp_path).values() for r in v]
    assert len(done) == len(set(done)) == 80  # nothing lost, nothing read twice
    # The new coordinator loaded the group from __consumer_offsets: the members kept their epochs and partitions.
    assert {k: _assignments(tmp_path / f"{k}.log") for k in procs} == split


def _tools_show_the_consumer_group(bootstrap: str, group: str, consumers: dict) -> None:
    """ListGroups' type filter and pylog-consumer-groups --describe see the KIP-848 group as Kafka 4.0's tools do."""
    from click.testing import CliRunner
    from confluent_kafka import ConsumerGroupType
    from confluent_kafka.admin import AdminClient

    from pylog.cli.consumer_groups import consumer_groups_command

    admin = AdminClient({"bootstrap.servers": bootstrap})
    listed = admin.list_consumer_groups(types={ConsumerGroupType.CONSUMER}).result(30).valid
    assert [(g.group_id, g.type) for g in listed] == [(group, ConsumerGroupType.CONSUMER)]
    assert admin.list_consumer_groups(types={ConsumerGroupType.CLASSIC}).result(30).valid == []
    run = lambda *a: CliRunner().invoke(consumer_groups_command, ["--bootstrap-server", bootstrap, *a])  # noqa: E731
    assert run("--list").stdout == f"{group}\n"
    state = run("--describe", "--group", group, "--state").stdout.splitlines()[2].split()
    assert state[3:] == ["uniform", "Stable", "3"]
    members = run("--describe", "--group", group, "--members", "--verbose").stdout.splitlines()[2:]
    want = {(cons.memberid(), name, str(len(cons.assignment()))) for name, cons in consumers.items()}
    assert {(ln.split()[1], ln.split()[3], ln.split()[4]) for ln in members} == want


def test_the_protocol_can_be_turned_off(cluster_factory):
    from pylog.cli.admin_client import BrokerAdmin
    from pylog.protocol.api import ApiKey

    c = cluster_factory(1, overrides={**GROUPS, "group.coordinator.rebalance.protocols": "classic"})
    admin = BrokerAdmin(c.bootstrap)
    try:  # as Kafka: the APIs are left out of ApiVersions, so clients see a broker without KIP-848
        assert not admin.supports(ApiKey.ConsumerGroupHeartbeat)
        assert not admin.supports(ApiKey.ConsumerGroupDescribe)
        assert admin.supports(ApiKey.JoinGroup)
    finally:
        admin.close()


def _metadata_by_topic_id(bootstrap: str, topic: str) -> None:
    """Metadata v12 names a topic asked for by id alone (a KIP-848 assignment carries ids), and answers
    UNKNOWN_TOPIC_ID for an id no topic has."""
    import uuid

    from pylog.cli.admin_client import BrokerAdmin
    from pylog.protocol.api import ApiKey
    from pylog.protocol.errors import ErrorCode

    admin = BrokerAdmin(bootstrap)
    try:
        def ask(ids):
            return admin.client.call(ApiKey.Metadata, lambda cls, v: cls(
                topics=[cls.MetadataRequestTopic(topic_id=i, name=None) for i in ids], allow_auto_topic_creation=False,
                include_topic_authorized_operations=False), max_version=12).topics
        named = admin.client.call(ApiKey.Metadata, lambda cls, v: cls(
            topics=[cls.MetadataRequestTopic(name=topic)], allow_auto_topic_creation=False,
            include_topic_authorized_operations=False), max_version=12).topics
        tid = named[0].topic_id
        stranger = uuid.uuid4()
        got = {(t.topic_id, t.name, t.error_code, len(t.partitions)) for t in ask([tid, stranger])}
        assert got == {(tid, topic, 0, 6), (stranger, None, ErrorCode.UNKNOWN_TOPIC_ID, 0)}
    finally:
        admin.close()


def test_commits_of_a_non_member_and_of_a_transactional_member(cluster_factory):
    """Issue 27: librdkafka under group.protocol=consumer sends its own member id even before (or without) joining,
    with member epoch -1; and send_offsets_to_transaction sends the member's id and epoch in TxnOffsetCommit."""
    from confluent_kafka import Producer, TopicPartition

    from support.txn import TXN, read_all

    c = cluster_factory(1, overrides={**KIP848, **TXN})
    create_topic(c.bootstrap, "eos-in", partitions=2)
    create_topic(c.bootstrap, "eos-out", partitions=1)
    produce(c.bootstrap, "eos-in", [f"r{i}" for i in range(10)], 2)

    # assign() and commit, never subscribing: a simple group
    simple = _consumer(c.bootstrap, "simple-g")
    try:
        simple.assign([TopicPartition("eos-in", 0, 0)])
        assert [m.offset() for m in _poll_n(simple, 5)] == [0, 1, 2, 3, 4]
        simple.commit(offsets=[TopicPartition("eos-in", 0, 3, "meta")], asynchronous=False)
        back = simple.committed([TopicPartition("eos-in", 0)], timeout=30)
        assert (back[0].offset, back[0].metadata) == (3, "meta")
    finally:
        simple.close()  # auto commit (the default) stores the position, 5, on close
    assert committed(c.bootstrap, "simple-g") == {("eos-in", 0): 5}

    # consume-transform-produce: offsets committed inside the transaction, so auto commit is off (as Kafka's EOS
    # pattern and confluent's own example do: an automatic commit would not be part of the transaction)
    member = _consumer(c.bootstrap, "eos-g", **{"enable.auto.commit": False})
    producer = Producer({"bootstrap.servers": c.bootstrap, "transactional.id": "eos-app"})
    try:
        member.subscribe(["eos-in"])
        values = [m.value().decode() for m in _poll_n(member, 10)]
        producer.init_transactions(60)
        producer.begin_transaction()
        for v in values:
            producer.produce("eos-out", value=v.upper().encode())
        producer.send_offsets_to_transaction(member.position(member.assignment()),
                                             member.consumer_group_metadata(), 30)
        producer.commit_transaction(60)
    finally:
        member.close()
    assert committed(c.bootstrap, "eos-g") == {("eos-in", 0): 5, ("eos-in", 1): 5}
    assert sorted(read_all(c.bootstrap, {"eos-out": 1}, None, 10)) == sorted(v.upper().encode() for v in values)


def _poll_n(consumer, n: int, timeout: float = 60) -> list:
    out: list = []
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        m = consumer.poll(0.2)
        if m is not None and m.error() is None:
            out.append(m)
    assert len(out) == n, f"got {len(out)} of {n} records"
    return out
