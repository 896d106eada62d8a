"""Per-partition traffic counters, sampled by the metrics reporter (bytes and messages in/out)."""

from __future__ import annotations

from collections import defaultdict


class PartitionStats:
    """Monotonic counters per (topic, partition); readers compute rates from two samples."""

    def __init__(self) -> None:
        self.bytes_in: defaultdict[tuple[str, int], int] = defaultdict(int)
        self.bytes_out: defaultdict[tuple[str, int], int] = defaultdict(int)
        self.messages_in: defaultdict[tuple[str, int], int] = defaultdict(int)

    def record_in(self, partition, size: int, messages: int) -> None:
        """Count a leader append (produce)."""
        key = (partition.topic, partition.index)
        self.bytes_in[key] += size
        self.messages_in[key] += messages

    def record_out(self, partition, size: int) -> None:
        """Count bytes served to consumers."""
        self.bytes_out[(partition.topic, partition.index)] += size

    def snapshot(self) -> dict[tuple[str, int], tuple[int, int, int]]:
        """(bytes in, bytes out, messages in) per partition so far."""
        keys = set(self.bytes_in) | set(self.bytes_out)
        return {k: (self.bytes_in.get(k, 0), self.bytes_out.get(k, 0), self.messages_in.get(k, 0)) for k in keys}
