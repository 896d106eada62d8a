"""Request/response encoding with Kafka's header rules (sans I/O).

Header rules that real clients depend on:
* request header v2 (tagged fields after client_id) for flexible request versions, else v1;
* response header v1 (a tagged-fields byte) for flexible versions, EXCEPT ApiVersions, whose
  response header is always v0 (KIP-511) -- one extra byte there makes librdkafka crash;
* an ApiVersions request at a version we don't know is answered with UNSUPPORTED_VERSION
  encoded as ApiVersions v0, listing our ranges, so the client can retry at our maximum.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Iterable

from pylog.protocol.api import ApiKey, ApiMessage, is_flexible, request_class, response_class
from pylog.protocol.errors import ErrorCode

_HDR_CLIENT = struct.Struct(">hhih")  # api key, version, correlation id, client_id length
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


class MalformedRequest(Exception):
    """The frame is not a request we can decode: the connection must be closed."""


class UnsupportedApi(MalformedRequest):
    """An API key we don't implement: Kafka closes the connection, and so do we."""


@dataclass(slots=True)
class RequestHeader:
    """The fields of Kafka's request header (v1/v2)."""

    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    size: int  # bytes the header occupies at the start of the frame


_SMALL_UVARINTS = [bytes((i,)) for i in range(0x80)]


def uvarint_bytes(n: int) -> bytes:
    """An unsigned varint, as the compact lengths and tags of flexible versions are written."""
    if 0 <= n < 0x80:
        return _SMALL_UVARINTS[n]
    if n < 0:  # a negative index would pick a wrong byte from the table instead of failing
        raise ValueError(f"an unsigned varint cannot hold {n}")
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def read_uvarint(buf: bytes | bytearray | memoryview, pos: int) -> tuple[int, int]:
    """An unsigned varint at `pos`: (value, position after it); MalformedRequest if truncated or too long."""
    value = shift = 0
    while True:
        if pos >= len(buf):
            raise MalformedRequest("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 35:
            raise MalformedRequest("varint too long")


def skip_tagged_fields(buf: bytes | bytearray | memoryview, pos: int) -> int:
    """The position after a tagged-fields section (count, then tag/size/bytes per field)."""
    count, pos = read_uvarint(buf, pos)
    for _ in range(count):
        _tag, pos = read_uvarint(buf, pos)
        size, pos = read_uvarint(buf, pos)
        pos += size
    return pos


def parse_request_header(frame: bytes | bytearray | memoryview) -> RequestHeader:
    """Decode the request header at the start of a frame."""
    if len(frame) < 10:
        raise MalformedRequest(f"frame of {len(frame)} bytes is too short for a request header")
    api_key, api_version, correlation_id, n = _HDR_CLIENT.unpack_from(frame, 0)
    pos = 10
    client_id = None
    if n >= 0:
        pos += n
        if pos > len(frame):
            raise MalformedRequest("client_id runs past the end of the frame")
        client_id = str(frame[10:pos], "utf-8", "replace")
    if is_flexible(api_key, api_version) and not (api_key == ApiKey.ControlledShutdown and api_version == 0):
        pos = skip_tagged_fields(frame, pos)
        if pos > len(frame):
            raise MalformedRequest("tagged fields run past the end of the frame")
    return RequestHeader(api_key, api_version, correlation_id, client_id, pos)


def decode_request_body(header: RequestHeader, frame: bytes | bytearray | memoryview) -> ApiMessage:
    """Decode the body that follows the header, at the header's version."""
    cls = request_class(header.api_key)
    if cls is None:
        raise UnsupportedApi(f"unknown API key {header.api_key}")
    try:
        return cls.decode(memoryview(frame)[header.size:], version=header.api_version)
    except Exception as exc:  # the codec raises assorted types on garbage; all mean "bad frame"
        raise MalformedRequest(f"cannot decode {cls.__name__} v{header.api_version}: {exc}") from exc


def response_header(header: RequestHeader) -> bytes:
    """The response header bytes (correlation id, plus the tag byte when flexible)."""
    flexible = header.api_key != ApiKey.ApiVersions and is_flexible(header.api_key, header.api_version)
    return _I32.pack(header.correlation_id) + (b"\x00" if flexible else b"")


def encode_response(header: RequestHeader, response: ApiMessage, version: int | None = None) -> bytes:
    """Frame a response for the request `header` (size prefix, header, body)."""
    body = response.encode(version=header.api_version if version is None else version)
    head = response_header(header)
    return _I32.pack(len(head) + len(body)) + head + body


def api_versions_unsupported(header: RequestHeader, ranges: Iterable[tuple[int, int, int]]) -> bytes:
    """UNSUPPORTED_VERSION as ApiVersions v0 with our ranges, for an ApiVersions version we lack."""
    resp_cls = response_class(ApiKey.ApiVersions)
    resp = resp_cls[0](
        error_code=int(ErrorCode.UNSUPPORTED_VERSION),
        api_keys=[resp_cls.ApiVersion(api_key=k, min_version=lo, max_version=hi) for k, lo, hi in ranges],
    )
    body = resp.encode(version=0)
    return _I32.pack(4 + len(body)) + _I32.pack(header.correlation_id) + body


def encode_request(request: ApiMessage, version: int, correlation_id: int, client_id: str | None) -> bytes:
    """Frame a request (used by the inter-broker client and the tools' client)."""
    request.API_VERSION = version
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(header=True, framed=True))


def decode_response(api_key: int, version: int, frame: bytes | bytearray | memoryview) -> tuple[int, ApiMessage]:
    """Decode a response frame (without size prefix): (correlation id, message)."""
    (correlation_id,) = _I32.unpack_from(frame, 0)
    pos = 4
    if api_key != ApiKey.ApiVersions and is_flexible(api_key, version):
        pos = skip_tagged_fields(frame, pos)
    cls = response_class(api_key)
    if api_key == ApiKey.ApiVersions and len(frame) >= pos + 2 and _I16.unpack_from(frame, pos)[0] != 0:
        version = 0  # an ApiVersions error response is always encoded as v0
    return correlation_id, cls.decode(memoryview(frame)[pos:], version=version)
