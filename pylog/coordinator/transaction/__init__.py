"""The transaction coordinator: Kafka's transaction states, `__transaction_state` records, coordinator decisions."""
