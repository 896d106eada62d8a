"""A small blocking Kafka-protocol client for the tools, the Spark data source and the tests."""
