"""pylog-zookeeper-security-migration: Kafka's zookeeper-security-migration.sh (ZkSecurityMigrator).

Sets the ACLs of the znodes Kafka creates to what `zookeeper.set.acl=true` gives new ones
(`--zookeeper.acl secure`) or opens them again (`unsecure`), for a cluster moving to (or from)
ZooKeeper authentication. Like Kafka's tool it logs in with the JAAS Client section named by
-Djava.security.auth.login.config in KAFKA_OPTS, and refuses to run without one.
"""

from __future__ import annotations

from typing import Any

import click

from pylog.cli.common import command
from pylog.cli.results import ZkAclsMigrated
from pylog.security.zk_login import LOGIN_CONFIG, zk_login
from pylog.zk.acl_migration import migrate, missing_roots
from pylog.zk.acls import secure_policy
from pylog.zk.client import ZkClient

USAGE = ("ZooKeeper Migration Tool Help. This tool updates the ACLs of znodes as part of the process of setting up "
         "ZooKeeper authentication.")


@command("pylog-zookeeper-security-migration", help=USAGE)
@click.option("--zookeeper.acl", "acl", metavar="secure|unsecure",
              help="Indicates whether to make the Kafka znodes in ZooKeeper secure or unsecure. The options are "
                   "'secure' and 'unsecure'")
@click.option("--zookeeper.connect", "connect", metavar="HOST:PORT[/chroot]",
              help="Sets the ZooKeeper connect string (ensemble). This parameter takes a comma-separated list of "
                   "host:port pairs.")
@click.option("--zookeeper.session.timeout", "session_timeout", type=click.IntRange(min=1), default=30000,
              show_default=True, help="Sets the ZooKeeper session timeout.")
@click.option("--zookeeper.connection.timeout", "connection_timeout", type=click.IntRange(min=1), default=30000,
              show_default=True, help="Sets the ZooKeeper connection timeout.")
@click.option("--enable.path.check", "path_check", is_flag=True,
              help="Checks if all the root paths exist in ZooKeeper before migration. If not, exit the command.")
def migration_command(acl: str | None, connect: str | None, session_timeout: int, connection_timeout: int,
                      path_check: bool, **_: Any) -> ZkAclsMigrated:
    """The pylog-zookeeper-security-migration command."""
    if acl not in ("secure", "unsecure"):
        raise click.UsageError(USAGE)
    if not connect:
        raise click.UsageError('Missing required argument "[zookeeper.connect]"')
    login = zk_login()
    if login is None:
        raise click.ClickException(
            "No JAAS configuration file has been specified. Please make sure that you set the system property "
            f"{LOGIN_CONFIG} (in KAFKA_OPTS: -D{LOGIN_CONFIG}=<file> with a Client section)")
    secure = acl == "secure"
    zk = ZkClient(connect, session_timeout_ms=session_timeout, connection_timeout_ms=connection_timeout,
                  create_chroot=False, auth_data=login.auth_data, acl_policy=secure_policy if secure else None)
    with zk.start():
        missing = missing_roots(zk)
        warnings = []
        if missing:
            warnings = [f"Warning: The following secure root paths do not exist in ZooKeeper: {','.join(missing)}",
                        "That might be due to an incorrect chroot is specified when executing the command."]
            if path_check:
                click.echo("\n".join(warnings + ["Exit the command."]))
                raise click.exceptions.Exit(1)
        done = migrate(zk, secure)
    failure = None
    if done.failed:
        first = next(iter(done.failed.items()))
        failure = (f"Could not set the ACL of {len(done.failed)} znode(s), e.g. {first[0]}: {first[1]} (they were "
                   "created by another ZooKeeper login)")
    return ZkAclsMigrated(acl, done.znodes, warnings, done.failed, failure)


def main() -> None:
    """Console entry point (bin/pylog-zookeeper-security-migration.sh)."""
    migration_command.main(prog_name="pylog-zookeeper-security-migration")


if __name__ == "__main__":
    main()
