#!/usr/bin/env bash
# kafka-verifiable-producer.sh for pylog (the JSON event lines Kafka's system tests read), on librdkafka  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.verifiable_producer "$@"
