#!/usr/bin/env bash
# Stop pylog brokers like Kafka's kafka-server-stop.sh: SIGTERM to every broker process (each
# does a controlled shutdown first). --process-role/--node-id are not needed in ZooKeeper mode;
# `pylog-server-stop.sh CONFIG` stops only the broker started with that config file.
set -euo pipefail
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
exec "$base_dir/bin/pylog-stop-class.sh" pylog.broker.main server "$@"
