#!/usr/bin/env bash
# Stop ZooKeepers started by pylog-zookeeper-server-start.sh (SIGTERM, or $SIGNAL), like Kafka's
# zookeeper-server-stop.sh. An optional CONFIG stops only the one started with that file.
set -euo pipefail
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
python="$base_dir/.venv/bin/python"
[ -x "$python" ] || python=python3
export PYLOG_HOME="$base_dir" PYTHONPATH="$base_dir${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" -m pylog.zk.server --stop "$@"
