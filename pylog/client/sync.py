"""A blocking Kafka-protocol client: version negotiation, per-broker sockets, controller routing.

For the admin tools (`--bootstrap-server`), the Spark data source, benchmarks and tests. One
request at a time per socket keeps it simple; none of its users needs pipelining.
"""

from __future__ import annotations

import itertools
import socket
import struct
from typing import Any, Callable

from pylog.protocol.api import ApiKey, ApiMessage, request_class
from pylog.protocol.codec import decode_response, encode_request

_I32 = struct.Struct(">i")
Build = Callable[[type, int], ApiMessage]


class ClientError(Exception):
    """The broker could not be reached or answered something unusable."""


class _Conn:
    def __init__(self, host: str, port: int, timeout: float, client_id: str, tls: Any = None) -> None:
        try:
            self.sock = socket.create_connection((host, port), timeout=timeout)
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if tls is not None:
                self.sock = tls.wrap_socket(self.sock, server_hostname=host)
        except OSError as exc:
            raise ClientError(f"Cannot connect to broker {host}:{port}: {exc}") from exc
        self.addr = f"{host}:{port}"
        self.client_id = client_id
        self.ids = itertools.count(1)
        self.versions: dict[int, tuple[int, int]] = {}

    def roundtrip(self, msg: ApiMessage, api_key: int, version: int, expect_response: bool = True) -> ApiMessage | None:
        corr = next(self.ids)
        try:
            self.sock.sendall(encode_request(msg, version, corr, self.client_id))
            if not expect_response:
                return None
            (size,) = _I32.unpack(self._read(4))
            frame = self._read(size)
        except OSError as exc:
            raise ClientError(f"Request to {self.addr} failed: {exc}") from exc
        got, resp = decode_response(api_key, version, frame)
        if got != corr:
            raise ClientError(f"{self.addr} answered correlation id {got}, expected {corr}")
        return resp

    def _read(self, n: int) -> bytes:
        chunks, left = [], n
        while left:
            chunk = self.sock.recv(min(left, 1 << 20))
            if not chunk:
                raise ConnectionError("connection closed by broker")
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.sock.close()


class KafkaClient:
    """Talks to a cluster through its brokers, at the newest versions both sides support."""

    def __init__(self, bootstrap: str, client_id: str = "pylog-tools", timeout: float = 30.0,
                 security: Any = None) -> None:
        self.timeout = timeout
        self.security = security  # a pylog.client.aio.ConnectSecurity (TLS context, SASL mechanism factory)
        self.client_id = client_id
        self.bootstrap = [_split(b) for b in bootstrap.split(",") if b.strip()]
        if not self.bootstrap:
            raise ClientError("no bootstrap server given")
        self._conns: dict[int | None, _Conn] = {}
        self.brokers: dict[int, tuple[str, int, str | None]] = {}
        self.controller_id: int | None = None
        self.cluster_id: str | None = None

    def __enter__(self) -> "KafkaClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close every socket."""
        for conn in self._conns.values():
            conn.close()
        self._conns.clear()

    def _conn(self, node: int | None) -> _Conn:
        if node in self._conns:
            return self._conns[node]
        if node is None:
            errors = []
            for host, port in self.bootstrap:
                try:
                    conn = _Conn(host, port, self.timeout, self.client_id, self._tls)
                    break
                except ClientError as exc:
                    errors.append(str(exc))
            else:
                raise ClientError("; ".join(errors))
        else:
            if node not in self.brokers:
                self.refresh_metadata()
            if node not in self.brokers:
                raise ClientError(f"broker {node} is not in the cluster metadata")
            host, port, _ = self.brokers[node]
            conn = _Conn(host, port, self.timeout, self.client_id, self._tls)
        self._negotiate(conn)
        if self.security is not None and self.security.sasl is not None:
            self._authenticate(conn, self.security.sasl())
        self._conns[node] = conn
        return conn

    @property
    def _tls(self) -> Any:
        return None if self.security is None else self.security.ssl_context

    def _authenticate(self, conn: _Conn, mech: Any) -> None:
        """SaslHandshake v1, then SaslAuthenticate rounds (KIP-152); ClientError when refused."""
        hs = conn.roundtrip(request_class(ApiKey.SaslHandshake)[1](mechanism=mech.mechanism), ApiKey.SaslHandshake, 1)
        if hs.error_code != 0:
            conn.close()
            raise ClientError(f"{conn.addr}: SASL mechanism {mech.mechanism} is not enabled there "
                              f"(enabled: {', '.join(hs.mechanisms) or 'none'})")
        token = mech.step(None)
        while token is not None:
            resp = conn.roundtrip(request_class(ApiKey.SaslAuthenticate)[1](auth_bytes=token),
                                  ApiKey.SaslAuthenticate, 1)
            if resp.error_code != 0:
                conn.close()
                raise ClientError(f"{conn.addr}: SASL authentication failed: {resp.error_message}")
            token = mech.step(bytes(resp.auth_bytes))

    def _negotiate(self, conn: _Conn) -> None:
        cls = request_class(ApiKey.ApiVersions)
        resp = conn.roundtrip(cls[0](), ApiKey.ApiVersions, 0)
        conn.versions = {k.api_key: (k.min_version, k.max_version) for k in resp.api_keys}

    def version_for(self, api_key: int, node: int | None = None, max_version: int | None = None) -> int:
        """The version this client will use for an API on a node."""
        conn = self._conn(node)
        if api_key not in conn.versions:
            raise ClientError(f"broker {conn.addr} does not support {ApiKey(api_key).name}")
        lo, hi = conn.versions[api_key]
        ours = int(request_class(api_key).max_version)
        if max_version is not None:
            ours = min(ours, max_version)
        if ours < lo:
            raise ClientError(f"no common version of {ApiKey(api_key).name} with {conn.addr}")
        return min(ours, hi)

    def call(self, api_key: int, build: Build, node: int | None = None, max_version: int | None = None,
             expect_response: bool = True) -> ApiMessage | None:
        """Build a request with `build(cls, version)`, send it to `node` (None: any), return the response."""
        version = self.version_for(api_key, node, max_version)
        cls = request_class(api_key)
        msg = build(cls[version], version)
        conn = self._conn(node)
        try:
            return conn.roundtrip(msg, api_key, version, expect_response)
        except ClientError:
            conn.close()
            self._conns.pop(node, None)
            raise

    def refresh_metadata(self, topics: list[str] | None = None) -> ApiMessage:
        """Fetch cluster metadata (all topics when `topics` is None) and remember brokers and controller."""
        def build(cls: type, v: int) -> ApiMessage:
            t = None if topics is None else [cls.MetadataRequestTopic(name=n) for n in topics]
            return cls(topics=t, allow_auto_topic_creation=False,
                       include_cluster_authorized_operations=False, include_topic_authorized_operations=False)
        resp = self.call(ApiKey.Metadata, build, max_version=8)
        self.brokers = {b.node_id: (b.host, b.port, b.rack) for b in resp.brokers}
        self.controller_id = resp.controller_id if resp.controller_id >= 0 else None
        self.cluster_id = resp.cluster_id
        return resp

    def controller(self) -> int:
        """The id of the active controller (refreshing metadata)."""
        self.refresh_metadata(topics=[])
        if self.controller_id is None:
            raise ClientError("the cluster has no active controller")
        return self.controller_id


def _split(hostport: str) -> tuple[str, int]:
    host, _, port = hostport.strip().rpartition(":")
    if not host or not port.isdigit():
        raise ClientError(f"bad address {hostport!r}: expected HOST:PORT")
    return host, int(port)
