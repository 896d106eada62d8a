#!/usr/bin/env bash
# Shared launcher (like Kafka's kafka-run-class.sh): pylog-run-class.sh [-daemon] [-name NAME] MODULE [ARGS...]
# Runs `python -m MODULE ARGS` with the repo's .venv from any current directory; with -daemon it
# detaches, appends the console output to $LOG_DIR/NAME.out and writes its pid to $LOG_DIR/NAME.pid
# (LOG_DIR defaults to <repo>/logs). It refuses to start when NAME.pid belongs to a running process:
# two processes never share (or truncate) one console file.
set -euo pipefail
base_dir="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/.." && pwd)"
python="$base_dir/.venv/bin/python"
[ -x "$python" ] || python=python3
export PYLOG_HOME="$base_dir" PYTHONPATH="$base_dir${PYTHONPATH:+:$PYTHONPATH}"
daemon=0
name=""
while [ $# -gt 0 ]; do
    case "$1" in
        -daemon) daemon=1; shift ;;
        -name) name="$2"; shift 2 ;;
        *) break ;;
    esac
done
if [ $# -lt 1 ]; then
    echo "USAGE: $0 [-daemon] [-name servicename] module [args...]" >&2
    exit 1
fi
module="$1"; shift
if [ "$daemon" -eq 1 ]; then
    log_dir="${LOG_DIR:-$base_dir/logs}"
    mkdir -p "$log_dir"
    out="$log_dir/${name:-${module##*.}}.out"
    pid_file="$log_dir/${name:-${module##*.}}.pid"
    # (a stale pid file, or one whose pid now belongs to an unrelated process, is simply replaced)
    if [ -s "$pid_file" ] && tr '\0' ' ' 2>/dev/null <"/proc/$(cat "$pid_file")/cmdline" | grep -q -- "-m $module"; then
        echo "ERROR: $pid_file belongs to the running process $(cat "$pid_file"); give this one its own LOG_DIR or a differently named config file" >&2
        exit 1
    fi
    nohup "$python" -m "$module" "$@" >>"$out" 2>&1 </dev/null &
    echo $! >"$pid_file"
else
    exec "$python" -m "$module" "$@"
fi
