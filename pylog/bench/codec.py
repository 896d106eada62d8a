"""Per-request cost of the Produce and Fetch codec paths, in microseconds per request (no I/O).

What the broker does per request, measured in process on real frames (built with kafka-python's
encoders, framed as a client sends them), for kafka-python's schema-compiled codec and, where the
broker uses one, for our hand-written fast path:
* Produce request decode = parse_request_header + decoding the body, for 1 partition with a 1 KB
  batch, 1 partition with a 1 MB batch, 100 partitions of 1 KB. The schema codec copies each record
  set into a new bytes; the fast path (pylog.protocol.produce, what the broker runs) returns
  writable views into the frame;
* batch validation (records.validate_batches: sizes, magic, CRC32C) for the same batches;
* the copy a handler would need on top of the schema codec to stamp offsets (bytearray(records));
* Produce response build + encode, 1 and 100 partitions (schema codec objects vs the fast path);
* Fetch request decode (v11, what librdkafka sends), 1 and 100 partitions;
* Fetch response encode with the hand-written encoder (pylog.protocol.fetch.encode_fetch_response),
  1 and 100 partitions, each carrying a file slice (the bytes themselves go by sendfile).
Each figure is the median of 5 timing rounds of about 0.2 s each; compared implementations alternate rounds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Any, Callable, Sequence

from pylog.bench._harness import machine_notes, markdown_table
from pylog.log.results import FileSlice
from pylog.protocol import records
from pylog.protocol.api import ApiKey, request_class, response_class
from pylog.protocol.codec import decode_request_body, encode_request, encode_response, parse_request_header
from pylog.protocol.fetch import FetchPartitionData, encode_fetch_response
from pylog.protocol.produce import PartitionProduceResult, decode_produce_request, encode_produce_response

PRODUCE_VERSION = 10  # what librdkafka 2.x sends to pylog (Produce v0-10 advertised)
FETCH_VERSION = 11


def _calibrate(fn: Callable[[], Any], target_s: float) -> int:
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt > target_s / 10:
            return max(1, int(n * target_s / max(dt, 1e-9)))
        n *= 4


def _timeit(*fns: Callable[[], Any], rounds: int = 5, target_s: float = 0.2) -> list[float]:
    """Median microseconds per call of each function, over `rounds` rounds of about `target_s` seconds.

    The functions' rounds alternate, so a change of load on the shared machine hits all of them alike
    (the schema codec and the fast path are compared side by side).
    """
    counts = [_calibrate(fn, target_s) for fn in fns]
    per: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, n, out in zip(fns, counts, per):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            out.append((time.perf_counter() - t) / n * 1e6)
    return [statistics.median(p) for p in per]


def batch_of(total_bytes: int, value_size: int = 100) -> bytes:
    """One uncompressed v2 batch of value_size-byte records, about total_bytes long."""
    n = max(1, total_bytes // (value_size + 8))
    ts = 1_700_000_000_000
    return records.build_batch([(None, b"v" * value_size, (), ts) for _ in range(n)])


def produce_frame(partitions: list[bytes], version: int = PRODUCE_VERSION) -> bytearray:
    """A Produce request frame (size prefix stripped, as the server's FrameDecoder yields it)."""
    cls = request_class(ApiKey.Produce)[version]
    tpd = cls.TopicProduceData
    msg = cls(transactional_id=None, acks=1, timeout_ms=30000, topic_data=[tpd(
        name="bench", partition_data=[tpd.PartitionProduceData(index=i, records=b) for i, b in enumerate(partitions)])])
    return bytearray(encode_request(msg, version, 7, "rdkafka")[4:])


def fetch_frame(n_partitions: int, version: int = FETCH_VERSION) -> bytearray:
    """A consumer's Fetch request frame for n partitions of one topic."""
    cls = request_class(ApiKey.Fetch)[version]
    ft = cls.FetchTopic
    msg = cls(replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=52428800, isolation_level=0, session_id=0,
              session_epoch=-1, topics=[ft(topic="bench", partitions=[
                  ft.FetchPartition(partition=i, current_leader_epoch=0, fetch_offset=123456, log_start_offset=-1,
                                    partition_max_bytes=1048576) for i in range(n_partitions)])],
              forgotten_topics_data=[], rack_id="")
    return bytearray(encode_request(msg, version, 7, "rdkafka")[4:])


def produce_response(header: Any, n_partitions: int) -> Any:
    """The response object the Produce handler builds (same constructor calls)."""
    cls = response_class(ApiKey.Produce)[header.api_version]
    ps = [cls.TopicProduceResponse.PartitionProduceResponse(
        index=i, error_code=0, base_offset=1000 + i, log_append_time_ms=-1, log_start_offset=0, record_errors=[],
        error_message=None) for i in range(n_partitions)]
    return cls(throttle_time_ms=0, responses=[cls.TopicProduceResponse(name="bench", partition_responses=ps)])


def run(rounds: int = 5, target_s: float = 0.2) -> list[list[Any]]:
    """Measure every case; rows of (operation, case, µs/request, note)."""
    rows: list[list[Any]] = []

    def timeit(fn: Callable[[], Any]) -> float:
        return _timeit(fn, rounds=rounds, target_s=target_s)[0]

    def compare(*fns: Callable[[], Any]) -> list[float]:
        return _timeit(*fns, rounds=rounds, target_s=target_s)

    kb, mb = batch_of(1024), batch_of(1024 * 1024)
    cases = {"1 partition, 1 KB batch": [kb], "1 partition, 1 MB batch": [mb], "100 partitions x 1 KB": [kb] * 100}
    for name, parts in cases.items():
        frame = produce_frame(parts)
        size = sum(len(p) for p in parts)

        def decode(frame: bytearray = frame) -> Any:
            return decode_request_body(parse_request_header(frame), frame)

        def fast(frame: bytearray = frame) -> Any:
            return decode_produce_request(parse_request_header(frame), frame)

        for label, fn, us in zip(("schema codec", "pylog fast path"), (decode, fast), compare(decode, fast)):
            rec_type = type(fn().topic_data[0].partition_data[0].records).__name__
            rows.append([f"Produce v{PRODUCE_VERSION} request decode, {label}", name, us,
                         f"{size / us:.0f} MB/s of records; records as {rec_type}"])
    for name, parts in cases.items():
        bufs = [bytearray(p) for p in parts]
        us = timeit(lambda bufs=bufs: [records.validate_batches(b) for b in bufs])
        rows.append(["validate_batches (sizes, magic, CRC32C)", name, us, f"{sum(map(len, bufs)) / us:.0f} MB/s"])
    for name, parts in cases.items():
        views = [memoryview(produce_frame([p]))[-len(p):] for p in parts]
        us = timeit(lambda views=views: [bytearray(v) for v in views])
        rows.append(["bytearray(records) copy (needed with the schema codec)", name, us, f"{sum(map(len, views)) / us:.0f} MB/s"])
    for n in (1, 100):
        header = parse_request_header(produce_frame([kb]))
        schema, fast_us = compare(
            lambda header=header, n=n: encode_response(header, produce_response(header, n)),
            lambda header=header, n=n: encode_produce_response(header, [("bench", [
                PartitionProduceResult(i, 0, 1000 + i, -1, 0) for i in range(n)])]))
        rows.append([f"Produce v{PRODUCE_VERSION} response build + encode, schema codec", f"{n} partition(s)", schema, ""])
        rows.append([f"Produce v{PRODUCE_VERSION} response build + encode, pylog fast path", f"{n} partition(s)", fast_us,
                     ""])
    for n in (1, 100):
        frame = fetch_frame(n)
        us = timeit(lambda frame=frame: decode_request_body(parse_request_header(frame), frame))
        rows.append([f"Fetch v{FETCH_VERSION} request decode", f"{n} partition(s)", us, ""])
    for n in (1, 100):
        header = parse_request_header(fetch_frame(n))

        def encode(header: Any = header, n: int = n) -> Any:
            parts = []
            for i in range(n):
                d = FetchPartitionData(i, high_watermark=10**6, last_stable_offset=10**6, log_start_offset=0)
                d.records = [FileSlice("/x/00000000000000000000.log", 4096 * i, 1048576)]
                parts.append(d)
            return encode_fetch_response(header, [("bench", parts)], session_id=0)

        us = timeit(encode)
        rows.append([f"Fetch v{FETCH_VERSION} response encode (hand-written)", f"{n} partition(s), 1 file slice each",
                     us, "includes building the FetchPartitionData"])
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: prints a Markdown table on stdout."""
    ap = argparse.ArgumentParser(prog="scripts/bench codec", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.parse_args(argv)
    print(f"<!-- {machine_notes()} -->")
    print(markdown_table(["operation", "case", "µs/request", "note"], run()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
