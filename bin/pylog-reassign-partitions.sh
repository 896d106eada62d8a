#!/usr/bin/env bash
# kafka-reassign-partitions.sh for pylog: pylog-reassign-partitions.sh (--bootstrap-server HOST:PORT | --zookeeper HOST:PORT[/chroot]) ...  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.reassign "$@"
