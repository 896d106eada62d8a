"""Jepsen's Kafka `queue` workload and its checker, ported (issue 30).

The public interface, stable for harnesses (scripts/chaos --workload queue, the network-namespace nemeses):

- `QueueConfig` + `QueueWorkload(cfg).start()` ... `.stop()` (or `run_queue(cfg, stop_event)`, blocking): client
  processes (threads) do random sends, polls and transactions against `cfg.bootstrap` and record every
  invocation and completion in `cfg.history_path` as JSON lines (format: `history.py`). Producers are
  confluent-kafka at its defaults (plain, idempotent, transactional) and kafka-python's at its defaults; consumers
  subscribe in a group or assign.
  A timeout or a dead broker completes an operation as `info` (the process is replaced), never hangs it. The
  run ends at `cfg.duration`, after `cfg.max_ops`, or when the stop event is set; `stop()` then drains: a fresh
  consumer assigned every key from the beginning polls until every acknowledged offset was read (or
  `cfg.drain_timeout`), as Jepsen's final phase does. Run it after the faults healed.
- `check(history, extras)`: pure; reads a history (path, lines or dicts) and returns a `CheckResult` with
  Jepsen's anomaly names and counts (`lost-write`, `duplicate`, `G1a`, `inconsistent-offsets`, `poll-skip`,
  `int-poll-skip`, `nonmonotonic-poll`, `int-nonmonotonic-poll`, `int-send-skip`, `int-nonmonotonic-send`,
  `nonmonotonic-send`, `precommitted-read`, `unseen`) plus pylog's (`replicas-diverged`,
  `read-above-high-watermark`, `hanging-transaction`, from `Extras` the harness supplies), each case
  classified as bad (a safety violation) or allowed (the protocol's normal behaviour), as Jepsen's
  `allowed-error-types` does (see `classify.py`).
- `write_run_folder(folder, history_path, faults, result)`: the run folder: history.jsonl, faults.jsonl (the
  harness's fault timeline, one `{"start", "end", "kind", "targets"}` per line, seconds on the history's time
  axis), result.json, summary.txt and perf.png (throughput and latency over time, fault windows shaded).
"""

from pylog.chaos.jepsen.checker import CheckResult, Extras, check
from pylog.chaos.jepsen.classify import ALWAYS_ALLOWED, ANOMALIES
from pylog.chaos.jepsen.folder import write_run_folder
from pylog.chaos.jepsen.history import HistoryWriter, read_history
from pylog.chaos.jepsen.workload import QueueConfig, QueueWorkload, WorkloadSummary, run_queue

__all__ = ["ALWAYS_ALLOWED", "ANOMALIES", "CheckResult", "Extras", "HistoryWriter", "QueueConfig", "QueueWorkload",
           "WorkloadSummary", "check", "read_history", "run_queue", "write_run_folder"]
