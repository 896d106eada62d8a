"""pylog's balancer: Cruise Control's REST API in front of pylog's planner and KIP-455 executor."""
