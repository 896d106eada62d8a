#!/usr/bin/env bash
# kafka-dump-log.sh for pylog: pylog-dump-log.sh --files a.log,b.index [--print-data-log] [--output json]
# Works from any directory: the repo is found from this script's own path.
set -euo pipefail
repo="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
py="$repo/.venv/bin/python"
[ -x "$py" ] || py=python3
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"
exec "$py" -m pylog.cli.dump_log "$@"
