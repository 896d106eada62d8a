"""pylog-cluster: kafka-cluster.sh (ClusterTool): `cluster-id` and `unregister`.

cluster-id prints what DescribeCluster/Metadata report (`Cluster ID: <id>`, the id in /cluster/id).
unregister is a KRaft operation: a ZooKeeper-mode broker does not implement UnregisterBroker (API
64), so, as Kafka's tool does against such a cluster, it says the cluster does not support it.
"""

from __future__ import annotations

from typing import Any

import click

from pylog.cli.common import CONTEXT_SETTINGS, CliError, describe_exception, open_admin
from pylog.protocol.api import ApiKey


def _connection(func: Any) -> Any:
    func = click.option("--config", "-c", type=click.Path(dir_okay=False),
                        help="A property file containing configurations for the Admin client.")(func)
    func = click.option("--bootstrap-controller", "-C",
                        help="A list of host/port pairs to use for establishing the connection to the KRaft "
                             "controllers (KRaft only; a ZooKeeper-mode cluster has none).")(func)
    return click.option("--bootstrap-server", "-b", help="A list of host/port pairs to use for establishing the "
                        "connection to the Kafka cluster.")(func)


def _bootstrap(server: str | None, controller: str | None) -> str:
    if server and controller:
        raise click.UsageError("argument --bootstrap-controller/-C: not allowed with argument --bootstrap-server/-b")
    if controller:
        raise click.UsageError("--bootstrap-controller needs KRaft controllers; this ZooKeeper-mode cluster is "
                               "reached with --bootstrap-server")
    if not server:
        raise click.UsageError("one of the arguments --bootstrap-server/-b --bootstrap-controller/-C is required")
    return server


def _run(action: Any, config: str | None) -> None:
    click.get_current_context().params["command_config"] = config  # open_admin reads the client properties there
    try:
        action()
    except click.ClickException:
        raise
    except Exception as exc:
        raise CliError(describe_exception(exc)) from exc


@click.group("pylog-cluster", context_settings=CONTEXT_SETTINGS,
             help="The Kafka cluster tool (kafka-cluster.sh) for a pylog cluster.")
def cluster_group() -> None:
    """The pylog-cluster command group."""


@cluster_group.command("cluster-id", help="Get information about the ID of a cluster.")
@_connection
def cluster_id(bootstrap_server: str | None, bootstrap_controller: str | None, config: str | None) -> None:
    """ClusterTool.clusterIdCommand."""
    bootstrap = _bootstrap(bootstrap_server, bootstrap_controller)

    def show() -> None:
        admin = open_admin(bootstrap)
        admin.client.refresh_metadata(topics=[])
        cid = admin.client.cluster_id
        click.echo(f"Cluster ID: {cid}" if cid else "No cluster ID found. The Kafka version is probably too old.")
    _run(show, config)


@cluster_group.command("unregister", help="Unregister a broker.")
@_connection
@click.option("--id", "-i", "broker_id", type=int, required=True, help="The ID of the broker to unregister.")
def unregister(bootstrap_server: str | None, bootstrap_controller: str | None, config: str | None,
               broker_id: int) -> None:
    """ClusterTool.unregisterCommand: only KRaft clusters implement it."""
    bootstrap = _bootstrap(bootstrap_server, bootstrap_controller)

    def run() -> None:
        admin = open_admin(bootstrap)
        if not admin.supports(ApiKey.UnregisterBroker):
            click.echo("The target cluster does not support the broker unregistration API.")
            return
        raise CliError("pylog brokers do not implement UnregisterBroker")
    _run(run, config)


def main() -> None:
    """Console entry point (bin/pylog-cluster.sh, `pylog-cluster`)."""
    cluster_group.main(prog_name="pylog-cluster")


if __name__ == "__main__":
    main()
