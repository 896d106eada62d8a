#!/usr/bin/env bash
# Stop pylog's balancer like Cruise Control's kafka-cruise-control-stop.sh: SIGTERM (a running execution
# stops gracefully: moves in flight finish, throttles are cleared). `pylog-cruise-control-stop.sh CONFIG`
# stops only the balancer started with that config file.
set -euo pipefail
pattern='pylog\.balancer\.main'
if [ $# -ge 1 ]; then
    pattern="pylog\\.balancer\\.main $(printf '%s' "$1" | sed 's/[.[\*^$/]/\\&/g')"
fi
pids=$(ps ax -ww -o pid= -o args= | grep -E "$pattern" | grep -v grep | awk '{print $1}' || true)
if [ -z "$pids" ]; then
    echo "No pylog balancer to stop"
    exit 1
fi
kill -s TERM $pids
