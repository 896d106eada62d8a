#!/usr/bin/env bash
# kafka-e2e-latency.sh for pylog: pylog-e2e-latency.sh broker_list topic num_messages producer_acks message_size_bytes [properties_file]
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.e2e_latency "$@"
