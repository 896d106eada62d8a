#!/usr/bin/env bash
# kafka-get-offsets.sh for pylog: pylog-get-offsets.sh --bootstrap-server HOST:PORT [--topic T] [--time -1|-2|-3|TS]  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.get_offsets "$@"
