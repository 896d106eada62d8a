"""Pure assignment algorithms: create-time placement, minimal-movement rebalancing, Kafka's --generate."""
