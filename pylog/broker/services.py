"""The typed seam between the broker and its request handlers: what a handler may use.

Handlers are `async def handle_x(ctx: HandlerContext, req)`. They reach the broker only through
BrokerServices, a Protocol the Broker satisfies, so a reader sees a handler's whole world here,
and a new subsystem (the group and transaction coordinators) adds its attribute here first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pylog.broker.delegation_tokens import DelegationTokenManager
    from pylog.broker.controller_admin import ControllerAdmin
    from pylog.broker.group_host import GroupHost
    from pylog.broker.metadata_cache import MetadataCache
    from pylog.broker.producer_ids import ProducerIdManager
    from pylog.broker.features import FinalizedFeatures
    from pylog.broker.quotas import ClientQuotas
    from pylog.broker.replica_manager import ReplicaManager
    from pylog.broker.stats import PartitionStats
    from pylog.broker.topic_admin import TopicAdmin
    from pylog.broker.topic_configs import TopicConfigs
    from pylog.broker.txn_host import TxnHost
    from pylog.common.config import BrokerConfig
    from pylog.log.manager import LogManager
    from pylog.protocol.codec import RequestHeader
    from pylog.security.authorizer import AclAuthorizer
    from pylog.security.connection import ConnectionSecurity
    from pylog.zk.client import ZkClient


class BrokerServices(Protocol):
    """The broker as request handlers see it (attributes set once the broker started serving)."""

    broker_id: int
    cluster_id: str | None
    rack: str | None
    config: BrokerConfig
    zk: ZkClient | None
    logs: LogManager | None
    metadata: MetadataCache  # what UpdateMetadata told us: topics, partitions, live brokers
    replicas: ReplicaManager | None  # partitions hosted here: leaders, followers, appends, ISR
    topic_admin: TopicAdmin  # CreateTopics / CreatePartitions / DeleteTopics
    topic_configs: TopicConfigs  # dynamic topic and broker configs
    stats: PartitionStats  # bytes in/out per partition
    authorizer: AclAuthorizer | None  # ACLs, when authorizer.class.name is set (pylog.security.authorizer.allowed)
    groups: GroupHost | None  # the group coordinator over __consumer_offsets (FindCoordinator, group APIs)
    producer_ids: ProducerIdManager | None  # InitProducerId: ids from blocks reserved in ZooKeeper
    transactions: TxnHost | None  # the transaction coordinator over __transaction_state
    features: FinalizedFeatures  # finalized features from /feature (KIP-584): ApiVersions reports them
    quotas: ClientQuotas  # client quotas (KIP-13/55/124/219/257/599): settings and measured rates
    tokens: DelegationTokenManager | None  # delegation tokens (KIP-48)

    def advertised_for(self, listener: str | None) -> tuple[str, int]:
        """Host and port of this broker on a listener (the inter-broker one for None)."""

    def active_controller(self) -> ControllerAdmin | None:
        """The controller hosted here while it is the active one (admin requests get NOT_CONTROLLER otherwise)."""

    async def is_broker_epoch_stale(self, request_epoch: int) -> bool:
        """KIP-380: a control request addressed to an earlier registration of this broker (waits for ours)."""

    def storage_failed(self, path: str, exc: BaseException) -> None:
        """An OSError on a file under a log dir: that dir goes offline (KIP-112)."""

    def on_metadata_updated(self) -> None:
        """Hook after UpdateMetadata."""


class HandlerContext(Protocol):
    """What a handler may know about the request it serves."""

    broker: BrokerServices
    header: RequestHeader
    peer: str
    security: ConnectionSecurity | None  # the connection's listener and principal; None for in-process calls
    size: int  # the request's bytes (what a produce quota counts)
    throttle_ms: int  # set by a handler whose client went over a quota: the connection reads nothing that long
