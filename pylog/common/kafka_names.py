"""Names of Kafka 3.3 broker configs that pylog accepts without acting on them (not in BROKER_CONFIGS).

A server.properties written for Kafka should start pylog without a warning per line; only names that
Kafka itself would not know are reported. Values of these keys are not validated.
"""

from __future__ import annotations

__all__ = ["KAFKA_ONLY_BROKER_KEYS", "KAFKA_ONLY_DYNAMIC_CLUSTER", "KAFKA_ONLY_DYNAMIC_PER_BROKER",
           "is_kafka_only_key"]

KAFKA_ONLY_BROKER_KEYS: frozenset[str] = frozenset((
    "alter.config.policy.class.name", "alter.log.dirs.replication.quota.window.num",
    "alter.log.dirs.replication.quota.window.size.seconds", "background.threads", "broker.heartbeat.interval.ms",
    "broker.session.timeout.ms", "client.quota.callback.class", "connection.failed.authentication.delay.ms",
    "connections.max.idle.ms", "control.plane.listener.name", "controller.listener.names",
    "controller.quorum.append.linger.ms", "controller.quorum.election.backoff.max.ms",
    "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
    "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms", "controller.quorum.voters",
    "controller.quota.window.num", "controller.quota.window.size.seconds", "create.topic.policy.class.name",
    "delete.records.purgatory.purge.interval.requests", "early.start.listeners", "fetch.max.bytes",
    "fetch.purgatory.purge.interval.requests", "group.max.size", "initial.broker.registration.timeout.ms",
    "inter.broker.protocol.version", "kafka.metrics.polling.interval.secs", "kafka.metrics.reporters",
    "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second",
    "log.cleaner.threads", "max.connection.creation.rate", "max.connections", "max.connections.per.ip",
    "max.connections.per.ip.overrides", "max.incremental.fetch.session.cache.slots", "metadata.log.dir",
    "metadata.log.max.record.bytes.between.snapshots", "metadata.log.segment.bytes",
    "metadata.log.segment.min.bytes", "metadata.log.segment.ms", "metadata.max.idle.interval.ms",
    "metadata.max.retention.bytes", "metadata.max.retention.ms", "metric.reporters", "metrics.num.samples",
    "metrics.recording.level", "metrics.sample.window.ms", "node.id", "num.replica.alter.log.dirs.threads",
    "offset.metadata.max.bytes", "offsets.commit.required.acks", "offsets.commit.timeout.ms",
    "offsets.load.buffer.size", "offsets.retention.check.interval.ms", "offsets.topic.compression.codec",
    "password.encoder.cipher.algorithm", "password.encoder.iterations", "password.encoder.key.length",
    "password.encoder.keyfactory.algorithm", "password.encoder.old.secret", "password.encoder.secret",
    "principal.builder.class", "process.roles", "producer.purgatory.purge.interval.requests",
    "queued.max.request.bytes", "queued.max.requests", "quota.window.num", "quota.window.size.seconds",
    "remote.log.index.file.cache.total.size.bytes", "remote.log.manager.task.interval.ms",
    "remote.log.manager.task.retry.backoff.max.ms", "remote.log.manager.task.retry.backoff.ms",
    "remote.log.manager.task.retry.jitter", "remote.log.manager.thread.pool.size",
    "remote.log.metadata.manager.class.name", "remote.log.metadata.manager.class.path",
    "remote.log.metadata.manager.impl.prefix", "remote.log.metadata.manager.listener.name",
    "remote.log.reader.max.pending.tasks", "remote.log.reader.threads", "remote.log.storage.manager.class.name",
    "remote.log.storage.manager.class.path", "remote.log.storage.manager.impl.prefix",
    "remote.log.storage.system.enable", "replica.selector.class", "replica.socket.receive.buffer.bytes",
    "replication.quota.window.num", "replication.quota.window.size.seconds", "sasl.client.callback.handler.class",
    "sasl.jaas.config", "sasl.kerberos.kinit.cmd", "sasl.kerberos.min.time.before.relogin",
    "sasl.kerberos.principal.to.local.rules", "sasl.kerberos.service.name", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.login.callback.handler.class", "sasl.login.class",
    "sasl.login.connect.timeout.ms", "sasl.login.read.timeout.ms", "sasl.login.refresh.buffer.seconds",
    "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
    "sasl.login.retry.backoff.max.ms", "sasl.login.retry.backoff.ms", "sasl.mechanism.controller.protocol",
    "sasl.oauthbearer.clock.skew.seconds", "sasl.oauthbearer.expected.audience", "sasl.oauthbearer.expected.issuer",
    "sasl.oauthbearer.jwks.endpoint.refresh.ms", "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "sasl.oauthbearer.jwks.endpoint.url",
    "sasl.oauthbearer.scope.claim.name", "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.token.endpoint.url",
    "sasl.server.callback.handler.class", "sasl.server.max.receive.size", "security.providers",
    "socket.connection.setup.timeout.max.ms", "socket.connection.setup.timeout.ms", "socket.listen.backlog.size",
    "ssl.engine.factory.class", "ssl.keymanager.algorithm", "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.principal.mapping.rules", "ssl.provider", "ssl.secure.random.implementation", "ssl.trustmanager.algorithm",
    "ssl.truststore.certificates", "transaction.state.log.load.buffer.size", "zookeeper.clientCnxnSocket",
    "zookeeper.max.in.flight.requests",
    "zookeeper.ssl.cipher.suites", "zookeeper.ssl.client.enable", "zookeeper.ssl.crl.enable",
    "zookeeper.ssl.enabled.protocols", "zookeeper.ssl.endpoint.identification.algorithm",
    "zookeeper.ssl.keystore.location", "zookeeper.ssl.keystore.password", "zookeeper.ssl.keystore.type",
    "zookeeper.ssl.ocsp.enable", "zookeeper.ssl.protocol", "zookeeper.ssl.truststore.location",
    "zookeeper.ssl.truststore.password", "zookeeper.ssl.truststore.type",
))

# Of those, the ones Kafka lets you change dynamically (DynamicBrokerConfig.AllDynamicConfigs), so a
# dynamic update naming them is not refused as "Cannot update these configs dynamically".
KAFKA_ONLY_DYNAMIC_CLUSTER: frozenset[str] = frozenset((
    "log.cleaner.threads", "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second",
    "background.threads", "metric.reporters", "max.connections.per.ip", "max.connections.per.ip.overrides",
    "max.connections", "max.connection.creation.rate",
))
KAFKA_ONLY_DYNAMIC_PER_BROKER: frozenset[str] = frozenset((
    "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password", "ssl.key.password",
    "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password", "ssl.keystore.certificate.chain",
    "ssl.keystore.key", "ssl.truststore.certificates", "principal.builder.class", "ssl.protocol", "ssl.provider",
    "ssl.cipher.suites", "ssl.enabled.protocols", "ssl.keymanager.algorithm", "ssl.trustmanager.algorithm",
    "ssl.endpoint.identification.algorithm", "ssl.secure.random.implementation", "ssl.client.auth",
    "ssl.engine.factory.class", "sasl.mechanism.inter.broker.protocol", "sasl.jaas.config",
    "sasl.enabled.mechanisms", "sasl.kerberos.service.name", "sasl.kerberos.kinit.cmd",
    "sasl.kerberos.ticket.renew.window.factor", "sasl.kerberos.ticket.renew.jitter",
    "sasl.kerberos.min.time.before.relogin", "sasl.kerberos.principal.to.local.rules",
    "sasl.login.refresh.window.factor", "sasl.login.refresh.window.jitter",
    "sasl.login.refresh.min.period.seconds", "sasl.login.refresh.buffer.seconds",
))


def is_kafka_only_key(name: str) -> bool:
    """A Kafka broker key pylog ignores, including per-listener overrides (listener.name.<l>.<key>)."""
    return name in KAFKA_ONLY_BROKER_KEYS or name.startswith("listener.name.")
