"""The run folder: history.jsonl, faults.jsonl, result.json, summary.txt and perf.png."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Iterable

from pylog.chaos.jepsen.checker import CheckResult
from pylog.chaos.jepsen.plot import plot_perf


def write_run_folder(folder: str | Path, history_path: str | Path, faults: Iterable[dict[str, Any]],
                     result: CheckResult, title: str = "", summary: str = "") -> dict[str, Path]:
    """Write the run folder (copying the history in if it lives elsewhere); returns name -> path.

    `faults`: the harness's fault timeline, `{"start": s, "end": s, "kind": str, "targets": [...]}` each, in
    seconds on the history's time axis (see history.py's header `t0_unix`). `summary` replaces the checker's
    text in summary.txt (a harness's fuller report)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in ("history.jsonl", "faults.jsonl", "result.json", "summary.txt",
                                           "perf.png")}
    if Path(history_path).resolve() != paths["history.jsonl"].resolve():
        shutil.copyfile(history_path, paths["history.jsonl"])
    faults = list(faults)
    paths["faults.jsonl"].write_text("".join(json.dumps(f) + "\n" for f in faults))
    paths["result.json"].write_text(json.dumps(result.to_json(), indent=1, default=str) + "\n")
    paths["summary.txt"].write_text((summary or result.text()) + "\n")
    plot_perf(paths["history.jsonl"], faults, paths["perf.png"], title)
    return paths
