#!/usr/bin/env bash
# zookeeper-security-migration.sh for pylog: --zookeeper.acl secure|unsecure --zookeeper.connect HOST:PORT[/chroot]
# Logs in with the JAAS Client section that KAFKA_OPTS names (-Djava.security.auth.login.config=FILE), as Kafka's.
exec "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/pylog-run-class.sh" pylog.cli.zk_security_migration "$@"
