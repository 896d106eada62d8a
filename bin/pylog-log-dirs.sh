#!/usr/bin/env bash
# kafka-log-dirs.sh for pylog: pylog-log-dirs.sh --describe --bootstrap-server HOST:PORT [--broker-list 0,1] [--topic-list t1,t2]
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.log_dirs "$@"
