#!/usr/bin/env bash
# kafka-replica-verification.sh for pylog: pylog-replica-verification.sh --bootstrap-server HOST:PORT [--topics-include REGEX]  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.replica_verification "$@"
