#!/usr/bin/env bash
# kafka-delegation-tokens.sh for pylog: pylog-delegation-tokens.sh --bootstrap-server HOST:PORT --command-config FILE --create|--renew|--expire|--describe ...  (see --help)
# Works from any directory: pylog-run-class.sh finds the repo and its .venv from its own path.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.delegation_tokens "$@"
