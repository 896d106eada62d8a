"""The classic-protocol group coordinator: group state machine, membership, committed offsets.

Pure parts (state table, membership, record codecs, the partition a group lives on) have no I/O;
`coordinator.py` runs them on the broker's event loop and stores through the `OffsetsLog` seam
(`store.py`) that the broker implements over `__consumer_offsets`.
"""
