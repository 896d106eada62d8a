#!/usr/bin/env bash
# seed 000's `alter cluster add/remove brokers` for pylog: pylog-alter-cluster.sh (--bootstrap-server HOST:PORT | --zookeeper HOST:PORT[/chroot]) (--add-brokers 3,4 | --remove-brokers 1) ...  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.alter_cluster "$@"
