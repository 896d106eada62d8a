"""Only Kafka's internal topics (and pylog's metrics topic) are reported internal: another `__` topic is
an ordinary one, which kafka-python produces to (it refuses topics Metadata marks internal)."""

from __future__ import annotations

import pytest
from kafka import KafkaProducer

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey
from support.clients import create_topic

pytestmark = pytest.mark.integration


def test_a_double_underscore_topic_is_not_internal(cluster):
    create_topic(cluster.bootstrap, "__app_state")
    p = KafkaProducer(bootstrap_servers=cluster.bootstrap)
    try:
        meta = p.send("__app_state", b"v").get(timeout=30)
        assert meta.offset == 0
    finally:
        p.close()
    with KafkaClient(cluster.bootstrap) as k:
        out = k.call(ApiKey.Metadata, lambda cls, v: cls(topics=[cls.MetadataRequestTopic(name="__app_state")],
                                                         allow_auto_topic_creation=False), max_version=9)
    assert [(t.name, t.is_internal) for t in out.topics] == [("__app_state", False)]
