"""Microbenchmark of the log's hot paths (not a test): `scripts/bench log [--dir DIR]`.

Prints per-call costs of validate_batches, append_as_leader and read for small and 1 MB batches,
the number of write() calls per append, and recovery throughput.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from typing import Callable, Sequence

from pylog.log import Log, LogConfig
from pylog.protocol.records import build_batch, validate_batches


def _per_call(fn: Callable[[], object], n: int) -> float:
    """Average microseconds per call of `fn` over `n` calls."""
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


def _count_writes(fn: Callable[[], object]) -> tuple[int, int]:
    """(write calls, bytes written) by os.write during `fn`."""
    real = os.write
    calls = [0, 0]

    def counting(fd: int, data: bytes) -> int:  # type: ignore[override]
        calls[0] += 1
        n = real(fd, data)
        calls[1] += n
        return n

    os.write = counting  # type: ignore[assignment]
    try:
        fn()
    finally:
        os.write = real  # type: ignore[assignment]
    return calls[0], calls[1]


def run(root: str, n_small: int = 50_000) -> None:
    """Run all measurements in `root` (a scratch dir) and print the figures."""
    cfg = LogConfig()
    small = build_batch([(None, b"x" * 100, [], 1_690_000_000_000)])
    big = build_batch([(None, os.urandom(1000), [], 1_690_000_000_000) for _ in range(1000)])  # ~1 MB
    log = Log.open(os.path.join(root, "bench-0"), cfg)

    bufs = [bytearray(small) for _ in range(n_small)]
    it = iter(bufs)
    print(f"validate_batches, {len(small)} B batch: {_per_call(lambda: validate_batches(small), n_small):7.2f} us")
    headers = [validate_batches(b) for b in bufs]
    hit = iter(headers)
    it = iter(bufs)
    us = _per_call(lambda: log.append_as_leader(next(it), next(hit), 0, 1_690_000_000_000), n_small)
    print(f"append_as_leader, {len(small)} B batch: {us:7.2f} us (incl. one write syscall)")
    raw_fd = os.open(os.path.join(root, "raw"), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    print(f"  (bare os.write of {len(small)} B for comparison: {_per_call(lambda: os.write(raw_fd, small), n_small):7.2f} us)")
    os.close(raw_fd)

    big_bufs = [bytearray(big) for _ in range(50)]
    print(f"validate_batches, {len(big)} B batch: {_per_call(lambda: validate_batches(big), 50):7.1f} us (CRC32C)")
    bit = iter(big_bufs)
    us = _per_call(lambda: (lambda b: log.append_as_leader(b, validate_batches(b), 0, 1_690_000_000_000))(next(bit)), 49)
    print(f"validate + append_as_leader, {len(big)} B batch: {us:7.1f} us")
    last = big_bufs[-1]
    calls, nbytes = _count_writes(lambda: log.append_as_leader(last, validate_batches(last), 0, 1_690_000_000_000))
    print(f"  write() calls for one 1 MB append: {calls} ({nbytes} bytes; index entries included)")

    tail = log.log_end_offset - 1
    print(f"read(tail batch, 1 MB): {_per_call(lambda: log.read(tail, 1 << 20), 20_000):7.2f} us")
    mid = n_small // 2
    us = _per_call(lambda: log.read(mid, 1 << 20), 200)
    slices = log.read(mid, 1 << 20)
    print(f"read(1 MB of {len(small)} B batches from the middle): {us:7.1f} us -> {sum(s.size for s in slices)} bytes")
    print(f"read(1 MB of big batches): {_per_call(lambda: log.read(log.log_end_offset - 5000, 1 << 20), 2000):7.2f} us")

    size = log.size_bytes
    log.close()
    start = time.perf_counter()
    again = Log.open(log.dir, cfg, recovery_point=0)
    secs = time.perf_counter() - start
    print(f"recovery of {size / 1e6:.0f} MB ({again.log_end_offset} offsets): {secs:.2f} s = {size / 1e6 / secs:.0f} MB/s")
    again.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry."""
    p = argparse.ArgumentParser(prog="scripts/bench log", description=__doc__)
    p.add_argument("--dir", help="scratch directory (default: a temp dir, removed afterwards)")
    p.add_argument("--small", type=int, default=50_000, help="number of small appends")
    args = p.parse_args(argv)
    root = args.dir or tempfile.mkdtemp(prefix="pylog-bench-")
    try:
        run(root, args.small)
    finally:
        if not args.dir:
            shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
