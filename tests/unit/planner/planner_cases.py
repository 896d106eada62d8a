"""Helpers shared by the planner tests: random clusters, hypothesis strategies and checkers."""
from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import contextmanager

from hypothesis import assume, strategies as st

from pylog.planner import exact_racks
from pylog.planner.assignment import assign_replicas_to_brokers
from pylog.planner.model import Broker, Partition, Snapshot


def kafka_cluster(n_brokers: int, topics: dict[str, int], rf: int, seed: int = 0, racks: int = 0,
                  sizes: bool = False) -> Snapshot:
    """A snapshot laid out the way Kafka creates topics (round-robin, random start per topic)."""
    rng = random.Random(seed)
    brokers = [Broker(b, f"r{b % racks}" if racks else None) for b in range(n_brokers)]
    meta = [(b.id, b.rack) for b in brokers]
    parts = []
    for topic, n in sorted(topics.items()):
        for p, reps in assign_replicas_to_brokers(meta, n, rf, rng=rng).items():
            parts.append(Partition(topic, p, reps, size_bytes=rng.randrange(1, 10_000) if sizes else None))
    return Snapshot(brokers, parts)


@contextmanager
def greedy_only() -> Iterator[None]:
    """Plan as selections above the exact limit are planned (rack flow, greedy dealing: no exact phase A)."""
    saved = exact_racks.EXACT_WORK
    exact_racks.EXACT_WORK = -1
    try:
        yield
    finally:
        exact_racks.EXACT_WORK = saved


def check_constraints(snapshot: Snapshot, plan, targets: list[int], racks: dict[int, str | None]) -> None:
    """Hard constraints every plan must meet."""
    n_racks = len({racks[b] for b in targets if racks.get(b) is not None}) or 1
    for p in snapshot.partitions:
        if (p.topic, p.partition) not in plan.proposed:
            continue
        new = plan.proposed[(p.topic, p.partition)]
        assert len(new) == len(p.replicas), "replication factor changed"
        assert len(set(new)) == len(new), f"duplicate broker in {new}"
        assert set(new) <= set(targets), f"{new} uses a broker outside the target set"
        if n_racks > 1:
            assert len({racks[b] for b in new}) >= min(len(new), n_racks), f"{new} spans too few racks"


def spreads(plan, targets: list[int]) -> tuple[int, int, int, int]:
    """(replica spread, worst topic replica spread, leader spread, worst topic leader spread) over targets."""
    reps = {b: 0 for b in targets}
    leads = {b: 0 for b in targets}
    per_topic: dict[str, tuple[dict[int, int], dict[int, int]]] = {}
    for (topic, _), new in plan.proposed.items():
        t_reps, t_leads = per_topic.setdefault(topic, ({b: 0 for b in targets}, {b: 0 for b in targets}))
        for j, b in enumerate(new):
            reps[b] += 1
            t_reps[b] += 1
            if j == 0:
                leads[b] += 1
                t_leads[b] += 1

    def spread(counts: dict[int, int]) -> int:
        return max(counts.values()) - min(counts.values())
    return (spread(reps), max(spread(r) for r, _ in per_topic.values()), spread(leads),
            max(spread(l) for _, l in per_topic.values()))


LAYOUTS = ("no racks", "kafka racks", "any racks")


@st.composite
def clusters(draw, layout: str | None = None, change: str | None = None, max_brokers: int = 8):
    """(snapshot, target broker ids, racks of new brokers, all racks) for small random clusters.

    layout: "no racks"; "kafka racks" (brokers on racks round robin, topics laid out by Kafka's rack-aware
    assignment); "any racks" (random racks, random replicas: rack rule broken, racks of any size).
    change: brokers "add"ed, "remove"d or "both".
    """
    layout = layout or draw(st.sampled_from(LAYOUTS))
    change = change or draw(st.sampled_from(("add", "remove", "both")))
    n = draw(st.integers(3, max_brokers))
    n_racks = 0 if layout == "no racks" else draw(st.integers(2, 3))
    if layout == "kafka racks":
        rack = {b: f"r{b % n_racks}" for b in range(n)}
    elif layout == "any racks":
        rack = {b: f"r{draw(st.integers(0, n_racks - 1))}" for b in range(n)}
    else:
        rack = {b: None for b in range(n)}
    parts = []
    for t in range(draw(st.integers(1, 3))):
        count = draw(st.integers(1, 8))
        if layout == "kafka racks":
            rf = draw(st.integers(1, min(3, n, len(set(rack.values())))))
            meta = [(b, rack[b]) for b in range(n)]
            layout_rng = random.Random(draw(st.integers(0, 1 << 16)))
            for p, reps in assign_replicas_to_brokers(meta, count, rf, rng=layout_rng).items():
                parts.append(Partition(f"t{t}", p, reps, size_bytes=draw(st.integers(0, 1000))))
        else:
            rf = draw(st.integers(1, min(3, n)))
            for p in range(count):
                reps = list(draw(st.permutations(range(n))))[:rf]
                parts.append(Partition(f"t{t}", p, reps, size_bytes=draw(st.integers(0, 1000))))
    targets = list(range(n))
    new_racks: dict[int, str] = {}
    if change in ("remove", "both"):
        for b in draw(st.lists(st.sampled_from(range(n)), min_size=1, max_size=2, unique=True)):
            targets.remove(b)
    if change in ("add", "both"):
        for b in range(n, n + draw(st.integers(1, 3))):
            targets.append(b)
            if n_racks:
                new_racks[b] = f"r{b % n_racks}" if layout == "kafka racks" else f"r{draw(st.integers(0, n_racks - 1))}"
    assume(len(targets) >= max(len(p.replicas) for p in parts))
    all_racks = dict(rack)
    all_racks.update(new_racks)
    return Snapshot([Broker(b, rack[b]) for b in range(n)], parts), targets, new_racks, all_racks
