"""Security: TLS contexts, SASL (PLAIN, SCRAM) authentication, SCRAM credentials and ACLs in ZooKeeper."""
