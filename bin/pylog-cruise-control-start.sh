#!/usr/bin/env bash
# Start pylog's balancer, which speaks Cruise Control's REST API (cccli drives it), like Cruise Control's
# kafka-cruise-control-start.sh:  pylog-cruise-control-start.sh [-daemon] config/cruisecontrol.properties
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "USAGE: $0 [-daemon] cruisecontrol.properties" >&2
    exit 1
fi
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
extra=()
if [ "$1" = "-daemon" ]; then
    extra=(-daemon -name pylogCruiseControl)
    shift
fi
exec "$base_dir/bin/pylog-run-class.sh" "${extra[@]}" pylog.balancer.main "$@"
