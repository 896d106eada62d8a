"""The verdict of a `scripts/chaos --groups` run, from what the members wrote and what the group committed.

Pure functions over the members' logs (see group_member.py), the committed offsets sampled during
the run, the producer's acknowledgements and the group's final description:

- every acknowledged record was processed at least once (the same record at its offset);
- no committed offset ever went backwards (sampled) and the final one is at least every
  acknowledged commit, and covers the whole partition;
- nothing was skipped: within one assignment a member processes offsets without gaps, and every
  offset below the final committed offset was processed by someone;
- the group ends Stable, with every live member in it and every partition assigned exactly once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from pylog.chaos.workload import Acked


@dataclass
class MemberLog:
    """One member's events: processed records, acknowledged commits, assignment stints."""

    name: str
    processed: list[tuple[int, int, int]] = field(default_factory=list)  # (partition, offset, seq)
    commits: list[tuple[int, int]] = field(default_factory=list)  # (partition, next offset)
    failed_commits: Counter = field(default_factory=Counter)  # by error name
    gaps: list[str] = field(default_factory=list)  # offsets jumped over within one assignment
    rewinds: int = 0  # an offset processed again within one assignment (a duplicate, not loss)


def parse_member(name: str, lines: Iterable[str]) -> MemberLog:
    """Read a member's log; a process start (`S`) or an assignment (`A`) begins a new stint per partition."""
    out = MemberLog(name)
    last: dict[int, int] = {}  # partition -> last offset processed in the current stint
    for line in lines:
        parts = line.split()
        if not parts:
            continue
        kind = parts[0]
        if kind in ("S", "A"):
            last.clear()
        elif kind == "P" and len(parts) == 4:
            p, o, seq = int(parts[1]), int(parts[2]), int(parts[3])
            out.processed.append((p, o, seq))
            prev = last.get(p)
            if prev is not None and o > prev + 1:
                out.gaps.append(f"{name}: partition {p} jumped from offset {prev} to {o}")
            elif prev is not None and o <= prev:
                out.rewinds += 1
            last[p] = o
        elif kind == "C" and len(parts) == 3:
            out.commits.append((int(parts[1]), int(parts[2])))
        elif kind == "F" and len(parts) >= 4:
            out.failed_commits[parts[3]] += 1
    return out


@dataclass
class GroupVerdict:
    """What the checks found; `findings` empty means the run passed."""

    findings: list[str] = field(default_factory=list)
    processed: int = 0
    duplicates: int = 0  # records processed more than once (at-least-once allows it)
    commits: int = 0
    failed_commits: Counter = field(default_factory=Counter)
    samples: int = 0  # committed-offset samples taken during the run

    @property
    def ok(self) -> bool:
        """No finding."""
        return not self.findings


def check_group(acked: Acked, members: list[MemberLog], history: dict[int, list[int]],
                final: dict[int, int], high_watermarks: dict[int, int],
                assignment: dict[str, list[int]] | None, state: str, live: int) -> GroupVerdict:
    """Every check of the module docstring; `assignment` is member -> partitions from the final describe."""
    v = GroupVerdict()
    seen: dict[tuple[int, int], set[int]] = {}
    counts: Counter = Counter()
    for m in members:
        v.commits += len(m.commits)
        v.failed_commits.update(m.failed_commits)
        v.findings += m.gaps[:5]
        for p, o, seq in m.processed:
            seen.setdefault((p, o), set()).add(seq)
            counts[(p, o)] += 1
    v.processed = len(counts)
    v.duplicates = sum(n - 1 for n in counts.values())
    for (p, o), seqs in sorted(seen.items()):
        if len(seqs) > 1:
            v.findings.append(f"partition {p} offset {o} was processed as different records {sorted(seqs)}")
    missing = [(p, o, seq) for p, acks in sorted(acked.by_partition.items()) for seq, o in acks
               if seq not in seen.get((p, o), ())]
    if missing:
        v.findings.append(f"{len(missing)} acknowledged records never processed, first (partition, offset, seq): "
                          f"{missing[:5]}")
    for p, samples in sorted(history.items()):
        v.samples += len(samples)
        drop = next((i for i in range(1, len(samples)) if samples[i] < samples[i - 1]), None)
        if drop is not None:
            v.findings.append(f"partition {p}: the committed offset went backwards from {samples[drop - 1]} "
                              f"to {samples[drop]}")
    for p, hw in sorted(high_watermarks.items()):
        done = final.get(p, -1)
        acked_commit = max((o for m in members for q, o in m.commits if q == p), default=-1)
        if done < acked_commit:
            v.findings.append(f"partition {p}: final committed offset {done} is below an acknowledged commit "
                              f"of {acked_commit}")
        if done != hw:
            v.findings.append(f"partition {p}: final committed offset {done}, high watermark {hw}")
        skipped = [o for o in range(max(done, 0)) if (p, o) not in seen]
        if skipped:
            v.findings.append(f"partition {p}: {len(skipped)} offsets below the committed {done} never processed, "
                              f"first {skipped[:5]}")
    v.findings += _final_group(assignment, state, live, sorted(high_watermarks))
    return v


def _final_group(assignment: dict[str, list[int]] | None, state: str, live: int, partitions: list[int]) -> list[str]:
    if assignment is None:
        return [f"the group could not be described at the end: {state}"]
    out = []
    if state != "STABLE":
        out.append(f"the group ended {state}, not Stable")
    if len(assignment) != live:
        out.append(f"the group ended with {len(assignment)} members, {live} members are running")
    owned = Counter(p for ps in assignment.values() for p in ps)
    if sorted(owned) != partitions or any(n != 1 for n in owned.values()):
        out.append(f"final assignment does not give every partition to exactly one member: {assignment}")
    return out
