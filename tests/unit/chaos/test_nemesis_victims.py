"""Every variant of the pause, partition and link nemeses picks its victims from the roles it names."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from pylog.chaos.nemesis import link, partition, pause
from pylog.chaos.nemesis.base import Context


class Roles:
    """What the fault driver would say: broker 1 leads, broker 2 is the controller."""

    def states(self):
        return {0: SimpleNamespace(leader=1)}

    def controller(self):
        return 2


def context() -> Context:
    procs = {b: SimpleNamespace(pid=100 + b) for b in range(3)}
    net = SimpleNamespace(names=["zk1", "b0", "b1", "b2", "cl"], nodes={})
    return Context(net, SimpleNamespace(brokers=procs, bootstrap=""), Roles(), {"zk1": SimpleNamespace(pid=99)},
                   3000, 0.0)


@pytest.mark.parametrize("role,expected", [("leader", ("b1", 101)), ("controller", ("b2", 102)), ("zk", ("zk1", 99))])
def test_pause_victims_by_role(role, expected):
    assert pause.victim(context(), role, random.Random(1)) == expected


@pytest.mark.parametrize("kind", partition.KINDS)
def test_every_partition_variant_has_a_grudge_among_the_run_s_nodes(kind):
    ctx = context()
    grudge, _ = partition.grudge_for(ctx, kind, random.Random(3))
    assert grudge and all(n in ctx.net.names and others <= set(ctx.net.names) for n, others in grudge.items())
    if kind == "leader-zk":
        assert grudge == {"b1": {"zk1"}, "zk1": {"b1"}}
    if kind == "controller-zk":
        assert grudge == {"b2": {"zk1"}, "zk1": {"b2"}}


def test_a_link_is_a_broker_and_another_node():
    a, b = link.pick_link(context(), random.Random(5))
    assert a.startswith("b") and b != a and b in context().net.names
