"""perf.png: throughput and latency of the queue operations over time, fault windows shaded (Jepsen's perf
graphs). matplotlib is imported here only, with the Agg backend (no display)."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from pylog.chaos.jepsen.history import INVOKE, read_history

COLOURS = {"ok": "#2a9d3f", "info": "#e6a100", "fail": "#d62728"}
FAULT_COLOURS = ["#9ecae1", "#fdae6b", "#c7b9e2", "#fbb4c4", "#a1d99b", "#d9d9d9"]


def latencies(history: str | Path) -> list[tuple[float, float, str, str]]:
    """(completion time, latency s, completion type, f) of every completed send, poll and txn."""
    _, ops = read_history(history)
    invoked: dict[Any, dict] = {}
    out = []
    for op in ops:
        if op["type"] == INVOKE:
            invoked[op["process"]] = op
        elif op["process"] in invoked:
            inv = invoked.pop(op["process"])
            if inv["f"] in ("send", "poll", "txn") and not inv.get("final"):
                out.append((op["time"], op["time"] - inv["time"], op["type"], inv["f"]))
    return out


def plot_perf(history: str | Path, faults: Iterable[dict[str, Any]], png: str | Path, title: str = "") -> Path:
    """Draw the two panels (operations per second by outcome; latency by operation) into `png`."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = latencies(history)
    fig, (ax_t, ax_l) = plt.subplots(2, 1, figsize=(11, 6.5), sharex=True)
    buckets: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for t, _, type_, _ in points:
        buckets[type_][int(t)] += 1
    end = int(max((p[0] for p in points), default=1)) + 1
    for type_ in ("ok", "info", "fail"):
        ax_t.plot(range(end), [buckets[type_].get(s, 0) for s in range(end)], color=COLOURS[type_],
                  label=type_, linewidth=1.2)
    ax_t.set_ylabel("operations / s")
    for f, marker in (("send", "o"), ("poll", "s"), ("txn", "^")):
        for type_ in ("ok", "info", "fail"):
            sel = [(t, lat * 1000) for t, lat, ty, ff in points if ff == f and ty == type_]
            if sel:
                ax_l.scatter([s[0] for s in sel], [s[1] for s in sel], s=6, marker=marker, color=COLOURS[type_],
                             alpha=0.5, label=f"{f} {type_}", linewidths=0)
    ax_l.set_yscale("log")
    ax_l.set_ylabel("latency (ms)")
    ax_l.set_xlabel("seconds since the start of the run")
    _shade(faults, (ax_t, ax_l))
    ax_t.legend(loc="upper right", fontsize=8, ncol=4)
    ax_l.legend(loc="upper right", fontsize=7, ncol=3, markerscale=2)
    ax_t.set_title(title or "queue workload", fontsize=11)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)
    return Path(png)


def _shade(faults: Iterable[dict[str, Any]], axes: tuple) -> None:
    colour_of: dict[str, str] = {}
    for f in faults:
        kind = f.get("kind", "fault")
        colour = colour_of.setdefault(kind, FAULT_COLOURS[len(colour_of) % len(FAULT_COLOURS)])
        end = max(f.get("end", f["start"]), f["start"] + 0.3)  # a kill that restarts at once is still visible
        for ax in axes:
            ax.axvspan(f["start"], end, color=colour, alpha=0.35, linewidth=0)
        targets = ",".join(str(t) for t in f.get("targets", []))
        axes[0].annotate(f"{kind} {targets}".strip(), (f["start"], 1.0), xycoords=("data", "axes fraction"),
                         fontsize=6, rotation=90, va="top", ha="right", color="#444444")
