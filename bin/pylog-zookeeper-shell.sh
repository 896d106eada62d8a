#!/usr/bin/env bash
# zookeeper-shell.sh for pylog: pylog-zookeeper-shell.sh HOST:PORT[/chroot] [ls|get|stat|set|create|delete|deleteall ARGS]
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.zookeeper_shell "$@"
