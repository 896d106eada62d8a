"""One module per Kafka API key, each registered with the version range it implements."""
