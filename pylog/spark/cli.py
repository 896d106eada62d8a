"""`scripts/spark-plan`: plan a reassignment on Spark from a cluster snapshot (spark-submit friendly)."""
from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from pylog.planner.formats import (format_reassignment_json, load_snapshot, parse_broker_list,
                                   parse_topics_to_move_json)
from pylog.planner.model import PlanError, PlanOptions
from pylog.planner.report import render_text

__all__ = ["main"]


def _racks(text: str | None) -> dict[int, str]:
    result = {}
    for item in filter(None, (text or "").split(",")):
        broker, _, rack = item.partition(":")
        if not rack:
            raise PlanError(f"--broker-racks: expected id:rack, got {item!r}")
        result[int(broker)] = rack
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Parse flags, run the Spark job, write the plan (Kafka reassignment JSON) and the report."""
    ap = argparse.ArgumentParser(prog="spark-plan", description=__doc__)
    ap.add_argument("--cluster-snapshot", required=True, help="cluster snapshot JSON file")
    ap.add_argument("--broker-list", required=True, help='target brokers, e.g. "0,1,2,3"')
    ap.add_argument("--topics-to-move-json-file", help="topics to move (default: every topic)")
    ap.add_argument("--broker-racks", help="racks of brokers absent from the snapshot, e.g. 3:r1,4:r2")
    ap.add_argument("--disable-rack-aware", action="store_true")
    ap.add_argument("--balance-by", choices=("count", "bytes"), default="count")
    ap.add_argument("--no-topic-balance", action="store_true", help="balance overall counts only")
    ap.add_argument("--max-moves", type=int)
    ap.add_argument("--max-bytes", type=int)
    ap.add_argument("--leader-changes", type=int, help="at most this many preferred-leader changes")
    ap.add_argument("--metrics-bootstrap", help="host:port to read load (sizes and rates) from: "
                    "__pylog_partition_load (scripts/spark-load), else the __pylog_metrics samples")
    ap.add_argument("--metrics-window-ms", type=int, help="aggregate the samples of this window (always from "
                    "__pylog_metrics: the load topic's window is the load job's)")
    ap.add_argument("--spark-master", help="Spark master URL (default: spark-submit's, else local[*])")
    ap.add_argument("--output-plan", help="write the proposed reassignment JSON here (default: stdout)")
    ap.add_argument("--output-report", help="write the report as JSON here")
    args = ap.parse_args(argv)
    try:
        snapshot = load_snapshot(args.cluster_snapshot)
        brokers = parse_broker_list(args.broker_list)
        topics = None
        if args.topics_to_move_json_file:
            with open(args.topics_to_move_json_file, encoding="utf-8") as fh:
                topics = parse_topics_to_move_json(fh.read())
        options = PlanOptions(balance_by=args.balance_by, topic_balance=not args.no_topic_balance,
                              rack_aware=not args.disable_rack_aware, max_moves=args.max_moves,
                              max_bytes=args.max_bytes, max_leader_changes=args.leader_changes)
        from pylog.spark.job import run
        start = time.perf_counter()
        plan = run(snapshot, topics, brokers, options, _racks(args.broker_racks), args.spark_master,
                   args.metrics_bootstrap, args.metrics_window_ms)
        plan.report.elapsed_s = time.perf_counter() - start
    except (PlanError, OSError) as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    proposed = format_reassignment_json(plan.proposed)
    if args.output_plan:
        with open(args.output_plan, "w", encoding="utf-8") as fh:
            fh.write(proposed + "\n")
    else:
        print("Current partition replica assignment")
        print(format_reassignment_json(plan.current))
        print()
        print("Proposed partition reassignment configuration")
        print(proposed)
    if args.output_report:
        with open(args.output_report, "w", encoding="utf-8") as fh:
            json.dump(plan.report.to_dict(), fh, indent=1)
            fh.write("\n")
    print(render_text(plan.report), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
