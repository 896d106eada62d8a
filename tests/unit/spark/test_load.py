"""The load job's pure parts: one partition's load from its window of samples, and the CLI's option checks."""
from __future__ import annotations

import pytest

from pylog.planner.model import Partition
from pylog.planner.report import load_summary
from pylog.spark.load import p95, window_load
from pylog.spark.load_cli import main


def test_p95_is_percentile_approx_nearest_rank():
    assert p95([]) is None
    assert p95([7.0]) == 7.0
    assert p95([float(10 * i) for i in range(20)]) == 180.0   # 19 of 20 at or below
    assert p95([float(i) for i in range(30)]) == 28.0          # ceil(28.5) = 29th smallest
    assert p95([float(i) for i in range(100)]) == 94.0


def test_window_load_takes_largest_replicas_latest_size_and_leader_rates():
    # (broker, ts, is_leader, size, in, out, msgs): broker 1 leads; broker 2 lags; broker 3 was leader earlier.
    samples = [(1, 100, True, 500, 10.0, 1.0, 1.0), (1, 200, True, 600, 30.0, 3.0, 2.0),
               (2, 200, False, 590, 0.0, 0.0, 0.0), (3, 50, True, 700, 20.0, 2.0, 5.0),
               (3, 150, False, 450, 0.0, 0.0, 0.0)]
    load = window_load("t", 4, samples, 1000)
    assert load == {"version": 1, "topic": "t", "partition": 4, "size_bytes": 600, "bytes_in_per_sec": 30.0,
                    "bytes_out_per_sec": 3.0, "messages_in_per_sec": 5.0, "samples": 3, "window_ms": 1000,
                    "from_ms": 50, "to_ms": 200}


def test_load_summary_counts_bytes_in_on_every_replica_and_bytes_out_on_the_leader():
    parts = [Partition("t", 0, [0, 1], 10, 100.0, 40.0), Partition("t", 1, [1, 2], 20, 50.0, 10.0),
             Partition("t", 2, [2, 0])]
    summary = load_summary(parts, {("t", 0): [3, 1], ("t", 1): [1, 2], ("t", 2): [2, 0]}, "src")
    assert summary["source"] == "src" and summary["partitions"] == 2
    rows = {b["id"]: (b["bytes_in_per_sec"], b["bytes_out_per_sec"]) for b in summary["brokers"]}
    assert rows == {0: ([100.0, 0.0], [40.0, 0.0]), 1: ([150.0, 150.0], [10.0, 10.0]),
                    2: ([50.0, 50.0], [0.0, 0.0]), 3: ([0.0, 100.0], [0.0, 40.0])}


def _exit_code(args: list[str]) -> int:
    try:
        return main(args)
    except SystemExit as exc:  # argparse's own errors
        return int(exc.code)


@pytest.mark.parametrize("args, message", [
    ([], "the following arguments are required: --bootstrap-server, --checkpoint-location"),
    (["--window-ms", "0"], "--window-ms must be positive, got 0"),
    (["--once", "--trigger-interval", "10 seconds"], "--once and --trigger-interval exclude each other"),
    (["--trigger-interval", "soon"], "--trigger-interval: expected a duration"),
    (["--load-topic-partitions", "0"], "--load-topic-partitions must be positive"),
    (["--window-ms", "x"], "argument --window-ms: invalid int value: 'x'"),
])
def test_bad_options_get_one_error_and_exit_1(args, message, capsys, tmp_path):
    base = ["--bootstrap-server", "127.0.0.1:1", "--checkpoint-location", str(tmp_path)] if args else []
    assert _exit_code(base + args) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("Error:") == 1


def test_unreachable_cluster_and_checkpoint_file(capsys, tmp_path):
    assert main(["--bootstrap-server", "127.0.0.1:1", "--checkpoint-location", str(tmp_path), "--once"]) == 1
    assert "Error: cannot read load from the cluster at 127.0.0.1:1" in capsys.readouterr().err
    (tmp_path / "f").write_text("")
    assert main(["--bootstrap-server", "127.0.0.1:1", "--checkpoint-location", str(tmp_path / "f")]) == 1
    assert "is a file, not a directory" in capsys.readouterr().err


def test_planner_load_from_an_unreachable_cluster_is_a_plan_error():
    from pylog.planner.model import PlanError
    from pylog.spark.load import planner_load
    with pytest.raises(PlanError, match="^cannot read load from the cluster at 127.0.0.1:1: "):
        planner_load(None, "127.0.0.1:1")  # checked before any Spark work; the tools print it as one error
