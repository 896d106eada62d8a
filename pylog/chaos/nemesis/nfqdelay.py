"""Link delay, jitter and reordering in user space, for kernels without `netem` (this machine's has none).

    python -m pylog.chaos.nemesis.nfqdelay QUEUE DELAY_MS JITTER_MS REORDER_PERCENT   # inside a node

The link nemesis sends a node's outgoing IPv4 packets to netfilter queue QUEUE (`iptables -j NFQUEUE`, the
xtables target this kernel does have) and runs this program in the node's namespace. It speaks nfnetlink_queue
over a raw netlink socket (no library: the Python bindings need a C build) and gives each packet its verdict
(accept) after DELAY_MS +- JITTER_MS, uniformly; REORDER_PERCENT of the packets are accepted at once, ahead of
the delayed ones, as netem's `reorder` does. Verdicts out of arrival order are what reorders packets on the
wire, so jitter alone reorders too. On SIGTERM every held packet is accepted before it exits (a queue that
goes away drops what it holds). It prints `ready` once bound, so the nemesis installs its rule only then,
and `packets N ahead M` (queued, of which sent at once) when it ends.
"""

from __future__ import annotations

import heapq
import random
import signal
import socket
import struct
import sys
import threading
import time

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG = 0, 1, 2
NFQA_CFG_CMD, NFQA_CFG_PARAMS = 1, 2
NFQNL_CFG_CMD_BIND = 1
NFQNL_COPY_META = 1
NFQA_PACKET_HDR, NFQA_VERDICT_HDR = 1, 2
NF_ACCEPT = 1
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR = 2


def _attr(kind: int, payload: bytes) -> bytes:
    """A netlink attribute, padded to 4 bytes."""
    raw = struct.pack("=HH", 4 + len(payload), kind) + payload
    return raw + b"\0" * (-len(raw) % 4)


def _message(msg: int, queue: int, attrs: bytes, flags: int = NLM_F_REQUEST, seq: int = 0) -> bytes:
    """An nfnetlink_queue message: netlink header, nfgenmsg (AF_UNSPEC family, version 0, queue number)."""
    body = struct.pack("=BBH", socket.AF_UNSPEC, 0, socket.htons(queue)) + attrs
    return struct.pack("=IHHII", 16 + len(body), (NFNL_SUBSYS_QUEUE << 8) | msg, flags, seq, 0) + body


def verdict(queue: int, packet_id: int) -> bytes:
    """Accept packet `packet_id`."""
    return _message(NFQNL_MSG_VERDICT, queue, _attr(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id)))


def packet_ids(data: bytes) -> list[int]:
    """The packet ids of the NFQNL_MSG_PACKET messages in one netlink datagram."""
    ids, off = [], 0
    while off + 16 <= len(data):
        length, kind = struct.unpack_from("=IH", data, off)
        if length < 16:
            break
        if kind == (NFNL_SUBSYS_QUEUE << 8) | NFQNL_MSG_PACKET:
            a = off + 20  # past nlmsghdr and nfgenmsg
            while a + 4 <= off + length:
                alen, atype = struct.unpack_from("=HH", data, a)
                if alen < 4:
                    break
                if atype & 0x7FFF == NFQA_PACKET_HDR:
                    ids.append(struct.unpack_from("!I", data, a + 4)[0])
                a += (alen + 3) & ~3
        off += (length + 3) & ~3
    return ids


class Delayer:
    """Holds each queued packet for its delay, then accepts it."""

    def __init__(self, queue: int, delay_ms: float, jitter_ms: float, reorder: float, seed: int | None = None) -> None:
        self.queue, self.delay, self.jitter, self.reorder = queue, delay_ms / 1000, jitter_ms / 1000, reorder / 100
        self.rng = random.Random(seed)
        self.sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind((0, 0))
        self.held: list[tuple[float, int]] = []
        self.cond = threading.Condition()
        self.stopping = False
        self.packets = self.ahead = 0  # queued, of which sent at once

    def bind(self) -> None:
        """Bind the queue number, copy metadata only (the verdict needs nothing but the id)."""
        self._request(_attr(NFQA_CFG_CMD, struct.pack("!BxH", NFQNL_CFG_CMD_BIND, socket.AF_INET)), 1)
        self._request(_attr(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META)), 2)

    def _request(self, attrs: bytes, seq: int) -> None:
        self.sock.send(_message(NFQNL_MSG_CONFIG, self.queue, attrs, NLM_F_REQUEST | NLM_F_ACK, seq))
        data = self.sock.recv(65536)
        kind = struct.unpack_from("=H", data, 4)[0]
        error = struct.unpack_from("=i", data, 16)[0] if kind == NLMSG_ERROR else 0
        if error:
            raise OSError(-error, f"nfnetlink_queue config failed: {error}")

    def receive(self) -> None:
        """Read packets and schedule their verdicts until stopped."""
        while not self.stopping:
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                if self.stopping:
                    return
                raise
            now = time.monotonic()
            with self.cond:
                for pid in packet_ids(data):
                    self.packets += 1
                    if self.rng.random() < self.reorder:
                        self.ahead += 1
                        self.sock.send(verdict(self.queue, pid))  # ahead of everything held
                        continue
                    due = now + max(0.0, self.delay + self.rng.uniform(-self.jitter, self.jitter))
                    heapq.heappush(self.held, (due, pid))
                self.cond.notify()

    def release(self) -> None:
        """Accept each held packet when its time comes; everything at once when stopping."""
        with self.cond:
            while True:
                now = time.monotonic()
                while self.held and (self.stopping or self.held[0][0] <= now):
                    self.sock.send(verdict(self.queue, heapq.heappop(self.held)[1]))
                if self.stopping:
                    return
                self.cond.wait(self.held[0][0] - now if self.held else 0.5)

    def stop(self) -> None:
        """Accept what is held and stop releasing."""
        with self.cond:
            self.stopping = True
            self.cond.notify()


def main(argv: list[str]) -> int:
    """Bind, print `ready`, delay until SIGTERM."""
    queue, delay_ms, jitter_ms, reorder = int(argv[0]), float(argv[1]), float(argv[2]), float(argv[3])
    d = Delayer(queue, delay_ms, jitter_ms, reorder)
    d.bind()
    releaser = threading.Thread(target=d.release, daemon=True)
    releaser.start()
    signal.signal(signal.SIGTERM, lambda *_: d.stop())
    receiver = threading.Thread(target=d.receive, daemon=True)
    receiver.start()
    print("ready", flush=True)
    releaser.join()  # returns once stop() accepted everything held
    print(f"packets {d.packets} ahead {d.ahead}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
