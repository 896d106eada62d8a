"""KIP-848 consumer groups: the broker assigns partitions and members reconcile through ConsumerGroupHeartbeat.

`model.py` is the group as data (group epoch, target assignment epoch, members with their epochs, assigned
and pending-revocation partitions), `reconcile.py` moves one member towards its target (revoke before
assign), `assignors.py` holds the broker-side `uniform` and `range` assignors, `decisions.py` the pure rules
(heartbeat, leave, session and rebalance expiry, offset checks) returning the answer and effects,
`records.py` Kafka's `__consumer_offsets` records for them, and `coordinator.py` the thin shell that
carries out effects (timers, writes) beside the classic coordinator, sharing its ownership and offsets.
"""
