"""The history of a queue run: Jepsen's operations as JSON lines, written while the run goes and read back.

One JSON object per line. The first line is a header, `{"type": "meta", "keys": [[topic, partition], ...],
"t0_unix": ..., ...}`: key k of every operation is the index of its (topic, partition) in that list.
Every other line is half of an operation, Jepsen's way:

    {"type": "invoke"|"ok"|"fail"|"info", "process": 3, "time": 12.345, "f": "send"|"poll"|"txn"|
     "assign"|"subscribe", "value": [...], "client": "idempotent", "index": 17, ...}

- `time` is seconds since the run's start (`t0_unix` in the header is that start on the wall clock, so a
  harness can place its fault windows on the same axis).
- `send`/`poll`/`txn` values are lists of micro-ops: `["send", k, v]` completes as `["send", k, [offset, v]]`
  (offset null when unknown); `["poll"]` completes as `["poll", {"k": [[offset, v], ...]}]` (JSON object keys
  are strings; `read_history` turns them back into ints).
- `assign`/`subscribe` values are the keys the process consumes from then on (replacing the previous set);
  `"seek_to_beginning": true` on an assign makes it read from the start.
- An operation may carry `"rebalance_log": [{"keys": [...]}]`, assignment changes seen while it ran (those keys
  are exempt from the internal poll checks), and `"error"`, why it did not end `ok`.
- Values are unique integers across the run, so a value names its writer.
- `:info` means the outcome is unknown (timeout, broker gone): the process that saw it is replaced by a new
  one with a new process number, as Jepsen's client crash does.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

INVOKE, OK, FAIL, INFO = "invoke", "ok", "fail", "info"
COMPLETIONS = (OK, FAIL, INFO)
SEND, POLL, TXN, ASSIGN, SUBSCRIBE = "send", "poll", "txn", "assign", "subscribe"


class HistoryWriter:
    """Appends operations to a JSON-lines file from many threads; every line is flushed as it is written."""

    def __init__(self, path: str | Path, keys: list[tuple[str, int]], **meta: Any) -> None:
        self.path = Path(path)
        self.t0 = time.monotonic()
        self._lock = threading.Lock()
        self._index = 0
        self._f: TextIO = open(self.path, "w", encoding="utf-8")
        self._write({"type": "meta", "keys": [list(k) for k in keys], "t0_unix": time.time(), **meta})

    def now(self) -> float:
        """Seconds since the run started (the history's time axis)."""
        return time.monotonic() - self.t0

    def _write(self, obj: dict[str, Any]) -> None:
        self._f.write(json.dumps(obj, separators=(",", ":")) + "\n")
        self._f.flush()

    def record(self, op: dict[str, Any]) -> dict[str, Any]:
        """Write one invocation or completion, stamping index and time; returns what was written."""
        with self._lock:
            out = {"index": self._index, "time": round(self.now(), 6), **op}
            self._index += 1
            self._write(out)
        return out

    def close(self) -> None:
        """Close the file (later records are an error)."""
        with self._lock:
            self._f.close()


def _decode(op: dict[str, Any]) -> dict[str, Any]:
    """Poll results' string keys back to ints."""
    value = op.get("value")
    if isinstance(value, list):
        for mop in value:
            if isinstance(mop, list) and len(mop) == 2 and mop[0] == POLL and isinstance(mop[1], dict):
                mop[1] = {int(k): [tuple(r) for r in recs] for k, recs in mop[1].items()}
    return op


def read_history(source: str | Path | Iterable[dict[str, Any] | str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(header, operations) from a history file, or from an iterable of lines or dicts (tests)."""
    lines: Iterable[dict[str, Any] | str]
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as f:
            lines = f.read().splitlines()
    else:
        lines = source
    header: dict[str, Any] = {}
    ops: list[dict[str, Any]] = []
    for n, line in enumerate(lines, 1):
        if isinstance(line, str):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"history line {n} is not JSON: {exc}") from None
        else:
            obj = json.loads(json.dumps(line))  # a deep copy with JSON's types, as from a file
        if obj.get("type") == "meta":
            header = obj
        elif obj.get("type") in (INVOKE, *COMPLETIONS):
            ops.append(_decode(obj))
    return header, ops


def pairs(ops: Iterable[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any] | None]]:
    """(invocation, completion) per operation in invocation order; completion None when it never completed."""
    open_by_process: dict[Any, dict[str, Any]] = {}
    done: list[list[Any]] = []
    for op in ops:
        if op["type"] == INVOKE:
            slot = [op, None]
            open_by_process[op["process"]] = slot  # type: ignore[assignment]
            done.append(slot)
        else:
            slot = open_by_process.pop(op["process"], None)  # type: ignore[assignment]
            if slot is not None:
                slot[1] = op
    for inv, comp in done:
        yield inv, comp
