"""Types and ranges of the dynamic broker configs Kafka defines but pylog does not act on.

A dynamic update (kafka-configs.sh --alter on brokers, through a broker or ZooKeeper) of one of these
is validated as Kafka's KafkaConfig would validate it - `log.cleaner.threads=abc` or `-5` is refused
with Kafka's text - and then stored, unused. Definitions from Kafka 3.9's ServerConfigs,
CleanerConfig, SocketServerConfigs, MetricConfigs and BrokerSecurityConfigs (same as 3.3's).
"""

from __future__ import annotations

from pylog.common.configdef import ConfigKey, Type, at_least, define

__all__ = ["KAFKA_ONLY_DYNAMIC_TYPES"]

_INT_MAX = 2**31 - 1
_DOUBLE_MAX = 1.7976931348623157e308

KAFKA_ONLY_DYNAMIC_TYPES: dict[str, ConfigKey] = define([
    # cluster-wide
    ConfigKey("log.cleaner.threads", Type.INT, 1, at_least(0)),
    ConfigKey("log.cleaner.io.buffer.size", Type.INT, 512 * 1024, at_least(0)),
    ConfigKey("log.cleaner.io.max.bytes.per.second", Type.DOUBLE, _DOUBLE_MAX),
    ConfigKey("background.threads", Type.INT, 10, at_least(1)),
    ConfigKey("metric.reporters", Type.LIST, []),
    ConfigKey("max.connections.per.ip", Type.INT, _INT_MAX, at_least(0)),
    ConfigKey("max.connections.per.ip.overrides", Type.STRING, ""),
    ConfigKey("max.connections", Type.INT, _INT_MAX, at_least(0)),
    ConfigKey("max.connection.creation.rate", Type.INT, _INT_MAX, at_least(0)),
    # per-broker: TLS and SASL settings Kafka reloads without a restart
    ConfigKey("ssl.keystore.certificate.chain", Type.PASSWORD, None),
    ConfigKey("ssl.keystore.key", Type.PASSWORD, None),
    ConfigKey("ssl.truststore.certificates", Type.PASSWORD, None),
    ConfigKey("principal.builder.class", Type.CLASS, None),
    ConfigKey("ssl.provider", Type.STRING, None),
    ConfigKey("ssl.keymanager.algorithm", Type.STRING, "SunX509"),
    ConfigKey("ssl.trustmanager.algorithm", Type.STRING, "PKIX"),
    ConfigKey("ssl.secure.random.implementation", Type.STRING, None),
    ConfigKey("ssl.engine.factory.class", Type.CLASS, None),
    ConfigKey("sasl.jaas.config", Type.PASSWORD, None),
    ConfigKey("sasl.kerberos.service.name", Type.STRING, None),
    ConfigKey("sasl.kerberos.kinit.cmd", Type.STRING, "/usr/bin/kinit"),
    ConfigKey("sasl.kerberos.ticket.renew.window.factor", Type.DOUBLE, 0.8),
    ConfigKey("sasl.kerberos.ticket.renew.jitter", Type.DOUBLE, 0.05),
    ConfigKey("sasl.kerberos.min.time.before.relogin", Type.LONG, 60000),
    ConfigKey("sasl.kerberos.principal.to.local.rules", Type.LIST, ["DEFAULT"]),
    ConfigKey("sasl.login.refresh.window.factor", Type.DOUBLE, 0.8),
    ConfigKey("sasl.login.refresh.window.jitter", Type.DOUBLE, 0.05),
    ConfigKey("sasl.login.refresh.min.period.seconds", Type.SHORT, 60),
    ConfigKey("sasl.login.refresh.buffer.seconds", Type.SHORT, 300),
])
