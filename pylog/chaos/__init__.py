"""Fault injection against a local cluster of real brokers (tests/chaos and scripts/chaos).

workload: the acks=all producer of numbered records; faults: kill -9, restarts and ZooKeeper
session expiry; verify: reads everything back and diffs the replicas' segment files with the
dump-log tool; run: one run from a seed, its report and the `scripts/chaos` entry point.
"""
