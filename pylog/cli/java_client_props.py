"""Kafka's Java client properties as librdkafka settings, for the tools built on confluent-kafka.

Operators already have producer/consumer property files written for Kafka's tools. Those use the
Java client's names, several of which librdkafka does not know (it would refuse the whole file with
"No such configuration property"). Here each one is translated where librdkafka has an equivalent:

    truststores/keystores   PEM: ssl.ca.location / ssl.certificate.location + ssl.key.location;
                            PKCS12: the truststore's certificates as ssl.ca.pem, the keystore as
                            librdkafka's own ssl.keystore.location/password. JKS: refused with keytool's fix.
    sasl.jaas.config        sasl.username / sasl.password (PLAIN and SCRAM login modules)
    (de)serializers         String/ByteArray/Bytes/ByteBuffer ones are what the tools do anyway: dropped
    renamed settings        delivery.timeout.ms, buffer.memory, max.request.size, fetch.max.wait.ms, ...

A property with no equivalent gets one warning on stderr and is ignored; it never fails the tool.
`make_client` also drops (with the same warning) any name librdkafka itself rejects as unknown.
"""

from __future__ import annotations

import ssl
from typing import Any, Callable, Mapping

import click

from pylog.common.configdef import ConfigError
from pylog.security.settings import parse_jaas
from pylog.security.stores import load_keystore, load_truststore

_PLAIN_SERDES = ("StringSerializer", "StringDeserializer", "ByteArraySerializer", "ByteArrayDeserializer",
                 "BytesSerializer", "BytesDeserializer", "ByteBufferSerializer", "ByteBufferDeserializer")
_SERDE_KEYS = ("key.serializer", "value.serializer", "key.deserializer", "value.deserializer")
_RENAMED = {"delivery.timeout.ms": "message.timeout.ms", "max.request.size": "message.max.bytes",
            "fetch.max.wait.ms": "fetch.wait.max.ms", "send.buffer.bytes": "socket.send.buffer.bytes",
            "receive.buffer.bytes": "socket.receive.buffer.bytes", "sasl.mechanism": "sasl.mechanisms"}
_ASSIGNORS = {"RangeAssignor": "range", "RoundRobinAssignor": "roundrobin",
              "CooperativeStickyAssignor": "cooperative-sticky"}
# The Java client's own partitioners all place a keyed record on toPositive(murmur2(key)) % partitions.
_JAVA_PARTITIONERS = ("DefaultPartitioner", "UniformStickyPartitioner", "RoundRobinPartitioner")
_NO_SUCH_PROPERTY = "No such configuration property: "
_warned: set[str] = set()


def warn_ignored(key: str, why: str = "has no librdkafka equivalent") -> None:
    """One line per property per process: the tool goes on without it."""
    if key not in _warned:
        _warned.add(key)
        click.echo(f"WARNING: the Java client property {key} {why}; it is ignored", err=True)


def _store_guess(location: str) -> str:
    ext = location.rsplit(".", 1)[-1].lower()
    return {"p12": "PKCS12", "pfx": "PKCS12", "pkcs12": "PKCS12", "jks": "JKS"}.get(ext, "PEM")


def _pkcs12_certs_pem(location: str, password: str | None) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding, pkcs12
    with open(location, "rb") as f:
        store = pkcs12.load_pkcs12(f.read(), password.encode() if password is not None else None)
    certs = ([store.cert] if store.cert is not None else []) + list(store.additional_certs)
    return "".join(c.certificate.public_bytes(Encoding.PEM).decode() for c in certs)


def _stores(props: dict[str, str], out: dict[str, Any]) -> None:
    """ssl.truststore.* / ssl.keystore.* -> librdkafka's PEM (or its native PKCS12 keystore) settings."""
    probe = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # loads each store once: Kafka's checks and error texts
    trust = props.pop("ssl.truststore.location", None)
    trust_type = props.pop("ssl.truststore.type", None) or (trust and _store_guess(trust))
    trust_pw = props.pop("ssl.truststore.password", None)
    if trust:
        load_truststore(probe, trust_type, trust, trust_pw)
        if trust_type.upper() == "PEM":
            out["ssl.ca.location"] = trust
        else:
            out["ssl.ca.pem"] = _pkcs12_certs_pem(trust, trust_pw)
    key = props.pop("ssl.keystore.location", None)
    key_type = props.pop("ssl.keystore.type", None) or (key and _store_guess(key))
    key_pw, key_pass = props.pop("ssl.keystore.password", None), props.pop("ssl.key.password", None)
    if key:
        load_keystore(probe, key_type, key, key_pw, key_pass)
        if key_type.upper() == "PEM":
            out.update({"ssl.certificate.location": key, "ssl.key.location": key})
            if key_pass:
                out["ssl.key.password"] = key_pass
        else:
            out.update({"ssl.keystore.location": key, "ssl.keystore.password": key_pw or ""})
    algorithm = props.pop("ssl.endpoint.identification.algorithm", None)
    if algorithm is not None:
        out["ssl.endpoint.identification.algorithm"] = algorithm.lower() or "none"


def _jaas(props: dict[str, str], out: dict[str, Any]) -> None:
    text = props.pop("sasl.jaas.config", None)
    if text is None:
        return
    login = parse_jaas(text)
    if login.client_login is None:
        warn_ignored("sasl.jaas.config", f"({login.module}) names no username and password")
        return
    out["sasl.username"], out["sasl.password"] = login.client_login
    if str(login.options.get("tokenauth", "")).lower() == "true":  # librdkafka cannot send SCRAM's extension
        warn_ignored("sasl.jaas.config's tokenauth=true", "cannot be sent by librdkafka (a delegation token's id "
                     "then logs in as a SCRAM user and fails)")
    if "PlainLoginModule" in login.module:
        out.setdefault("sasl.mechanisms", "PLAIN")


def _class_values(props: dict[str, str], out: dict[str, Any]) -> None:
    for key in _SERDE_KEYS:
        value = props.pop(key, None)
        if value is not None and not value.strip().endswith(_PLAIN_SERDES):
            warn_ignored(key, f"({value}) has no equivalent here: the tool reads and writes raw bytes")
    strategy = props.pop("partition.assignment.strategy", None)
    if strategy is not None:
        names = [_ASSIGNORS.get(c.strip().rsplit(".", 1)[-1]) for c in strategy.split(",")]
        if all(names):
            out["partition.assignment.strategy"] = ",".join(names)  # type: ignore[arg-type]
        else:
            warn_ignored("partition.assignment.strategy", f"({strategy}) has no librdkafka equivalent")
    partitioner = props.pop("partitioner.class", None)
    if partitioner is not None:
        if partitioner.strip().rsplit(".", 1)[-1] in _JAVA_PARTITIONERS:
            out["partitioner"] = "murmur2_random"
        else:
            warn_ignored("partitioner.class", f"({partitioner}) cannot run in librdkafka")


def librdkafka_config(props: Mapping[str, Any]) -> dict[str, Any]:
    """Translate Java client properties; names librdkafka shares with Java pass through unchanged."""
    rest = {k: v for k, v in props.items()}
    out: dict[str, Any] = {}
    _stores(rest, out)
    _jaas(rest, out)
    _class_values(rest, out)
    if "buffer.memory" in rest:
        out["queue.buffering.max.kbytes"] = max(1, int(rest.pop("buffer.memory")) // 1024)
    if rest.get("auto.offset.reset") == "none":
        rest["auto.offset.reset"] = "error"
    for key, value in rest.items():
        out[_RENAMED.get(key, key)] = value
    return out


def make_client(factory: Callable[[dict[str, Any]], Any], config: dict[str, Any]) -> Any:
    """factory(config), leaving out (with a warning) each property librdkafka does not know."""
    from confluent_kafka import KafkaException

    config = dict(config)
    while True:
        try:
            return factory(config)
        except KafkaException as exc:
            text = exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)
            if not text.startswith(_NO_SUCH_PROPERTY):
                raise ConfigError(f"Invalid client configuration: {text}") from None
            key = text[len(_NO_SUCH_PROPERTY):].strip().strip('"')
            if key not in config:
                raise ConfigError(f"Invalid client configuration: {text}") from None
            del config[key]
            warn_ignored(key)
