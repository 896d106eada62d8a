#!/usr/bin/env bash
# kafka-consumer-perf-test.sh for pylog, on librdkafka (confluent-kafka) so it measures the cluster (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.consumer_perf "$@"
