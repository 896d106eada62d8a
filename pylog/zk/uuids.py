"""Kafka-style UUIDs: 16 random bytes as URL-safe base64 without padding (22 characters).

Used for topic ids (org.apache.kafka.common.Uuid) and the cluster id (CoreUtils.generateUuidAsBase64).
"""

from __future__ import annotations

import base64
import re
import uuid

_BASE64URL_22 = re.compile(r"^[A-Za-z0-9_-]{22}$")

# Uuid.ZERO_UUID ("no topic id") and Uuid.METADATA_TOPIC_ID are reserved and never generated.
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
METADATA_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"


def uuid_to_base64(raw: bytes) -> str:
    """Encode 16 bytes the way Kafka's Uuid.toString does."""
    if len(raw) != 16:
        raise ValueError(f"A UUID has 16 bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def base64_to_uuid(text: str) -> bytes:
    """Decode a Kafka UUID string to its 16 bytes; ValueError if it is not one."""
    if not isinstance(text, str) or not _BASE64URL_22.match(text):
        raise ValueError(f"Not a base64url UUID (22 characters of [A-Za-z0-9_-]): {text!r}")
    return base64.urlsafe_b64decode(text + "==")


def is_valid_uuid(text: object) -> bool:
    """True if text decodes as a Kafka UUID string."""
    try:
        base64_to_uuid(text)  # type: ignore[arg-type]
    except ValueError:
        return False
    return True


def random_uuid() -> str:
    """A fresh random id like Kafka's Uuid.randomUuid (never reserved, never starting with '-')."""
    while True:
        text = uuid_to_base64(uuid.uuid4().bytes)
        # Kafka skips ids starting with '-' because command-line tools would read them as options.
        if text not in (ZERO_UUID, METADATA_TOPIC_ID) and not text.startswith("-"):
            return text
