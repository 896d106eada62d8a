"""What pylog-transactions needs from Kafka's Admin client: describeProducers, describeTransactions,
listTransactions and abortTransaction, with the Admin's retries and its exception messages.

Failures raise ApiError whose message is the Java exception's message the Admin would have raised
(kafka-transactions.sh prints it after its own text).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Iterable, TypeVar

from pylog.cli.admin_client import ApiError, BrokerAdmin
from pylog.common.types import TP
from pylog.protocol.api import ApiKey
from pylog.protocol.errors import ErrorCode

E = ErrorCode
T = TypeVar("T")
_RETRIES, _BACKOFF_S = 20, 0.25
TRANSACTION_KEY = 1  # FindCoordinator's key type for a transactional id


class _Retry(Exception):
    """An answer the Admin retries after a backoff (coordinator loading or moved, leader moved)."""

    def __init__(self, error: ApiError) -> None:
        super().__init__(str(error))
        self.error = error


def tp_name(tp: TP) -> str:
    """Java's TopicPartition.toString."""
    return f"{tp[0]}-{tp[1]}"


@dataclass(frozen=True)
class ProducerState:
    """One active producer of a partition (Admin's ProducerState; None where Java has an empty Optional)."""

    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int | None
    txn_start_offset: int | None


@dataclass(frozen=True)
class TxnDescription:
    """Admin's TransactionDescription."""

    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    start_ms: int | None
    partitions: tuple[TP, ...]


@dataclass(frozen=True)
class AbortSpec:
    """Admin's AbortTransactionSpec."""

    tp: TP
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int

    def __str__(self) -> str:
        return (f"AbortTransactionSpec(topicPartition={tp_name(self.tp)}, producerId={self.producer_id}, "
                f"producerEpoch={self.producer_epoch}, coordinatorEpoch={self.coordinator_epoch})")


class TxnAdmin:
    """Transaction admin operations through a BrokerAdmin's connections."""

    def __init__(self, admin: BrokerAdmin) -> None:
        self.admin = admin
        self.client = admin.client

    @staticmethod
    def _retrying(fn: Callable[[], T]) -> T:
        for attempt in range(_RETRIES):
            try:
                return fn()
            except _Retry as r:
                if attempt == _RETRIES - 1:
                    raise r.error from None
                time.sleep(_BACKOFF_S)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------------ partitions

    def leaders(self, topics: Iterable[str]) -> dict[TP, int | None]:
        """Every partition of the topics and its leader (None: no live leader); an unknown topic is left out."""
        meta = self.admin.metadata(sorted(set(topics)))
        return {(t.name, p.partition): p.leader for t in meta.topics.values() for p in t.partitions.values()}

    def partitions(self, topics: Iterable[str] | None, broker_id: int | None) -> list[TP]:
        """Partitions of the topics (None: all topics), only those with a replica on `broker_id` when given;
        UNKNOWN_TOPIC_OR_PARTITION when a named topic does not exist."""
        wanted = None if topics is None else sorted(set(topics))
        meta = self.admin.metadata(wanted)
        if wanted is not None and set(wanted) - set(meta.topics):
            raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION)
        return [(t.name, p.partition) for t in sorted(meta.topics.values(), key=lambda t: t.name)
                for p in sorted(t.partitions.values(), key=lambda p: p.partition)
                if broker_id is None or broker_id in p.replicas]

    def describe_producers(self, tps: list[TP], broker_id: int | None = None) -> dict[TP, list[ProducerState]]:
        """DescribeProducers at each partition's leader, or at `broker_id` (a replica) when given."""
        out: dict[TP, list[ProducerState]] = {}
        left = list(dict.fromkeys(tps))

        def attempt() -> None:
            if broker_id is None:
                leaders = self.leaders(t for t, _ in left)
                for tp in left:
                    if tp not in leaders:
                        raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION)
                    if leaders[tp] is None:
                        raise _Retry(ApiError(E.LEADER_NOT_AVAILABLE))
                by_node = _group(left, lambda tp: leaders[tp])  # type: ignore[arg-type,return-value]
            else:
                by_node = {broker_id: left}
            retry = None
            for node, group in sorted(by_node.items()):
                for tp, result in self._describe_producers_at(node, group, broker_id).items():
                    if isinstance(result, _Retry):
                        retry = result
                    else:
                        out[tp] = result
            left[:] = [tp for tp in left if tp not in out]
            if retry is not None:
                raise retry
        self._retrying(attempt)
        return out

    def _describe_producers_at(self, node: int, tps: list[TP], broker_id: int | None
                               ) -> dict[TP, list[ProducerState] | _Retry]:
        by_topic = _group(tps, lambda tp: tp[0])
        resp = self.client.call(ApiKey.DescribeProducers, lambda cls, v: cls(topics=[
            cls.TopicRequest(name=t, partition_indexes=[p for _, p in ps]) for t, ps in by_topic.items()]), node=node)
        out: dict[TP, list[ProducerState] | _Retry] = {}
        for t in resp.topics:
            for p in t.partitions:
                tp = (t.name, p.partition_index)
                if p.error_code == E.NONE:
                    out[tp] = [ProducerState(s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp,
                                             s.coordinator_epoch if s.coordinator_epoch >= 0 else None,
                                             s.current_txn_start_offset if s.current_txn_start_offset >= 0 else None)
                               for s in p.active_producers]
                    continue
                err = ErrorCode(p.error_code)
                if err == E.NOT_LEADER_OR_FOLLOWER and broker_id is not None:
                    raise ApiError(err, f"Failed to describe active producers for partition {tp_name(tp)} "
                                        f"on brokerId {broker_id}")
                if err == E.NOT_LEADER_OR_FOLLOWER:
                    out[tp] = _Retry(ApiError(err))
                elif err == E.UNKNOWN_TOPIC_OR_PARTITION:
                    raise ApiError(err, p.error_message)
                elif err == E.TOPIC_AUTHORIZATION_FAILED:
                    raise ApiError(err, f"Failed to describe active producers for partition {tp_name(tp)} due to "
                                        f"authorization failure on topic `{tp[0]}`")
                else:
                    raise ApiError(err, f"Failed to describe active producers for partition {tp_name(tp)} due to "
                                        f"unexpected error")
        return out

    # ------------------------------------------------------------------ coordinators

    def find_transaction_coordinator(self, transactional_id: str) -> int:
        """The node id of the transactional id's coordinator (FindCoordinator, key type 1)."""
        resp = self.client.call(ApiKey.FindCoordinator, lambda cls, v: cls(
            key=transactional_id, key_type=TRANSACTION_KEY, coordinator_keys=[transactional_id]))
        c = resp.coordinators[0] if getattr(resp, "coordinators", None) else resp
        err = ErrorCode(c.error_code)
        if err == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
            raise ApiError(err, f"FindCoordinator request for transactionalId `{transactional_id}` failed due to "
                                f"authorization failure")
        if err in (E.COORDINATOR_NOT_AVAILABLE, E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR):
            raise _Retry(ApiError(err, c.error_message))
        if err != E.NONE:
            raise ApiError(err, c.error_message)
        self.client.refresh_metadata(topics=[])
        return c.node_id

    def describe_transaction(self, transactional_id: str) -> TxnDescription:
        """DescribeTransactions at the id's coordinator, as Admin.describeTransactions handles its errors."""
        def attempt() -> TxnDescription:
            node = self.find_transaction_coordinator(transactional_id)
            s = self.client.call(ApiKey.DescribeTransactions, lambda cls, v: cls(
                transactional_ids=[transactional_id]), node=node).transaction_states[0]
            err, what = ErrorCode(s.error_code), f"DescribeTransactions request for transactionalId `{transactional_id}`"
            if err == E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                raise ApiError(err, f"{what} failed due to authorization failure")
            if err == E.TRANSACTIONAL_ID_NOT_FOUND:
                raise ApiError(err, f"{what} failed because the ID could not be found")
            if err in (E.COORDINATOR_LOAD_IN_PROGRESS, E.NOT_COORDINATOR, E.COORDINATOR_NOT_AVAILABLE):
                raise _Retry(ApiError(err))
            if err != E.NONE:
                raise ApiError(err, f"{what} failed due to unexpected error")
            parts = tuple(sorted((t.topic, p) for t in s.topics for p in t.partitions))
            return TxnDescription(node, s.transaction_state, s.producer_id, s.producer_epoch,
                                  s.transaction_timeout_ms,
                                  s.transaction_start_time_ms if s.transaction_start_time_ms >= 0 else None, parts)
        return self._retrying(attempt)

    def list_transactions(self, producer_ids: Iterable[int] = (), states: Iterable[str] = ()
                          ) -> dict[int, list[tuple[str, int, str]]]:
        """ListTransactions at every broker: broker id -> [(transactional id, producer id, state)]."""
        pids, names = sorted(set(producer_ids)), list(states)
        self.client.refresh_metadata(topics=[])
        out: dict[int, list[tuple[str, int, str]]] = {}
        for node in sorted(self.client.brokers):
            def ask(node: int = node) -> list[tuple[str, int, str]]:
                resp = self.client.call(ApiKey.ListTransactions, lambda cls, v: cls(
                    state_filters=names, producer_id_filters=pids), node=node)
                err = ErrorCode(resp.error_code)
                if err == E.COORDINATOR_LOAD_IN_PROGRESS:
                    raise _Retry(ApiError(err))
                if err == E.COORDINATOR_NOT_AVAILABLE:
                    raise ApiError(err, f"ListTransactions request sent to broker {node} failed because the "
                                        f"coordinator is shutting down")
                if err != E.NONE:
                    raise ApiError(err, f"ListTransactions request sent to broker {node} failed with an "
                                        f"unexpected exception")
                return [(s.transactional_id, s.producer_id, s.transaction_state) for s in resp.transaction_states]
            out[node] = self._retrying(ask)
        return out

    # ------------------------------------------------------------------ abort

    def abort(self, spec: AbortSpec) -> None:
        """WriteTxnMarkers (ABORT) for one partition at its leader, as Admin.abortTransaction."""
        def attempt() -> None:
            leader = self.leaders([spec.tp[0]]).get(spec.tp, -1)
            if leader == -1:
                raise ApiError(E.UNKNOWN_TOPIC_OR_PARTITION)
            if leader is None:
                raise _Retry(ApiError(E.LEADER_NOT_AVAILABLE))

            def build(cls, v):
                m = cls.WritableTxnMarker
                return cls(markers=[m(producer_id=spec.producer_id, producer_epoch=spec.producer_epoch,
                                      transaction_result=False, coordinator_epoch=spec.coordinator_epoch,
                                      topics=[m.WritableTxnMarkerTopic(name=spec.tp[0], partition_indexes=[spec.tp[1]])])])
            resp = self.client.call(ApiKey.WriteTxnMarkers, build, node=leader)
            _abort_outcome(spec, ErrorCode(resp.markers[0].topics[0].partitions[0].error_code))
        self._retrying(attempt)


def _abort_outcome(spec: AbortSpec, err: ErrorCode) -> None:
    """AbortTransactionHandler's reading of the partition's error."""
    what = f"WriteTxnMarkers request with {spec}"
    if err == E.NONE:
        return
    if err == E.CLUSTER_AUTHORIZATION_FAILED:
        raise ApiError(err, f"{what} failed due to cluster authorization error")
    if err == E.INVALID_PRODUCER_EPOCH:
        raise ApiError(err, f"{what} failed due an invalid producer epoch")
    if err == E.TRANSACTION_COORDINATOR_FENCED:
        raise ApiError(err, f"{what} failed since the provided coordinator epoch {spec.coordinator_epoch} has been "
                            f"fenced by the active coordinator")
    if err in (E.NOT_LEADER_OR_FOLLOWER, E.REPLICA_NOT_AVAILABLE, E.BROKER_NOT_AVAILABLE, E.UNKNOWN_TOPIC_OR_PARTITION):
        raise _Retry(ApiError(err))
    raise ApiError(err, f"{what} failed due to unexpected error: {err.message}")


def _group(items: Iterable[T], key: Callable[[T], object]) -> dict:
    out: dict = {}
    for item in items:
        out.setdefault(key(item), []).append(item)
    return out
