"""ZooKeeper: ZK-mode Kafka's znode paths and JSON codecs, session handling, the server launcher."""
