"""The classic-protocol group coordinator: pure decisions over plain group data, run by a thin async shell.

`decisions.py` holds the rules (join, sync, heartbeat, leave, session and join-phase expiry, commit
validation): each takes a group and a request and returns the answer and the effects (park or
answer a request, set or cancel a timer, write the group's metadata). `coordinator.py` carries
those out, with `offsets.py` for committed and transactional offsets and the admin requests, over
the in-memory `table.py`, and stores through the `OffsetsLog` seam (`store.py`) the broker
implements over `__consumer_offsets`; which partitions it serves comes from the ownership module
shared with the transaction coordinator (pylog/coordinator/ownership.py). Kafka's classic
protocol: the partition assignors run in the clients (the group leader), not here. KIP-848 groups, whose
assignors run in the broker, are pylog/coordinator/consumer/, composed into this coordinator.
"""
