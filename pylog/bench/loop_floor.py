"""The floor under any Python asyncio broker: server CPU per small request/response with no Kafka in it.

A server process echoes 64 B size-prefixed frames; one client sends N of them one at a time (as
`scripts/bench request-cost` does) and the server's CPU is read from its threads' schedstat. Two
server shapes on each event loop:
  direct   the response is written from the protocol callback (no task, no await)
  tasked   as pylog's connection: the callback queues the frame and sets an Event, a task per
           connection awaits it, "handles" the frame in a coroutine and writes the response
Whatever pylog adds (framing, dispatch, decoding, the log, the coordinator) comes on top of this.
Run: `scripts/bench loop-floor [--requests N] [--rounds R]`.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import struct
import subprocess
import sys
from typing import Sequence

from pylog.bench import _harness as h
from pylog.bench.request_cost import runtime_ns

_I32 = struct.Struct(">i")
SHAPES = ("direct", "tasked")
LOOPS = ("asyncio", "uvloop")


class _Direct(asyncio.Protocol):
    def connection_made(self, transport) -> None:
        self.transport = transport
        transport.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()

    def frames(self, data: bytes) -> list[bytes]:
        self.buf += data
        out = []
        while len(self.buf) >= 4 and len(self.buf) >= 4 + _I32.unpack_from(self.buf)[0]:
            n = _I32.unpack_from(self.buf)[0]
            out.append(bytes(self.buf[4:4 + n]))
            del self.buf[:4 + n]
        return out

    def data_received(self, data: bytes) -> None:
        for f in self.frames(data):
            self.transport.write(_I32.pack(len(f)) + f)


class _Tasked(_Direct):
    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self.queue: list[bytes] = []
        self.ready = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self.serve())

    def data_received(self, data: bytes) -> None:
        self.queue.extend(self.frames(data))
        self.ready.set()

    async def handle(self, frame: bytes) -> bytes:
        return _I32.pack(len(frame)) + frame

    async def serve(self) -> None:
        while True:
            while not self.queue:
                self.ready.clear()
                await self.ready.wait()
            self.transport.write(await self.handle(self.queue.pop(0)))


def _serve(shape: str, loop_name: str) -> None:
    """The server process: print the port, echo until killed."""
    async def main() -> None:
        srv = await asyncio.get_running_loop().create_server(_Direct if shape == "direct" else _Tasked, "127.0.0.1", 0)
        print(srv.sockets[0].getsockname()[1], flush=True)
        await asyncio.Event().wait()
    if loop_name == "uvloop":
        import uvloop
        factory = uvloop.new_event_loop
    else:
        factory = asyncio.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main())


def _measure(shape: str, loop_name: str, n: int) -> float:
    """Server CPU microseconds per request over n round trips."""
    proc = subprocess.Popen([sys.executable, "-m", "pylog.bench.loop_floor", "--serve", shape, loop_name],
                            stdout=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline())
        frame = _I32.pack(60) + b"x" * 60
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for _ in range(200):  # warm up
                s.sendall(frame)
                s.recv(128)
            c0 = runtime_ns([proc.pid])
            for _ in range(n):
                s.sendall(frame)
                s.recv(128)
            return (runtime_ns([proc.pid]) - c0) / n / 1e3
    finally:
        proc.kill()
        proc.wait(10)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: a Markdown table on stdout."""
    ap = argparse.ArgumentParser(prog="scripts/bench loop-floor", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--serve", nargs=2, metavar=("SHAPE", "LOOP"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        _serve(*args.serve)
        return 0
    if args.requests < 1 or args.rounds < 1:
        ap.error("--requests and --rounds must be >= 1")
    print(f"<!-- {h.machine_notes()} -->")
    results: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for shape in SHAPES:
            for loop_name in LOOPS:
                results.setdefault((shape, loop_name), []).append(_measure(shape, loop_name, args.requests))
    h.print_report(f"loop floor: server CPU µs per 64 B echo, {args.requests:,} one at a time, median of {args.rounds}",
                   ["server shape"] + [f"{lp} µs/request" for lp in LOOPS],
                   [[shape] + [h.median(results[(shape, lp)]) for lp in LOOPS] for shape in SHAPES])
    return 0


if __name__ == "__main__":
    sys.exit(main())
