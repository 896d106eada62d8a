"""AlterConfigs (API 33, the legacy non-incremental one) through the stock admin clients that still use it.

Kafka's semantics: a resource's entries replace all of its overrides (keys left out go back to their
defaults); validate_only changes nothing; bad values and null values fail that resource alone.
"""

from __future__ import annotations

import asyncio

import pytest
from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType
from kafka.admin import ConfigResource as KpConfigResource
from kafka.admin import ConfigResourceType, KafkaAdminClient

from support.clients import create_topic, wait_for

pytestmark = [pytest.mark.integration,
              pytest.mark.filterwarnings("ignore:alter_configs has been deprecated:DeprecationWarning")]

DYNAMIC_TOPIC, DYNAMIC_BROKER, DEFAULT = 1, 2, 5  # ConfigSource ids


def _configs(a: AdminClient, rtype, name: str) -> dict[str, tuple[str, int]]:
    res = ConfigResource(rtype, name)
    return {k: (e.value, e.source) for k, e in a.describe_configs([res])[res].result(30).items()}


def test_confluent_alter_configs_replaces_all_overrides(cluster):
    a = AdminClient({"bootstrap.servers": cluster.bootstrap})
    create_topic(cluster.bootstrap, "ac", configs={"retention.ms": "123456", "cleanup.policy": "compact"})
    before = _configs(a, ResourceType.TOPIC, "ac")
    assert before["retention.ms"] == ("123456", DYNAMIC_TOPIC)

    dry = ConfigResource(ResourceType.TOPIC, "ac", set_config={"segment.ms": "3600000"})
    assert a.alter_configs([dry], validate_only=True)[dry].result(30) is None
    assert _configs(a, ResourceType.TOPIC, "ac") == before

    res = ConfigResource(ResourceType.TOPIC, "ac", set_config={"segment.ms": "3600000"})
    assert a.alter_configs([res])[res].result(30) is None
    after = _configs(a, ResourceType.TOPIC, "ac")
    assert after["segment.ms"] == ("3600000", DYNAMIC_TOPIC)
    # Left out of the request, so back to the defaults.
    assert after["retention.ms"] == ("604800000", DEFAULT)
    assert after["cleanup.policy"] == ("delete", DEFAULT)

    bad = ConfigResource(ResourceType.TOPIC, "ac", set_config={"segment.ms": "-5"})
    other = ConfigResource(ResourceType.TOPIC, "no-such-topic", set_config={"segment.ms": "1000"})
    out = a.alter_configs([bad, other])
    with pytest.raises(Exception, match="segment.ms"):
        out[bad].result(30)
    with pytest.raises(Exception, match="does not exist"):
        out[other].result(30)
    assert _configs(a, ResourceType.TOPIC, "ac")["segment.ms"] == ("3600000", DYNAMIC_TOPIC)

    # The per-broker resource goes to that broker; again the request is the whole new set.
    broker = ConfigResource(ResourceType.BROKER, "0", set_config={"log.roll.ms": "7200000"})
    assert a.alter_configs([broker])[broker].result(30) is None
    wait_for(lambda: _configs(a, ResourceType.BROKER, "0")["log.roll.ms"] == ("7200000", DYNAMIC_BROKER),
             what="log.roll.ms dynamic")
    broker = ConfigResource(ResourceType.BROKER, "0", set_config={"log.index.interval.bytes": "8192"})
    assert a.alter_configs([broker])[broker].result(30) is None
    wait_for(lambda: (c := _configs(a, ResourceType.BROKER, "0"))["log.index.interval.bytes"] == ("8192", DYNAMIC_BROKER)
             and c["log.roll.ms"][1] != DYNAMIC_BROKER, what="log.roll.ms no longer overridden")
    static = ConfigResource(ResourceType.BROKER, "0", set_config={"broker.id": "7"})
    with pytest.raises(Exception, match="Cannot update these configs dynamically"):
        a.alter_configs([static])[static].result(30)


def test_kafka_python_and_aiokafka_alter_configs(cluster):
    create_topic(cluster.bootstrap, "kpac", configs={"retention.ms": "5000000"})
    k = KafkaAdminClient(bootstrap_servers=cluster.bootstrap, request_timeout_ms=30000)
    try:
        k.alter_configs([KpConfigResource(ConfigResourceType.TOPIC, "kpac", configs={"max.message.bytes": "20000"})],
                        incremental=False)
        described = k.describe_configs([KpConfigResource(ConfigResourceType.TOPIC, "kpac")])
    finally:
        k.close()
    (by_name,) = described.values()
    entries = by_name["kpac"]
    assert entries["max.message.bytes"]["value"] == "20000", entries["max.message.bytes"]
    # kafka-python re-sends the other overrides itself, knowing that AlterConfigs drops what is left out.
    assert entries["retention.ms"]["value"] == "5000000"

    async def aio() -> list:
        from aiokafka.admin import AIOKafkaAdminClient
        from aiokafka.admin.config_resource import ConfigResource as AioConfigResource
        from aiokafka.admin.config_resource import ConfigResourceType as AioType
        client = AIOKafkaAdminClient(bootstrap_servers=cluster.bootstrap)
        await client.start()
        try:
            return await client.alter_configs([AioConfigResource(AioType.TOPIC, "kpac",
                                                                  configs={"retention.ms": "999999"})])
        finally:
            await client.close()

    (resp,) = asyncio.run(aio())
    ((error_code, _msg, _rtype, name, *_),) = resp.resources
    assert (error_code, name) == (0, "kpac")
    a = AdminClient({"bootstrap.servers": cluster.bootstrap})
    final = _configs(a, ResourceType.TOPIC, "kpac")
    assert final["retention.ms"] == ("999999", DYNAMIC_TOPIC)
    assert final["max.message.bytes"][1] == DEFAULT  # aiokafka sends just what it was given: replaced

