"""Which message classes encode and decode each Kafka API, and how their headers are framed.

kafka-python 3.x compiles Kafka's own JSON message schemas into fast encoders/decoders; we use
those for every client-facing API and add schemas of our own (pylog/protocol/schemas/) for the
inter-broker APIs kafka-python does not ship (LeaderAndIsr, StopReplica, UpdateMetadata,
ControlledShutdown), for KIP-848's ConsumerGroupHeartbeat and ConsumerGroupDescribe, and for the
delegation token APIs (38-41), which it does not ship either.
"""

from __future__ import annotations

import functools

from kafka.protocol.api_key import ApiKey
from kafka.protocol.api_message import ApiMessage
from kafka.protocol import admin as _admin
from kafka.protocol import consumer as _consumer
from kafka.protocol import metadata as _metadata
from kafka.protocol import producer as _producer
from kafka.protocol import sasl as _sasl

from pylog.protocol import schemas as _schemas

__all__ = ["ApiKey", "ApiMessage", "request_class", "response_class", "is_flexible", "api_name"]


class LeaderAndIsrRequest(ApiMessage, load_json=_schemas):
    """Controller -> broker: become leader or follower of these partitions."""


class LeaderAndIsrResponse(ApiMessage, load_json=_schemas):
    """Per-partition outcome of a LeaderAndIsr request."""


class StopReplicaRequest(ApiMessage, load_json=_schemas):
    """Controller -> broker: stop (and maybe delete) these replicas."""


class StopReplicaResponse(ApiMessage, load_json=_schemas):
    """Per-partition outcome of a StopReplica request."""


class UpdateMetadataRequest(ApiMessage, load_json=_schemas):
    """Controller -> broker: the live brokers and every partition's leader and ISR."""


class UpdateMetadataResponse(ApiMessage, load_json=_schemas):
    """Acknowledges an UpdateMetadata request."""


class ControlledShutdownRequest(ApiMessage, load_json=_schemas):
    """Broker -> controller: move my leaderships away before I exit."""


class ControlledShutdownResponse(ApiMessage, load_json=_schemas):
    """The partitions the shutting-down broker still leads."""


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_schemas):
    """A KIP-848 member joins, heartbeats, acknowledges its assignment or leaves."""


class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_schemas):
    """The member's epoch and, when it changed, its assignment."""


class ConsumerGroupDescribeRequest(ApiMessage, load_json=_schemas):
    """Describe KIP-848 consumer groups."""


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_schemas):
    """Each consumer group's epochs, assignor and members with their current and target assignments."""


class CreateDelegationTokenRequest(ApiMessage, load_json=_schemas):
    """A delegation token for the caller or another owner (KIP-48, KIP-373)."""


class CreateDelegationTokenResponse(ApiMessage, load_json=_schemas):
    """The new token's id, HMAC and timestamps."""


class RenewDelegationTokenRequest(ApiMessage, load_json=_schemas):
    """Push a token's expiry out."""


class RenewDelegationTokenResponse(ApiMessage, load_json=_schemas):
    """The renewed token's expiry."""


class ExpireDelegationTokenRequest(ApiMessage, load_json=_schemas):
    """Bring a token's expiry in, or end it now."""


class ExpireDelegationTokenResponse(ApiMessage, load_json=_schemas):
    """The token's new expiry."""


class DescribeDelegationTokenRequest(ApiMessage, load_json=_schemas):
    """The tokens of some owners, or all the caller may see."""


class DescribeDelegationTokenResponse(ApiMessage, load_json=_schemas):
    """The tokens the caller may see."""


def _pairs() -> dict[int, tuple[type[ApiMessage], type[ApiMessage]]]:
    mods = (_admin, _consumer, _metadata, _producer, _sasl)
    out: dict[int, tuple[type[ApiMessage], type[ApiMessage]]] = {}
    for key in ApiKey:
        req = resp = None
        for mod in mods:
            req = req or getattr(mod, f"{key.name}Request", None)
            resp = resp or getattr(mod, f"{key.name}Response", None)
        if req is not None and resp is not None:
            out[int(key)] = (req, resp)
    for req, resp in (
        (LeaderAndIsrRequest, LeaderAndIsrResponse),
        (StopReplicaRequest, StopReplicaResponse),
        (UpdateMetadataRequest, UpdateMetadataResponse),
        (ControlledShutdownRequest, ControlledShutdownResponse),
        (ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResponse),
        (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse),
        (CreateDelegationTokenRequest, CreateDelegationTokenResponse),
        (RenewDelegationTokenRequest, RenewDelegationTokenResponse),
        (ExpireDelegationTokenRequest, ExpireDelegationTokenResponse),
        (DescribeDelegationTokenRequest, DescribeDelegationTokenResponse),
    ):
        out[req.API_KEY] = (req, resp)
    return out


_MESSAGES = _pairs()


def request_class(api_key: int) -> type[ApiMessage] | None:
    """The request message class for an API key, or None when no schema is known."""
    pair = _MESSAGES.get(api_key)
    return pair[0] if pair else None


def response_class(api_key: int) -> type[ApiMessage] | None:
    """The response message class for an API key, or None when no schema is known."""
    pair = _MESSAGES.get(api_key)
    return pair[1] if pair else None


def schema_max_version(api_key: int) -> int:
    """The highest version the schema can encode (an upper bound for a handler's range)."""
    req = request_class(api_key)
    return -1 if req is None else int(req.max_version)


@functools.lru_cache(maxsize=None)
def is_flexible(api_key: int, version: int) -> bool:
    """Whether this API version uses compact encodings and tagged fields (cached: asked per request)."""
    req = request_class(api_key)
    return bool(req is not None and req.flexible_version_q(version))


def api_name(api_key: int) -> str:
    """Kafka's name for an API key (e.g. 'Produce'), or 'Unknown(<key>)'."""
    try:
        return ApiKey(api_key).name
    except ValueError:
        return f"Unknown({api_key})"
