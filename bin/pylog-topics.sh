#!/usr/bin/env bash
# kafka-topics.sh for pylog: pylog-topics.sh (--bootstrap-server HOST:PORT | --zookeeper HOST:PORT[/chroot])
#   --create|--list|--describe|--alter|--delete [--topic T] ...   (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.topics "$@"
