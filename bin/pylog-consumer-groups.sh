#!/usr/bin/env bash
# kafka-consumer-groups.sh for pylog: pylog-consumer-groups.sh --bootstrap-server HOST:PORT
#   --list [--state [S]] | --describe [--members [--verbose] | --state] (--group G | --all-groups) | --delete (--group G | --all-groups)
#   | --reset-offsets ... | --delete-offsets --group G --topic T[:P,...]   (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.consumer_groups "$@"
