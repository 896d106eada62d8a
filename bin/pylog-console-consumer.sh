#!/usr/bin/env bash
# kafka-console-consumer.sh for pylog: pylog-console-consumer.sh --bootstrap-server HOST:PORT --topic T ...   (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.console_consumer "$@"
