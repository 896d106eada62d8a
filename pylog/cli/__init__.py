"""Operator commands (click): Kafka's flags and output formats, plus JSON and rich tables."""
