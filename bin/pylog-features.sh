#!/usr/bin/env bash
# kafka-features.sh for pylog: pylog-features.sh --bootstrap-server HOST:PORT describe|upgrade|downgrade|disable [--feature NAME=LEVEL]  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.features "$@"
