"""The run folder: history.jsonl, faults.jsonl, result.json, summary.txt and perf.png."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from pylog.chaos.jepsen.checker import CheckResult


def write_run_folder(folder: str | Path, history_path: str | Path, faults: Iterable[dict[str, Any]],
                     result: CheckResult, title: str = "") -> dict[str, Path]:
    """Write the run folder (copying the history in if it lives elsewhere); returns name -> path.

    `faults`: the harness's fault timeline, `{"start": s, "end": s, "kind": str, "targets": [...]}` each, in
    seconds on the history's time axis (see history.py's header `t0_unix`)."""
    raise NotImplementedError("the run folder writer is being written (interface first)")
