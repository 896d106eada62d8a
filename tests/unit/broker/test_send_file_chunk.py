"""Segment bytes leave in order on both event loops: stock asyncio's loop.sendfile, and on uvloop (no
loop.sendfile) os.sendfile straight on the socket while nothing is buffered, the rest through the transport."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time

import pytest

from pylog.broker.server import SocketServer
from pylog.log import FileSlice

uvloop = pytest.importorskip("uvloop")


class _Keep(asyncio.Protocol):
    transports: list

    def connection_made(self, transport):
        self.transports.append(transport)


async def _send_and_read(tmp_path, chunks, head: bytes, buffered: int) -> bytes:
    data = os.urandom(3 * 1024 * 1024)  # more than a socket buffer holds: sendfile stops at EAGAIN midway
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data)
    server = SocketServer(None, None, "127.0.0.1", 0, 1 << 20)  # type: ignore[arg-type]
    loop = asyncio.get_running_loop()
    _Keep.transports = []
    srv = await loop.create_server(_Keep, "127.0.0.1", 0)
    client = socket.create_connection(("127.0.0.1", srv.sockets[0].getsockname()[1]))
    received = bytearray()

    def read_all() -> None:  # a thread: it drains the socket while the loop is blocked below
        while chunk := client.recv(1 << 20):
            received.extend(chunk)
    reading = threading.Thread(target=read_all)
    reading.start()
    try:
        while not _Keep.transports:
            await asyncio.sleep(0.01)
        transport = _Keep.transports[0]
        transport.write(head)
        if buffered:
            # The transport keeps what the socket did not take; blocking the loop lets the reader empty the
            # socket meanwhile, so a sendfile now would get room and overtake those bytes.
            transport.write(b"b" * buffered)
            time.sleep(0.5)
        for pos, size in chunks:
            await server.send_file_chunk(transport, FileSlice(str(path), pos, size, path.stat().st_ino))
        transport.write(b"tail")
        want = head + b"b" * buffered + b"".join(data[p:p + n] for p, n in chunks) + b"tail"
        deadline = loop.time() + 30
        while len(received) < len(want) and loop.time() < deadline:
            await asyncio.sleep(0.01)
        assert bytes(received) == want
        return want
    finally:
        srv.close()
        for t in _Keep.transports:
            t.close()
        await asyncio.sleep(0.05)
        client.shutdown(socket.SHUT_RDWR)
        client.close()
        reading.join(10)


@pytest.mark.parametrize("loop_name", ["asyncio", "uvloop"])
@pytest.mark.parametrize("buffered", [0, 8 * 1024 * 1024])
def test_file_ranges_arrive_whole_and_in_order(tmp_path, loop_name, buffered):
    chunks = [(0, 100), (4096, 2 * 1024 * 1024), (17, 1024 * 1024 + 5)]
    factory = uvloop.new_event_loop if loop_name == "uvloop" else asyncio.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(_send_and_read(tmp_path, chunks, b"head", buffered))


def test_a_range_past_the_end_of_the_file_is_an_error_not_a_short_answer(tmp_path):
    async def run():
        with pytest.raises(ConnectionError):
            await _send_and_read(tmp_path, [(3 * 1024 * 1024 - 10, 20)], b"", 0)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(run())
