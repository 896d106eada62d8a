#!/usr/bin/env bash
# Start ZooKeeper like Kafka's zookeeper-server-start.sh: [-daemon] zookeeper.properties
# Foreground by default; -daemon detaches and logs to <repo>/logs/zookeeper.out (or $LOG_DIR).
set -euo pipefail
if [ "${1:-}" = "--help" ] || [ "${1:-}" = "-h" ]; then
    cat <<EOF
USAGE: $0 [-daemon] zookeeper.properties

Start a ZooKeeper server (Debian's ZooKeeper as a plain JVM) with Kafka's zookeeper.properties
keys (dataDir, clientPort, maxClientCnxns, admin.enableServer, ...). In the foreground it logs to the
terminal; -daemon detaches and logs to \$LOG_DIR/zookeeper.out (LOG_DIR defaults to <install>/logs).
KAFKA_HEAP_OPTS and KAFKA_OPTS go to the JVM as Kafka's scripts pass them.
Stop it with pylog-zookeeper-server-stop.sh [zookeeper.properties].
EOF
    exit 0
fi
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
python="$base_dir/.venv/bin/python"
[ -x "$python" ] || python=python3
export PYLOG_HOME="$base_dir" PYLOG_SCRIPT="$0" PYTHONPATH="$base_dir${PYTHONPATH:+:$PYTHONPATH}"
exec "$python" -m pylog.zk.server "$@"
