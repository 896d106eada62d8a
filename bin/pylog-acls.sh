#!/usr/bin/env bash
# kafka-acls.sh for pylog: pylog-acls.sh (--bootstrap-server HOST:PORT | --authorizer-properties zookeeper.connect=HOST:PORT[/chroot]) ...  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.acls "$@"
