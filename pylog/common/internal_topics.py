"""The topics a broker reports as internal (Metadata's is_internal) and the tools protect.

Kafka's Topic.INTERNAL_TOPICS, plus pylog's own metrics topic. Other names starting with "__" are
ordinary topics, as in Kafka: clients produce to them (kafka-python refuses internal ones).
`__pylog_partition_load` stays an ordinary (compacted) topic for that reason: the Spark load job
writes it through the pylog sink, a kafka-python producer.
"""

from pylog.common.metrics_format import METRICS_TOPIC

INTERNAL_TOPICS = ("__consumer_offsets", "__transaction_state", METRICS_TOPIC)


def is_internal(name: str) -> bool:
    """Whether Metadata marks `name` internal."""
    return name in INTERNAL_TOPICS
