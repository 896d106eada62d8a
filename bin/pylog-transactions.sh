#!/usr/bin/env bash
# kafka-transactions.sh for pylog: pylog-transactions.sh --bootstrap-server HOST:PORT COMMAND ...  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.transactions "$@"
