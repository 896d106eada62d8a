"""The Kafka version a version-inferring client (kafka-python) identifies a live pylog broker as."""

import re
from pathlib import Path

import pytest
from kafka.admin import KafkaAdminClient

pytestmark = pytest.mark.integration

README = Path(__file__).resolve().parents[3] / "README.md"


def test_kafka_python_identifies_the_release_the_readme_names(cluster):
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        seen = admin._client.check_version()  # what its own log line "Broker version identified as" shows
    finally:
        admin.close()
    section = README.read_text().split("## Which Kafka pylog presents as", 1)[1]
    claimed = re.search(r"kafka-python \S+ infers \*\*Kafka (\d+)\.(\d+)\*\*", section)
    assert claimed and tuple(map(int, claimed.groups())) == tuple(seen[:2])
