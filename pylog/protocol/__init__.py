"""Kafka's wire protocol, sans I/O: framing, request/response codec, record batches, error codes."""
