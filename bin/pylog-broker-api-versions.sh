#!/usr/bin/env bash
# kafka-broker-api-versions.sh for pylog: pylog-broker-api-versions.sh --bootstrap-server HOST:PORT
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.broker_api_versions "$@"
