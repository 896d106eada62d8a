"""Small shared type names."""

from __future__ import annotations

TP = tuple[str, int]  # a topic partition: (topic, partition index)
