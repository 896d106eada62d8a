#!/usr/bin/env bash
# Stop pylog's balancer like Cruise Control's kafka-cruise-control-stop.sh: SIGTERM (a running execution
# stops gracefully: moves in flight finish, throttles are cleared). `pylog-cruise-control-stop.sh CONFIG`
# stops only the balancer started with that config file.
set -euo pipefail
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
exec "$base_dir/bin/pylog-stop-class.sh" pylog.balancer.main balancer "$@"
