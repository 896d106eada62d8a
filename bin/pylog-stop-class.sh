#!/usr/bin/env bash
# Shared stopper (the stop scripts' counterpart of pylog-run-class.sh): pylog-stop-class.sh MODULE WHAT [CONFIG]
# SIGTERMs every process running `python -m MODULE`, or, given CONFIG, only the one started with that config
# file; "No pylog WHAT to stop" and exit 1 when there is none.
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "USAGE: $0 module what [config]" >&2
    exit 1
fi
pattern="$(printf '%s' "$1" | sed 's/[.]/\\./g')"
what="$2"
if [ $# -ge 3 ]; then
    pattern="$pattern $(printf '%s' "$3" | sed 's/[.[\*^$/]/\\&/g')"
fi
pids=$(ps ax -ww -o pid= -o args= | grep -E "$pattern" | grep -v grep | grep -v pylog-stop-class | awk '{print $1}' || true)
if [ -z "$pids" ]; then
    echo "No pylog $what to stop"
    exit 1
fi
kill -s TERM $pids
