#!/usr/bin/env bash
# Start ZooKeeper like Kafka's zookeeper-server-start.sh: [-daemon] zookeeper.properties
# Foreground by default; -daemon detaches and logs to <repo>/logs/zookeeper.out (or $LOG_DIR).
set -euo pipefail
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
python="$base_dir/.venv/bin/python"
[ -x "$python" ] || python=python3
export PYLOG_HOME="$base_dir" PYLOG_SCRIPT="$0" PYTHONPATH="$base_dir${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" -m pylog.zk.server "$@"
