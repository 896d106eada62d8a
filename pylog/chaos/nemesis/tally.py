"""The long run's table: `python -m pylog.chaos.nemesis.tally OUT/runs.jsonl` (written by scripts/chaos-long).

Prints, as Markdown, one row per run (command, faults, operations, anomalies, result) and the totals: faults by
nemesis and by variant, operations by workload, anomalies by name (bad ones marked), runs passed.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path


def operations(run: dict) -> tuple[str, int]:
    """What the run's workload did, as (unit, count)."""
    args = run.get("args", "")
    if "--workload queue" in args:
        return "operations", run.get("ops", 0)
    if "--workload txn" in args:
        return "transactions committed", run.get("committed", 0)
    if "--workload ctp" in args:
        return "records transformed exactly once", run.get("outputs", 0)
    if "--workload groups" in args:
        return "records processed", run.get("processed", 0)
    return "records acked", run.get("acked", 0)


def anomalies(run: dict) -> tuple[Counter, Counter]:
    """(every anomaly by name, the bad ones) of one run; the acks/txn/groups/ctp checks' findings count as bad."""
    every, bad = Counter(run.get("anomalies") or {}), Counter(run.get("bad") or {})
    if run.get("inversions"):  # the acks producer is not idempotent: allowed (pylog/chaos/verify.py)
        every["ack-order-inversion"] += run["inversions"]
    for name in ("lost", "phantoms"):
        if run.get(name):
            every[name] += run[name]
            bad[name] += run[name]
    for finding in run.get("findings", []) + run.get("checks", []):
        name = finding.split(":", 1)[0]
        every[name] += 1
        bad[name] += 1
    if "error" in run:
        every["no result"] += 1
        bad["no result"] += 1
    return every, bad


def table(runs: list[dict]) -> str:
    """The Markdown of the runs and their totals."""
    lines = ["| command (`scripts/chaos ...`) | faults | operations | anomalies (bad in bold) | result |",
             "|---|---|---|---|---|"]
    by_nemesis, by_variant, ops, every, bad = Counter(), Counter(), Counter(), Counter(), Counter()
    heal: dict[str, list[float]] = {}  # nemesis -> seconds until healthy again after each of its faults
    passed = 0
    for run in runs:
        kinds = [e["kind"] for e in run.get("timeline", [])]
        for e in run.get("timeline", []):
            heal.setdefault(e["kind"].split(":")[0], []).append(e.get("heal_s", 0.0))
        by_variant.update(kinds)
        by_nemesis.update(k.split(":")[0] for k in kinds)
        unit, n = operations(run)
        ops[unit] += n
        e, b = anomalies(run)
        every.update(e)
        bad.update(b)
        passed += bool(run.get("ok"))
        shown = ", ".join(f"**{k} {v}**" if k in b else f"{k} {v}" for k, v in sorted(e.items())) or "none"
        members = f" (+{run['member_kills']} member kills)" if run.get("member_kills") else ""
        lines.append(f"| `{run.get('args', '')}` | {len(kinds)}{members} | {n:,} {unit} | {shown} | "
                     f"{'PASS' if run.get('ok') else 'FAIL'} ({run.get('seconds', 0):.0f} s) |")
    total = sum(by_nemesis.values())
    kills = sum(run.get("member_kills", 0) for run in runs)
    lines += ["", f"Runs: {len(runs)}, passed {passed}. Faults: {total}"
              + (f" (and {kills} kill -9s of group members)." if kills else ".")]
    lines.append("Faults by nemesis: " + ", ".join(f"{k} {v}" for k, v in by_nemesis.most_common()) + ".")
    lines.append("Faults by variant: " + ", ".join(f"{k} {v}" for k, v in sorted(by_variant.items())) + ".")
    lines.append("Healthy again after (median / max seconds): " + ", ".join(
        f"{k} {sorted(v)[len(v) // 2]:.1f} / {max(v):.1f}" for k, v in sorted(heal.items())) + ".")
    lines.append("Operations: " + ", ".join(f"{v:,} {k}" for k, v in ops.items()) + ".")
    lines.append("Anomalies by name: " + (", ".join(f"{k} {v}" + (" (bad)" if k in bad else " (allowed)")
                                                   for k, v in sorted(every.items())) or "none") + ".")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """Print the table of a runs.jsonl."""
    runs = [json.loads(line) for line in Path(argv[0]).read_text().splitlines() if line.strip()]
    print(table(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
