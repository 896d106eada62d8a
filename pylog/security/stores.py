"""Kafka's keystores and truststores for Python's ssl: PEM files and PKCS12 stores.

`ssl.keystore.type` / `ssl.truststore.type` take Kafka's values. PEM is read by ssl directly.
PKCS12 (Kafka's usual store since Java 9, made by keytool or openssl) is opened with `cryptography`:
the private key and its chain are handed to ssl through a private temporary PEM file (ssl only loads
keys from files) whose key is re-encrypted under a one-time password and which is removed at once; a
truststore's certificates go to ssl in memory. JKS, Java's own format, has no maintained Python
reader: it is refused with the keytool command that converts it.
"""

from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from typing import Any, Callable

from pylog.common.configdef import ConfigError, Password

__all__ = ["SUPPORTED_STORE_TYPES", "load_keystore", "load_truststore"]

SUPPORTED_STORE_TYPES = ("PEM", "PKCS12")
Lookup = Callable[[str], Any]  # key suffix (".type", ".location", ...) -> value or None


def _text(value: Any) -> str | None:
    if isinstance(value, Password):
        value = value.value
    return None if value is None else str(value)


def _store_type(prefix: str, kind: str, location: str) -> str:
    kind = kind.upper()
    if kind == "JKS":
        raise ConfigError(
            f"{prefix}.type=JKS is not supported by pylog (no maintained Python reader for Java keystores): convert "
            f"the store with `keytool -importkeystore -srckeystore {location} -destkeystore {location}.p12 "
            f"-deststoretype PKCS12`, then set {prefix}.type=PKCS12 and {prefix}.location={location}.p12",
            key=f"{prefix}.type")
    if kind not in SUPPORTED_STORE_TYPES:
        raise ConfigError(f"Invalid value {kind} for configuration {prefix}.type: pylog reads "
                          f"{', '.join(SUPPORTED_STORE_TYPES)}", key=f"{prefix}.type")
    return kind


def _pkcs12(prefix: str, location: str, password: str | None) -> Any:
    try:
        from cryptography.hazmat.primitives.serialization import pkcs12
    except ImportError:  # pragma: no cover - cryptography is an install requirement
        raise ConfigError(f"{prefix}.type=PKCS12 needs the Python package cryptography", key=f"{prefix}.type") \
            from None
    try:
        with open(location, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise ConfigError(f"Cannot read {location} ({prefix}.location): {exc.strerror}",
                          key=f"{prefix}.location") from None
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except ValueError:
        raise ConfigError(f"Cannot open the PKCS12 store {location} ({prefix}.location): wrong {prefix}.password "
                          f"or not a PKCS12 file", key=f"{prefix}.password") from None


def load_keystore(ctx: ssl.SSLContext, kind: str, location: str, store_password: Any, key_password: Any) -> None:
    """Load this side's private key and certificate chain from a PEM or PKCS12 keystore into ctx."""
    prefix = "ssl.keystore"
    if _store_type(prefix, str(kind), location) == "PEM":
        try:
            ctx.load_cert_chain(location, password=_text(key_password))
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"Cannot load the PEM keystore {location} ({prefix}.location): {exc}",
                              key=f"{prefix}.location") from None
        return
    store = _pkcs12(prefix, location, _text(store_password))
    if store.key is None or store.cert is None:
        raise ConfigError(f"The PKCS12 keystore {location} holds no private key with its certificate",
                          key=f"{prefix}.location")
    _load_key_and_chain(ctx, store)


def _load_key_and_chain(ctx: ssl.SSLContext, store: Any) -> None:
    from cryptography.hazmat.primitives import serialization as ser
    once = secrets.token_urlsafe(24)
    pem = store.key.private_bytes(ser.Encoding.PEM, ser.PrivateFormat.PKCS8,
                                  ser.BestAvailableEncryption(once.encode()))
    pem += store.cert.certificate.public_bytes(ser.Encoding.PEM)
    pem += b"".join(c.certificate.public_bytes(ser.Encoding.PEM) for c in store.additional_certs)
    fd, path = tempfile.mkstemp(prefix="pylog-keystore-", suffix=".pem")  # mode 0600
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(pem)
        ctx.load_cert_chain(path, password=once)
    finally:
        os.unlink(path)


def load_truststore(ctx: ssl.SSLContext, kind: str, location: str, password: Any) -> None:
    """Trust the certificates of a PEM file or a PKCS12 truststore."""
    prefix = "ssl.truststore"
    if _store_type(prefix, str(kind), location) == "PEM":
        try:
            ctx.load_verify_locations(location)
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError(f"Cannot load the PEM truststore {location}: {exc}", key=f"{prefix}.location") from None
        return
    from cryptography.hazmat.primitives.serialization import Encoding
    store = _pkcs12(prefix, location, _text(password))
    certs = ([store.cert] if store.cert is not None else []) + list(store.additional_certs)
    if not certs:
        raise ConfigError(f"The PKCS12 truststore {location} holds no certificate", key=f"{prefix}.location")
    ctx.load_verify_locations(cadata="".join(c.certificate.public_bytes(Encoding.PEM).decode() for c in certs))
