"""What a broker reports at scrape time, as plain data: the seam between the broker and the collector.

The broker fills a BrokerSnapshot on its event loop (pylog/broker/metrics_view.py), so the
collector never reads live broker objects from the HTTP thread, and this package never imports
the broker. Fields a broker does not have yet (loading, no controller) stay empty.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Kafka's BrokerState values (kafka.server:type=KafkaServer,name=BrokerState). Kafka has no code for a fenced
# broker; KRaft reports its fenced brokers as RECOVERY (2), so we do too (pylog_broker_state names it).
BROKER_STATES = {"starting": 1, "recovery": 2, "running": 3, "fenced": 2, "shutting_down": 7}


@dataclass(slots=True)
class PartitionView:
    """One replica hosted here."""

    topic: str
    partition: int
    leader: bool
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    min_isr: int
    size: int
    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    producer_ids: int
    adding: tuple[int, ...] = ()
    bytes_to_add: int = 0  # leader's estimate of what its reassignment's new replicas still have to copy


@dataclass(slots=True)
class ControllerView:
    """The active controller's view of the cluster (only the active one reports non-zero values)."""

    active: bool
    offline_partitions: int = 0
    preferred_imbalance: int = 0
    global_partitions: int = 0
    global_topics: int = 0
    reassigning_partitions: int = 0


@dataclass(slots=True)
class GroupView:
    """A group this broker coordinates, with its committed offsets."""

    group_id: str
    state: str
    members: int
    generation: int
    committed: dict[tuple[str, int], int] = field(default_factory=dict)


@dataclass(slots=True)
class BrokerSnapshot:
    """Everything the collector needs from one broker at one scrape."""

    broker_id: int
    state: str  # a key of BROKER_STATES
    zk_connected: bool = False
    partitions: list[PartitionView] = field(default_factory=list)
    offline_replicas: int = 0
    log_dirs: list[str] = field(default_factory=list)
    offline_log_dirs: list[str] = field(default_factory=list)
    traffic: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # topic -> bytes in, out, messages in
    controller: ControllerView | None = None
    groups: list[GroupView] = field(default_factory=list)
    end_offsets: dict[tuple[str, int], int] = field(default_factory=dict)  # newest offsets for groups' lag
    transactions: dict[str, int] = field(default_factory=dict)  # coordinator: transactional ids per state
    throttle_rates: dict[str, float] = field(default_factory=dict)  # "leader"/"follower" -> bytes/s (-1: none)
    complete: bool = True  # False: the event loop did not answer in time, only the cheap fields are set
