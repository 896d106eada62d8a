#!/usr/bin/env bash
# Stop pylog brokers like Kafka's kafka-server-stop.sh: SIGTERM to every broker process (each
# does a controlled shutdown first). --process-role/--node-id are not needed in ZooKeeper mode;
# `pylog-server-stop.sh CONFIG` stops only the broker started with that config file.
set -euo pipefail
pattern='pylog\.broker\.main'
if [ $# -ge 1 ]; then
    pattern="pylog\\.broker\\.main $(printf '%s' "$1" | sed 's/[.[\*^$/]/\\&/g')"
fi
pids=$(ps ax -ww -o pid= -o args= | grep -E "$pattern" | grep -v grep | awk '{print $1}' || true)
if [ -z "$pids" ]; then
    echo "No pylog server to stop"
    exit 1
fi
kill -s TERM $pids
