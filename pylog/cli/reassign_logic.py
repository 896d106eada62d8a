"""pylog-reassign-partitions' pure decisions (ReassignPartitionsCommand 3.3): input checks, the move map
and the throttle values it implies, and each partition's reassignment state. No I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pylog.cli.common import OperationError
from pylog.common.types import TP
from pylog.planner.formats import parse_reassignment_json

TPR = tuple[str, int, int]  # Kafka's TopicPartitionReplica: (topic, partition, broker id)
ANY_LOG_DIR = "any"

# ReassignPartitionsCommand's fixed texts.
CANNOT_EXECUTE_MESSAGE = (
    "Cannot execute because there is an existing partition assignment.  Use --additional to override this and "
    "create a new partition assignment in addition to the existing one. The --additional flag can also be used to "
    "change the throttle by resubmitting the current reassignment.")
VERIFY_WARNING = ("Warning: You must run --verify periodically, until the reassignment completes, to ensure the "
                  "throttle is removed.")
LOG_DIRS_NEED_BOOTSTRAP = "bootstrap-server needs to be provided when replica reassignments are present."


def name(tp: TP) -> str:
    """Kafka's TopicPartition.toString: topic-partition."""
    return f"{tp[0]}-{tp[1]}"


def names(tps: Iterable[TP]) -> list[str]:
    """Sorted by (topic, partition), as Kafka's compareTopicPartitions orders them."""
    return [name(tp) for tp in sorted(tps)]


def _duplicates(items: Sequence) -> list:
    seen: set = set()
    out: list = []
    for item in items:
        if item in seen and item not in out:
            out.append(item)
        seen.add(item)
    return out


def parse_targets(text: str) -> dict[TP, list[int]]:
    """parseExecuteAssignmentArgs: the reassignment JSON's targets, with Kafka's checks and messages."""
    entries = parse_reassignment_json(text)
    if not entries:
        raise OperationError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas, _ in entries):
        raise OperationError("Partition replica list cannot be empty")
    dups = _duplicates([tp for tp, _, _ in entries])
    if dups:
        raise OperationError(f"Partition reassignment contains duplicate topic partitions: {','.join(map(name, dups))}")
    repeated = [(tp, _duplicates(replicas)) for tp, replicas, _ in entries if _duplicates(replicas)]
    if repeated:
        detail = ". ".join(f"{name(tp)} contains multiple entries for {','.join(map(str, d))}" for tp, d in repeated)
        raise OperationError(f"Partition replica lists may not contain duplicate entries: {detail}")
    return {tp: replicas for tp, replicas, _ in entries}


def parse_verify_targets(text: str) -> dict[TP, list[int]]:
    """parsePartitionReassignmentData for --verify/--cancel: no emptiness checks (a later entry wins)."""
    return {tp: replicas for tp, replicas, _ in parse_reassignment_json(text)}


def parse_log_dirs(text: str) -> dict[TPR, str]:
    """The replica moves of the JSON: (topic, partition, broker) -> log dir, for log_dirs entries not "any"."""
    return {(tp[0], tp[1], broker): d for tp, replicas, dirs in parse_reassignment_json(text)
            for broker, d in zip(replicas, dirs) if d != ANY_LOG_DIR}


def replica_names(replicas: Iterable[TPR]) -> list[str]:
    """TopicPartitionReplica.toString (topic-partition-broker), in compareTopicPartitionReplicas order."""
    return [f"{t}-{p}-{b}" for t, p, b in sorted(replicas, key=lambda r: (r[2], r[0], r[1]))]


# ---------------------------------------------------------------- moves and throttles

@dataclass(frozen=True)
class Ongoing:
    """An in-flight reassignment: the full replica set (target + original) and what is added/removed."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]

    @property
    def target(self) -> tuple[int, ...]:
        """Replicas once it completes."""
        return tuple(r for r in self.replicas if r not in self.removing)


@dataclass(frozen=True)
class Move:
    """A partition's sources (where the data is) and destinations (new replicas)."""

    sources: frozenset[int]
    destinations: frozenset[int]


def move_map(ongoing: Mapping[TP, Ongoing], proposed: Mapping[TP, Sequence[int]],
             current: Mapping[TP, Sequence[int]]) -> dict[TP, Move]:
    """calculateProposedMoveMap: in-flight moves plus the proposed ones (an in-flight partition keeps its
    sources, the original replicas)."""
    moves = {tp: Move(frozenset(r for r in o.replicas if r not in o.adding), frozenset(o.adding))
             for tp, o in ongoing.items()}
    for tp, replicas in proposed.items():
        if tp in moves:
            sources = moves[tp].sources
        elif tp in current:
            sources = frozenset(current[tp])
        else:
            raise OperationError(f"Trying to reassign a topic partition {name(tp)} with 0 replicas")
        moves[tp] = Move(sources, frozenset(r for r in replicas if r not in sources))
    return moves


def topic_throttles(moves: Mapping[TP, Move]) -> dict[str, tuple[str, str]]:
    """Per topic (leader.replication.throttled.replicas, follower.replication.throttled.replicas).

    calculateLeaderThrottles / calculateFollowerThrottles: "partition:broker" items in a sorted set of
    strings (so "10:1" sorts before "2:1", as in Kafka's TreeSet), joined with commas.
    """
    leader: dict[str, set[str]] = {}
    follower: dict[str, set[str]] = {}
    for (topic, p), move in moves.items():
        leader.setdefault(topic, set()).update(f"{p}:{b}" for b in move.sources)
        follower.setdefault(topic, set()).update(f"{p}:{b}" for b in move.destinations if b not in move.sources)
    return {t: (",".join(sorted(leader[t])), ",".join(sorted(follower[t]))) for t in sorted(leader)}


def reassigning_brokers(moves: Mapping[TP, Move]) -> list[int]:
    """calculateReassigningBrokers: every source and destination (they all get the broker-level rates)."""
    return sorted({b for m in moves.values() for b in m.sources | m.destinations})


# ---------------------------------------------------------------- verification

COMPLETED, IN_PROGRESS, NOT_REASSIGNED = "completed", "in_progress", "not_reassigned"


def partition_state(ongoing: Ongoing | None, current: Sequence[int] | None, target: Sequence[int]) -> str:
    """PartitionReassignmentState: in progress while listed; else done, matching the target or not."""
    if ongoing is not None:
        return IN_PROGRESS
    return COMPLETED if list(current or ()) == list(target) else NOT_REASSIGNED


def cancellable(ongoing: Mapping[TP, Ongoing], requested: Iterable[TP]) -> list[TP]:
    """cancelAssignment: the requested partitions with replicas being added or removed."""
    return sorted(tp for tp in set(requested) if tp in ongoing and (ongoing[tp].adding or ongoing[tp].removing))
