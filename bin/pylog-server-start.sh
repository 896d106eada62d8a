#!/usr/bin/env bash
# Start a pylog broker like Kafka's kafka-server-start.sh:
#   pylog-server-start.sh [-daemon] server.properties [--override property=value]*
set -euo pipefail
if [ $# -lt 1 ]; then
    echo "USAGE: $0 [-daemon] server.properties [--override property=value]*" >&2
    exit 1
fi
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
extra=()
if [ "$1" = "-daemon" ]; then
    extra=(-daemon -name pylogServer)
    shift
fi
exec "$base_dir/bin/pylog-run-class.sh" "${extra[@]}" pylog.broker.main "$@"
