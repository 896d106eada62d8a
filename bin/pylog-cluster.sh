#!/usr/bin/env bash
# kafka-cluster.sh for pylog: pylog-cluster.sh cluster-id --bootstrap-server HOST:PORT  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.cluster "$@"
