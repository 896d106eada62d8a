"""Rebalance protocols as librdkafka drives them: incremental cooperative-sticky, and KIP-345 static members
restarting within their session timeout without a rebalance."""

from __future__ import annotations

import time

import pytest

from support.clients import create_topic, wait_for
from support.groups import GROUPS, describe

pytestmark = pytest.mark.integration


def _assigned(d) -> dict[str, set[tuple[str, int]]]:
    return {m.client_id: {(tp.topic, tp.partition) for tp in m.assignment.topic_partitions} for m in d.members}


def _poll_until(consumers, cond, timeout: float, what: str):
    def check():
        for cons in consumers:
            cons.poll(0.1)
        return cond()
    return wait_for(check, timeout, what)


def test_cooperative_sticky_second_member_takes_half_without_moving_the_rest(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "coop", partitions=4)
    conf = {"bootstrap.servers": c.bootstrap, "group.id": "coop-g", "partition.assignment.strategy": "cooperative-sticky"}
    a = ck.Consumer({**conf, "client.id": "a"})
    a.subscribe(["coop"])
    b = None
    try:
        _poll_until([a], lambda: len(a.assignment()) == 4, 60, "a to own all four partitions")
        before = {(tp.topic, tp.partition) for tp in a.assignment()}
        b = ck.Consumer({**conf, "client.id": "b"})
        b.subscribe(["coop"])

        def split():
            d = describe(c.bootstrap, "coop-g")
            got = _assigned(d)
            return d.state.name == "STABLE" and len(got) == 2 and all(len(v) == 2 for v in got.values()) and (d, got)
        d, got = _poll_until([a, b], split, 60, "a 2/2 split")
        assert d.partition_assignor == "cooperative-sticky"
        assert got["a"] | got["b"] == before and not got["a"] & got["b"]
        assert {(tp.topic, tp.partition) for tp in a.assignment()} == got["a"]  # a kept its half throughout
    finally:
        a.close()
        if b is not None:
            b.close()


def test_static_member_restart_within_session_timeout_causes_no_rebalance(cluster_factory):
    ck = pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "stat", partitions=2)
    events: list[str] = []
    base = {"bootstrap.servers": c.bootstrap, "group.id": "static-g"}
    dyn = ck.Consumer({**base, "client.id": "dynamic"})
    dyn.subscribe(["stat"], on_assign=lambda _c, ps: events.append("assign"),
                  on_revoke=lambda _c, ps: events.append("revoke"))
    s1 = ck.Consumer({**base, "client.id": "static", "group.instance.id": "instance-1"})
    s1.subscribe(["stat"])
    s2 = None
    try:
        def stable_pair():
            d = describe(c.bootstrap, "static-g")
            got = _assigned(d)
            # The client learns its share at a later poll than the broker settles: count events only
            # once the dynamic member itself holds its one partition.
            mine = len(dyn.assignment()) == 1 and events[-1:] == ["assign"]
            return d.state.name == "STABLE" and len(got) == 2 and all(got.values()) and mine and (d, got)
        d, got = _poll_until([dyn, s1], stable_pair, 60, "two assigned members")
        old_member = next(m.member_id for m in d.members if m.client_id == "static")
        assert next(m.group_instance_id for m in d.members if m.client_id == "static") == "instance-1"
        settled = len(events)
        s1.close()  # a static member sends no LeaveGroup: its session (45 s by default) keeps its place
        s2 = ck.Consumer({**base, "client.id": "static", "group.instance.id": "instance-1"})
        s2.subscribe(["stat"])
        _poll_until([dyn, s2], lambda: len(s2.assignment()) == 1, 30, "the restarted static member's partition")
        d2 = describe(c.bootstrap, "static-g")
        new_member = next(m.member_id for m in d2.members if m.client_id == "static")
        assert new_member != old_member and new_member.startswith("instance-1-")
        assert _assigned(d2) == got  # same partitions, same owners
        end = time.monotonic() + 2
        while time.monotonic() < end:
            dyn.poll(0.1)
        assert events[settled:] == []  # the other member never saw a rebalance
    finally:
        dyn.close()
        if s2 is not None:
            s2.close()
