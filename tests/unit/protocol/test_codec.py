"""Header rules real clients depend on, checked byte by byte."""

import struct

import pytest

from pylog.protocol import api
from pylog.protocol.codec import (
    MalformedRequest,
    UnsupportedApi,
    api_versions_unsupported,
    decode_request_body,
    decode_response,
    encode_request,
    encode_response,
    parse_request_header,
    read_uvarint,
    uvarint_bytes,
)


def test_request_header_v1_and_v2_are_parsed():
    req = api.request_class(3)[8](topics=None, allow_auto_topic_creation=False,
                                  include_cluster_authorized_operations=False,
                                  include_topic_authorized_operations=False)
    frame = encode_request(req, 8, correlation_id=7, client_id="rdkafka")[4:]
    hdr = parse_request_header(frame)
    assert (hdr.api_key, hdr.api_version, hdr.correlation_id, hdr.client_id) == (3, 8, 7, "rdkafka")
    assert hdr.size == 2 + 2 + 4 + 2 + len("rdkafka")  # v1: no tagged fields
    # ApiVersions v3 is flexible: the request header is v2, with a tagged-field count byte.
    av = api.request_class(18)[3](client_software_name="x", client_software_version="1")
    frame = encode_request(av, 3, correlation_id=1, client_id="c")[4:]
    hdr = parse_request_header(frame)
    assert hdr.size == 2 + 2 + 4 + 2 + 1 + 1
    body = decode_request_body(hdr, frame)
    assert body.client_software_name == "x"


def test_api_versions_response_header_is_always_v0():
    av = api.request_class(18)[3](client_software_name="x", client_software_version="1")
    hdr = parse_request_header(encode_request(av, 3, 42, "c")[4:])
    resp = api.response_class(18)[3](error_code=0, api_keys=[], throttle_time_ms=0)
    out = encode_response(hdr, resp)
    size, corr = struct.unpack_from(">ii", out)
    assert size == len(out) - 4 and corr == 42
    # v0 header: the body (error code 0) follows the correlation id directly, no tag byte
    assert out[8:10] == b"\x00\x00"
    corr2, decoded = decode_response(18, 3, out[4:])
    assert corr2 == 42 and decoded.error_code == 0


def test_flexible_response_header_carries_a_tag_byte():
    req = api.request_class(19)[5](topics=[], timeout_ms=1000, validate_only=False)
    hdr = parse_request_header(encode_request(req, 5, 9, "c")[4:])
    resp = api.response_class(19)[5](throttle_time_ms=0, topics=[])
    out = encode_response(hdr, resp)
    assert out[4:9] == struct.pack(">i", 9) + b"\x00"


def test_unsupported_api_versions_version_is_answered_as_v0_with_our_ranges():
    frame = struct.pack(">hhih", 18, 99, 5, 1) + b"c" + b"\x00"
    hdr = parse_request_header(frame)
    out = api_versions_unsupported(hdr, [(0, 0, 8), (18, 0, 3)])
    body = out[8:]
    assert struct.unpack_from(">h", body)[0] == 35
    assert struct.unpack_from(">i", body, 2)[0] == 2
    assert struct.unpack_from(">hhh", body, 6) == (0, 0, 8)


def test_garbage_is_malformed_not_a_crash():
    with pytest.raises(MalformedRequest):
        parse_request_header(b"\x00\x01")
    hdr = parse_request_header(struct.pack(">hhih", 3, 8, 1, -1) + b"\xff\xff\xff")
    with pytest.raises(MalformedRequest):
        decode_request_body(hdr, struct.pack(">hhih", 3, 8, 1, -1) + b"\x7f\xff\xff\xff")
    hdr = parse_request_header(struct.pack(">hhih", 999, 0, 1, -1))
    with pytest.raises(UnsupportedApi):
        decode_request_body(hdr, struct.pack(">hhih", 999, 0, 1, -1))


@pytest.mark.parametrize("n", [0, 1, 0x7F, 0x80, 300, 16383, 16384, 2**31 - 1])
def test_uvarint_bytes_round_trips_through_read_uvarint(n):
    raw = uvarint_bytes(n)
    assert read_uvarint(raw, 0) == (n, len(raw))


def test_a_negative_uvarint_is_refused_not_encoded_as_a_wrong_byte():
    with pytest.raises(ValueError):
        uvarint_bytes(-1)
