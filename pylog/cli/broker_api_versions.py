"""pylog-broker-api-versions: kafka-broker-api-versions.sh (BrokerApiVersionsCommand).

Asks every broker in the cluster for its ApiVersions and prints Kafka 3.9's NodeApiVersions text:
one block per broker, `host:port (id: N rack: R) -> (`, a tab-indented line per API Kafka 3.9's
clients know (UNSUPPORTED where the broker does not list it), `)`. "usable" is what a Kafka 3.9
client would pick: the lower of its newest version and the broker's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click

from pylog.cli import render
from pylog.cli.common import command, open_admin
from pylog.protocol.api import ApiKey

# Kafka 3.9's ApiKeys.clientApis(): id:name:oldest:latest (the request schemas' validVersions).
_KAFKA_39_CLIENT_APIS = """
0:Produce:0:11 1:Fetch:0:17 2:ListOffsets:0:9 3:Metadata:0:12 4:LeaderAndIsr:0:7 5:StopReplica:0:4
6:UpdateMetadata:0:8 7:ControlledShutdown:0:3 8:OffsetCommit:0:9 9:OffsetFetch:0:9
10:FindCoordinator:0:6 11:JoinGroup:0:9 12:Heartbeat:0:4 13:LeaveGroup:0:5 14:SyncGroup:0:5
15:DescribeGroups:0:5 16:ListGroups:0:5 17:SaslHandshake:0:1 18:ApiVersions:0:4 19:CreateTopics:0:7
20:DeleteTopics:0:6 21:DeleteRecords:0:2 22:InitProducerId:0:5 23:OffsetForLeaderEpoch:0:4
24:AddPartitionsToTxn:0:5 25:AddOffsetsToTxn:0:4 26:EndTxn:0:4 27:WriteTxnMarkers:0:1
28:TxnOffsetCommit:0:4 29:DescribeAcls:0:3 30:CreateAcls:0:3 31:DeleteAcls:0:3
32:DescribeConfigs:0:4 33:AlterConfigs:0:2 34:AlterReplicaLogDirs:0:2 35:DescribeLogDirs:0:4
36:SaslAuthenticate:0:2 37:CreatePartitions:0:3 38:CreateDelegationToken:0:3
39:RenewDelegationToken:0:2 40:ExpireDelegationToken:0:2 41:DescribeDelegationToken:0:3
42:DeleteGroups:0:2 43:ElectLeaders:0:2 44:IncrementalAlterConfigs:0:1
45:AlterPartitionReassignments:0:0 46:ListPartitionReassignments:0:0 47:OffsetDelete:0:0
48:DescribeClientQuotas:0:1 49:AlterClientQuotas:0:1 50:DescribeUserScramCredentials:0:0
51:AlterUserScramCredentials:0:0 55:DescribeQuorum:0:2 56:AlterPartition:0:3 57:UpdateFeatures:0:1
58:Envelope:0:0 60:DescribeCluster:0:1 61:DescribeProducers:0:0 64:UnregisterBroker:0:0
65:DescribeTransactions:0:0 66:ListTransactions:0:1 67:AllocateProducerIds:0:0
68:ConsumerGroupHeartbeat:0:0 69:ConsumerGroupDescribe:0:0 71:GetTelemetrySubscriptions:0:0
72:PushTelemetry:0:0 74:ListClientMetricsResources:0:0 75:DescribeTopicPartitions:0:0
76:ShareGroupHeartbeat:0:0 77:ShareGroupDescribe:0:0 78:ShareFetch:0:0 79:ShareAcknowledge:0:0
80:AddRaftVoter:0:0 81:RemoveRaftVoter:0:0 83:InitializeShareGroupState:0:0
84:ReadShareGroupState:0:0 85:WriteShareGroupState:0:0 86:DeleteShareGroupState:0:0
87:ReadShareGroupStateSummary:0:0
"""
CLIENT_APIS: dict[int, tuple[str, int, int]] = {
    int(i): (name, int(lo), int(hi)) for i, name, lo, hi in (e.split(":") for e in _KAFKA_39_CLIENT_APIS.split())}


@dataclass
class BrokerVersions:
    """One broker's answer: (api key, min, max) rows, or the error that stopped it."""

    node: str
    versions: list[tuple[int, int, int]] = field(default_factory=list)
    error: str | None = None


@dataclass
class ApiVersionsListed:
    """Every broker's block, by broker id."""

    brokers: list[BrokerVersions]


def _api_text(key: int, lo: int, hi: int) -> str:
    known = CLIENT_APIS.get(key)
    name = known[0] if known else f"UNKNOWN({key})"
    text = f"{name}({key}): " if known else f"{name}: "
    text += str(lo) if lo == hi else f"{lo} to {hi}"
    if known:
        oldest, latest = known[1], known[2]
        if latest < lo:
            text += " [unusable: node too new]"
        elif hi < oldest:
            text += " [unusable: node too old]"
        else:
            text += f" [usable: {min(latest, hi)}]"
    return text


def node_versions_text(versions: list[tuple[int, int, int]]) -> list[str]:
    """NodeApiVersions.toString(true), split into lines."""
    rows = {key: _api_text(key, lo, hi) for key, lo, hi in versions}
    for key, (name, _, _) in CLIENT_APIS.items():
        rows.setdefault(key, f"{name}({key}): UNSUPPORTED")
    body = [f"\t{rows[k]}," for k in sorted(rows)]
    body[-1] = body[-1][:-1]
    return ["(", *body, ")"]


@render.text.register
def _text(result: ApiVersionsListed) -> list[str]:
    lines: list[str] = []
    for b in result.brokers:
        if b.error is not None:
            lines.append(f"{b.node} -> ERROR: {b.error}")
            continue
        block = node_versions_text(b.versions)
        lines += [f"{b.node} -> {block[0]}", *block[1:]]
    return lines


def list_versions(bootstrap: str) -> ApiVersionsListed:
    """ApiVersions (API 18, v0: every broker answers it) from each broker in the metadata."""
    admin = open_admin(bootstrap)
    admin.client.refresh_metadata(topics=[])
    out = []
    for node_id, (host, port, rack) in sorted(admin.client.brokers.items()):
        node = f"{host}:{port} (id: {node_id} rack: {rack if rack is not None else 'null'})"
        try:
            resp = admin.client.call(ApiKey.ApiVersions, lambda cls, v: cls(), node=node_id, max_version=0)
            out.append(BrokerVersions(node, [(k.api_key, k.min_version, k.max_version) for k in resp.api_keys]))
        except Exception as exc:  # Kafka prints the broker's failure in its block and goes on
            out.append(BrokerVersions(node, error=str(exc)))
    return ApiVersionsListed(out)


@command("pylog-broker-api-versions", help=(
    "This tool helps to retrieve broker version information (kafka-broker-api-versions.sh)."))
@click.option("--bootstrap-server", metavar="SERVERS", help="REQUIRED: The server to connect to.")
@click.option("--command-config", type=click.Path(dir_okay=False),
              help="A property file containing configs to be passed to Admin Client.")
def broker_api_versions_command(bootstrap_server: str | None, **_: Any) -> ApiVersionsListed:
    """The pylog-broker-api-versions command."""
    if not bootstrap_server:
        raise click.UsageError('Missing required argument "[bootstrap-server]"')
    return list_versions(bootstrap_server)


def main() -> None:
    """Console entry point (bin/pylog-broker-api-versions.sh, `pylog-broker-api-versions`)."""
    broker_api_versions_command.main(prog_name="pylog-broker-api-versions")


if __name__ == "__main__":
    main()
