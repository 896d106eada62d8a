"""The queue checker: Jepsen's analysis of a queue history (jepsen/tests/kafka.clj `analysis`), ported, pure.

Derived structures, as Jepsen builds them:
- version order per key: offset -> values, from every poll (pollers always see safe data, whatever their
  operation's outcome) and from the sends of operations that must have committed (ok, or info with a send some
  ok operation read). The index of an offset is its position among the known offsets of its key, so the gaps
  that transaction markers and aborted records leave are not skips.
- the writer of a value (values are unique), and the reads of each operation in the order it saw them.

The anomalies are listed and classified in classify.py; `Extras` carries pylog's checks that need more than
the history (the harness's replica comparison, final high watermarks, find-hanging output).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pylog.chaos.jepsen import classify
from pylog.chaos.jepsen.history import ASSIGN, FAIL, INFO, OK, POLL, SEND, SUBSCRIBE, TXN, pairs, read_history

Read = tuple[int, int, int]  # key, offset, value


@dataclass
class Extras:
    """What the harness knows beyond the history, for pylog's own checks (each optional)."""

    # replicas-diverged: per partition name, per replica, its batches below the high watermark (any comparable rows)
    replica_batches: dict[str, dict[int, list]] | None = None
    divergences: list[str] = field(default_factory=list)  # or the harness's own comparison, one line per partition
    # read-above-high-watermark: each key's final high watermark (key index, or (topic, partition))
    high_watermarks: dict[Any, int] | None = None
    hanging: list[str] = field(default_factory=list)  # hanging-transaction: find-hanging's lines


@dataclass
class Op:
    """One operation: its invocation and completion merged."""

    index: int
    process: int
    f: str
    type: str  # ok, fail, info (info also when it never completed)
    client: str
    sends: list[tuple[int, int, int | None]]  # key, value, offset
    reads: list[Read]
    via: str = ""  # the process's consumption mode when it ran
    end: int = 0  # completion index (history order)
    raw: dict = field(default_factory=dict)


@dataclass
class CheckResult:
    """The anomalies found, each case marked bad or allowed, and what the history held."""

    anomalies: dict[str, list[dict]] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)

    def count(self, name: str) -> int:
        """How many of an anomaly (for unseen: values)."""
        cases = self.anomalies.get(name, [])
        return sum(c["count"] for c in cases) if name == "unseen" else len(cases)

    def counts(self, bad: bool | None = None) -> dict[str, int]:
        """name -> count, of every case (bad None), of the bad ones (True) or of the allowed ones (False)."""
        out = {}
        for name, cases in self.anomalies.items():
            sel = [c for c in cases if bad is None or c["bad"] == bad]
            n = sum(c["count"] for c in sel) if name == "unseen" else len(sel)
            if n:
                out[name] = n
        return out

    @property
    def valid(self) -> bool:
        """No bad anomaly."""
        return not self.counts(bad=True)

    def to_json(self, max_cases: int = 50) -> dict[str, Any]:
        """result.json's content: verdict, counts, up to `max_cases` cases per anomaly, stats."""
        return {"valid": self.valid, "bad": self.counts(True), "allowed": self.counts(False),
                "anomalies": {n: cs[:max_cases] for n, cs in self.anomalies.items() if cs}, "stats": self.stats}

    def text(self) -> str:
        """A few lines for a person: the verdict, the counts and one example of each bad anomaly."""
        s = self.stats
        lines = [f"queue checker: {'VALID' if self.valid else 'INVALID'}; {s.get('ops', 0)} operations "
                 f"({s.get('by_type', {})}), {s.get('values_sent', 0)} values sent, {s.get('values_read', 0)} read",
                 f"bad anomalies: {self.counts(True) or 'none'}",
                 f"allowed (Kafka's normal behaviour): {self.counts(False) or 'none'}"]
        for name, cases in self.anomalies.items():
            bad = [c for c in cases if c["bad"]]
            if bad:
                lines.append(f"  e.g. {name}: {json.dumps(bad[0], default=str)[:400]}")
        return "\n".join(lines)


def _ops(raw_ops: list[dict]) -> list[Op]:
    """Merge invocations with completions; an operation that never completed is info."""
    out = []
    for inv, comp in pairs(raw_ops):
        done = comp or {"type": INFO, "index": 1 << 62}
        data = inv["f"] in (SEND, POLL, TXN)
        value = done.get("value") if done.get("value") is not None else inv.get("value")
        sends = [[m[1], m[2], None] for m in (inv.get("value") or []) if data and m[0] == SEND]
        reads: list[Read] = []
        i = 0
        for mop in (value or []) if data else []:
            if mop[0] == SEND:
                if isinstance(mop[2], list) and i < len(sends):
                    sends[i][2] = mop[2][0]
                i += 1
            elif mop[0] == POLL and len(mop) > 1:
                for k, recs in mop[1].items():
                    reads += [(int(k), int(o), int(v)) for o, v in recs]
        out.append(Op(inv["index"], inv["process"], inv["f"], done["type"], inv.get("client", ""),
                      [tuple(s) for s in sends], reads, end=done["index"], raw={**inv, **{"completion": done}}))
    return out


def _mark_via(ops: list[Op]) -> None:
    """Each operation learns its process's consumption mode (set by its latest assign/subscribe)."""
    mode: dict[int, str] = {}
    for op in sorted(ops, key=lambda o: o.index):
        if op.f in (ASSIGN, SUBSCRIBE) and op.type != FAIL:
            mode[op.process] = op.f
        op.via = mode.get(op.process, "")


class _Analysis:
    """The derived structures of one history."""

    def __init__(self, ops: list[Op]) -> None:
        self.ops = ops
        self.writer: dict[tuple[int, int], Op] = {(k, v): op for op in ops for k, v, _ in op.sends}
        read_by_ok = {(k, v) for op in ops if op.type == OK for k, _, v in op.reads}
        self.committed = {op.index for op in ops if op.type == OK or
                          (op.type == INFO and any((k, v) in read_by_ok for k, v, _ in op.sends))}
        offsets: dict[int, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
        for op in ops:
            for k, o, v in op.reads:
                offsets[k][o].add(v)
            if op.index in self.committed:
                for k, v, o in op.sends:
                    if o is not None and o >= 0:
                        offsets[k][o].add(v)
        self.offsets = offsets
        self.index: dict[int, dict[int, int]] = {k: {o: i for i, o in enumerate(sorted(offs))}
                                                 for k, offs in offsets.items()}
        self.value_indices: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        for k, offs in offsets.items():
            for o, vs in offs.items():
                for v in vs:
                    self.value_indices[k][v].append(self.index[k][o])
        self.read_values: dict[int, set[int]] = defaultdict(set)
        for op in ops:
            for k, _, v in op.reads:
                self.read_values[k].add(v)

    def by_index(self, k: int, lo: int, hi: int) -> list[int]:
        """Values at indices lo..hi-1 of key k."""
        offs = sorted(self.offsets[k])[lo:hi]
        return [v for o in offs for v in sorted(self.offsets[k][o])]


def _offset_anomalies(a: _Analysis, out: dict[str, list[dict]]) -> None:
    for k, offs in sorted(a.offsets.items()):
        for o, vs in sorted(offs.items()):
            if len(vs) > 1:
                out["inconsistent-offsets"].append({"key": k, "offset": o, "index": a.index[k][o],
                                                    "values": sorted(vs)})
        for v, idxs in sorted(a.value_indices[k].items()):
            if len(idxs) > 1:
                w = a.writer.get((k, v))
                name = "duplicate-plain" if w is not None and w.client == "plain" else "duplicate"
                inv = {i: o for o, i in a.index[k].items()}
                out[name].append({"key": k, "value": v, "count": len(idxs), "offsets": sorted(inv[i] for i in idxs),
                                  "writer": w.index if w else None})


def _read_anomalies(a: _Analysis, out: dict[str, list[dict]]) -> None:
    for op in a.ops:
        for k, o, v in op.reads:
            w = a.writer.get((k, v))
            if w is None:
                continue
            if op.type == OK and w.type == FAIL:
                out["G1a"].append({"key": k, "value": v, "offset": o, "writer": w.index, "reader": op.index})
            if w.index == op.index:
                out["precommitted-read"].append({"key": k, "value": v, "offset": o, "op": op.index})


def _lost_and_unseen(a: _Analysis, out: dict[str, list[dict]]) -> None:
    for k in sorted(a.offsets):
        firsts = [min(a.value_indices[k][v]) for op in a.ops if op.type == OK for kk, _, v in op.reads if kk == k]
        bound = max(firsts, default=-1)
        seen: set[int] = set()
        for i, v in enumerate(a.by_index(k, 0, bound + 1)):
            w = a.writer.get((k, v))
            if v in seen or v in a.read_values[k] or w is None or w.index not in a.committed:
                continue
            seen.add(v)
            if max(a.value_indices[k][v]) <= bound:
                out["lost-write"].append({"key": k, "value": v, "index": min(a.value_indices[k][v]),
                                          "max-read-index": bound, "writer": w.index})
    unseen: dict[int, list[int]] = defaultdict(list)
    for op in a.ops:
        if op.type == OK:
            for k, v, _ in op.sends:
                if v not in a.read_values[k]:
                    unseen[k].append(v)
    for k, vs in sorted(unseen.items()):
        out["unseen"].append({"key": k, "count": len(vs), "values": sorted(vs)[:20]})


def _step(a: _Analysis, k: int, prev: int, cur: int) -> tuple[int, list[int]]:
    return cur - prev, a.by_index(k, prev + 1, cur) if cur - prev > 1 else []


def _poll_order(a: _Analysis, out: dict[str, list[dict]]) -> None:
    """poll-skip / nonmonotonic-poll across a process's operations, int-* inside one operation."""
    last: dict[int, dict[int, int]] = defaultdict(dict)
    for op in sorted(a.ops, key=lambda o: o.end):
        if op.f in (ASSIGN, SUBSCRIBE) and op.type != FAIL:
            seek = op.raw.get("seek_to_beginning") or op.raw["completion"].get("seek_to_beginning")
            keep = set() if seek else set(op.raw.get("value") or [])
            last[op.process] = {k: i for k, i in last[op.process].items() if k in keep}
            continue
        if op.type != OK or not op.reads:
            continue
        exempt = {k for entry in op.raw["completion"].get("rebalance_log") or [] for k in entry.get("keys", [])}
        mine: dict[int, int] = {}
        for k, o, v in op.reads:
            i = a.index[k][o]
            if k in mine:
                delta, skipped = _step(a, k, mine[k], i)
                if k not in exempt and delta != 1:
                    name = "int-poll-skip" if delta > 1 else "int-nonmonotonic-poll"
                    out[name].append({"key": k, "delta": delta, "skipped": skipped[:20], "op": op.index,
                                      "process": op.process})
            elif k in last[op.process]:
                delta, skipped = _step(a, k, last[op.process][k], i)
                if delta != 1:
                    name = "poll-skip" if delta > 1 else "nonmonotonic-poll"
                    out[name].append({"key": k, "delta": delta, "skipped": skipped[:20], "op": op.index,
                                      "process": op.process, "via": op.via})
            mine[k] = i
        last[op.process].update(mine)


def _send_order(a: _Analysis, out: dict[str, list[dict]]) -> None:
    """int-send-skip / int-nonmonotonic-send inside an operation, nonmonotonic-send across a process's."""
    last: dict[int, dict[int, int]] = defaultdict(dict)
    for op in sorted(a.ops, key=lambda o: o.end):
        if op.index not in a.committed:
            continue
        mine: dict[int, int] = {}
        for k, v, o in op.sends:
            if o is None or o not in a.index.get(k, {}):
                continue
            i = a.index[k][o]
            if k in mine:
                delta, skipped = _step(a, k, mine[k], i)
                if delta != 1:
                    name = "int-send-skip" if delta > 1 else "int-nonmonotonic-send"
                    out[name].append({"key": k, "delta": delta, "skipped": skipped[:20], "op": op.index})
            elif k in last[op.process] and i <= last[op.process][k]:
                out["nonmonotonic-send"].append({"key": k, "delta": i - last[op.process][k], "op": op.index,
                                                 "process": op.process})
            mine[k] = i
        last[op.process].update(mine)


def _extras(a: _Analysis, header: dict, extras: Extras, out: dict[str, list[dict]]) -> None:
    for line in extras.divergences:
        out["replicas-diverged"].append({"detail": line})
    for name, replicas in sorted((extras.replica_batches or {}).items()):
        views = sorted(replicas.items())
        ref_id, ref = views[0] if views else (None, [])
        for rid, rows in views[1:]:
            if [list(r) for r in rows] != [list(r) for r in ref]:
                i = next((i for i, (x, y) in enumerate(zip(rows, ref)) if list(x) != list(y)), min(len(rows), len(ref)))
                out["replicas-diverged"].append({"partition": name, "replicas": [ref_id, rid], "batch": i})
    keys = [tuple(k) for k in header.get("keys", [])]
    hws = {}
    for key, hw in (extras.high_watermarks or {}).items():
        k = keys.index(tuple(key)) if isinstance(key, (tuple, list)) else int(key)
        hws[k] = hw
    for op in a.ops:
        for k, o, v in op.reads:
            if k in hws and o >= hws[k]:
                out["read-above-high-watermark"].append({"key": k, "offset": o, "value": v, "high-watermark": hws[k],
                                                         "op": op.index})
    for line in extras.hanging:
        out["hanging-transaction"].append({"detail": line})


def check(history: str | Path | Iterable[dict | str], extras: Extras | None = None) -> CheckResult:
    """Analyse a queue history (a path, or JSON lines / dicts) and return every anomaly, classified."""
    header, raw = read_history(history)
    ops = _ops(raw)
    _mark_via(ops)
    a = _Analysis(ops)
    found: dict[str, list[dict]] = defaultdict(list)
    _offset_anomalies(a, found)
    _read_anomalies(a, found)
    _lost_and_unseen(a, found)
    _poll_order(a, found)
    _send_order(a, found)
    _extras(a, header, extras or Extras(), found)
    result = CheckResult()
    for name in classify.ANOMALIES:
        cases = found.get(name, [])
        for c in cases:
            c["bad"] = classify.is_bad(name, c)
        result.anomalies[name] = cases
    by_type: dict[str, int] = defaultdict(int)
    for op in ops:
        by_type[op.type] += 1
    result.stats = {"ops": len(ops), "by_type": dict(by_type), "keys": len(a.offsets),
                    "values_sent": sum(len(op.sends) for op in ops),
                    "values_acked": sum(len(op.sends) for op in ops if op.type == OK),
                    "values_read": sum(len(vs) for vs in a.read_values.values()),
                    "processes": len({op.process for op in ops})}
    return result
