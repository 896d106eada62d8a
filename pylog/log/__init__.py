"""Partition logs on disk: segments, indexes, checkpoints, recovery, retention."""
