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
    shift
    # One console file and pid file per broker: pylogServer for server.properties, pylogServer-<name> for
    # <name>.properties, so brokers started from one install with different configs never share them.
    stem="$(basename "${1:-server.properties}" .properties)"
    name=pylogServer
    [ "$stem" = server ] || name="pylogServer-$stem"
    extra=(-daemon -name "$name")
fi
exec "$base_dir/bin/pylog-run-class.sh" "${extra[@]}" pylog.broker.main "$@"
