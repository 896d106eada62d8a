"""Three confluent-kafka group members over 12 partitions, committing after processing: one is kill -9'd and
another joins. Every record is processed, and the only records processed twice are ones whose commit never
happened (what the killed member processed after its last commit, or a commit a rebalance refused)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from support.clients import create_topic, wait_for
from support.groups import GROUPS, describe, produce

pytestmark = pytest.mark.integration

WORKER = Path(__file__).resolve().parents[2] / "support" / "group_worker.py"
RECORDS = 1200


def _lines(path: Path) -> list[tuple[str, int, int]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.append((parts[0], int(parts[1]), int(parts[2])))
    return out


def test_member_killed_and_member_joining_lose_nothing(cluster_factory, tmp_path):
    pytest.importorskip("confluent_kafka")
    c = cluster_factory(1, overrides=GROUPS)
    create_topic(c.bootstrap, "work", partitions=12)
    procs: dict[str, subprocess.Popen] = {}

    def start(name: str) -> None:
        # -P: tests/support (the script's folder) must not shadow the standard library (its inspect.py).
        with open(tmp_path / f"{name}.err", "w") as err:
            procs[name] = subprocess.Popen([sys.executable, "-P", str(WORKER), c.bootstrap, "workers", "work",
                                            str(tmp_path / f"{name}.log"), name], env={**os.environ},
                                           stdout=subprocess.DEVNULL, stderr=err)

    def processed() -> set[tuple[int, int]]:
        return {(p, o) for f in tmp_path.glob("*.log") for kind, p, o in _lines(f) if kind == "P"}

    try:
        for name in ("a", "b", "c"):
            start(name)

        def split_three_ways():
            d = describe(c.bootstrap, "workers")
            return d.state.name == "STABLE" and sorted(len(m.assignment.topic_partitions) for m in d.members) == [4] * 3
        wait_for(split_three_ways, 60, "three members with four partitions each")
        # Produced only now, so every member has records of its own to work through when a is killed.
        produce(c.bootstrap, "work", [f"w{i}" for i in range(RECORDS)], 12)
        wait_for(lambda: len([x for x in _lines(tmp_path / "a.log") if x[0] == "P"]) >= 20, 60,
                 "member a to process some records")
        procs["a"].kill()  # kill -9: no LeaveGroup, its partitions come back after its session timeout
        procs["a"].wait(10)
        start("d")
        wait_for(lambda: len(processed()) == RECORDS, 120, "every record processed")
        members = {m.client_id: len(m.assignment.topic_partitions) for m in describe(c.bootstrap, "workers").members}
        assert members == {"b": 4, "c": 4, "d": 4}  # the killed member is gone, the new one took its share
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait(10)
    counts: Counter = Counter()
    uncommitted: set[tuple[int, int]] = set()  # processed by a member that never committed it
    for f in sorted(tmp_path.glob("*.log")):
        events = _lines(f)
        done = {(p, o) for kind, p, o in events if kind == "P"}
        counts.update((p, o) for kind, p, o in events if kind == "P")
        uncommitted |= done - {(p, o) for kind, p, o in events if kind == "C"}
    assert set(counts) == {(p, o) for p in range(12) for o in range(RECORDS // 12)}
    twice = {rec for rec, n in counts.items() if n > 1}
    assert twice <= uncommitted, sorted(twice - uncommitted)[:20]
    assert all(n <= 2 for n in counts.values())
