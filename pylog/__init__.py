"""pylog: a ZooKeeper-mode, Kafka-compatible broker, its admin toolkit and a reassignment planner."""

__version__ = "0.1.0"
