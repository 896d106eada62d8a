"""The queue run folder (pylog/chaos/jepsen/folder.py): every file written, the history copied in, the fault
timeline kept as given, the result as JSON and a PNG drawn from a synthetic history."""

from __future__ import annotations

import json

from pylog.chaos.jepsen import HistoryWriter, check, write_run_folder
from pylog.chaos.jepsen.plot import latencies


def _history(path):
    w = HistoryWriter(path, keys=[("t", 0)])
    for v in range(1, 40):
        w.record({"type": "invoke", "process": 0, "f": "send", "value": [["send", 0, v]], "client": "idempotent"})
        w.record({"type": "ok", "process": 0, "f": "send", "value": [["send", 0, [v - 1, v]]], "client": "idempotent"})
    w.record({"type": "invoke", "process": 1, "f": "poll", "value": [["poll"]]})
    w.record({"type": "info", "process": 1, "f": "poll", "value": None, "error": "timeout"})
    w.record({"type": "invoke", "process": 2, "f": "poll", "value": [["poll"]], "final": True})
    w.record({"type": "ok", "process": 2, "f": "poll", "value": [["poll", {0: [[v - 1, v] for v in range(1, 40)]}]]})
    w.close()


def test_the_run_folder_holds_history_timeline_result_summary_and_graph(tmp_path):
    _history(tmp_path / "h.jsonl")
    result = check(tmp_path / "h.jsonl")
    faults = [{"start": 0.001, "end": 0.002, "kind": "kill-leader", "targets": [1]}]
    paths = write_run_folder(tmp_path / "run", tmp_path / "h.jsonl", faults, result, title="t")
    assert sorted(p.name for p in (tmp_path / "run").iterdir()) == ["faults.jsonl", "history.jsonl", "perf.png",
                                                                  "result.json", "summary.txt"]
    assert paths["history.jsonl"].read_text() == (tmp_path / "h.jsonl").read_text()
    assert [json.loads(line) for line in paths["faults.jsonl"].read_text().splitlines()] == faults
    assert json.loads(paths["result.json"].read_text())["valid"] is True
    assert paths["summary.txt"].read_text().startswith("queue checker: VALID")
    assert paths["perf.png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and paths["perf.png"].stat().st_size > 10_000
    # the graph plots the run's operations, not the final drain's
    lat = latencies(tmp_path / "h.jsonl")
    assert len(lat) == 40 and {(ty, f) for _, _, ty, f in lat} == {("ok", "send"), ("info", "poll")}
