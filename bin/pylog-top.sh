#!/usr/bin/env bash
# A live view of the cluster: pylog-top.sh --bootstrap-server HOST:PORT [--interval S] [--once [--output json]]
# Reads the Kafka APIs and the brokers' prometheus.listener endpoints (docs/metrics.md); writes nothing.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.top "$@"
