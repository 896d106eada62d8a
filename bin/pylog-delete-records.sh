#!/usr/bin/env bash
# kafka-delete-records.sh for pylog: pylog-delete-records.sh --bootstrap-server HOST:PORT --offset-json-file FILE  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.delete_records "$@"
