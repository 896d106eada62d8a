"""pylog-dump-log: kafka-dump-log.sh for pylog (and Kafka) segment, index and time index files.

Text output follows Kafka 3.3's DumpLogSegments line for line; `--output json` prints one JSON
object per batch / index entry instead, for scripts (the chaos tests diff replicas with it).
The scanning functions return data; the two renderers at the bottom print it.
"""

from __future__ import annotations

import json
import mmap
import os
import struct
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

import click

from pylog.cli.dump_log_txn import parse_transaction_log_record
from pylog.coordinator.transaction.records import RecordFormatError
from pylog.log.index import OffsetIndex, TimeIndex
from pylog.log.errors import CorruptIndexError
from pylog.log.txn_index import TxnIndexError, decode_entries
from pylog.log.producer_snapshot import CorruptSnapshotError, decode_snapshot
from pylog.protocol.records import (
    BATCH_OVERHEAD,
    LOG_OVERHEAD,
    BatchHeader,
    Record,
    RecordError,
    compute_crc,
    parse_header,
    read_records,
)

INT_MAX = 2**31 - 1
_CONTROL_TYPES = {0: "ABORT", 1: "COMMIT", 2: "LEADER_CHANGE", 3: "SNAPSHOT_HEADER", 4: "SNAPSHOT_FOOTER",
                  5: "KRAFT_VERSION", 6: "KRAFT_VOTERS"}


class DumpError(Exception):
    """A file that cannot be dumped (Kafka's tool dies with an exception there)."""


@dataclass
class BatchDump:
    """One batch of a .log file as the tool reports it."""

    header: BatchHeader
    position: int
    is_valid: bool
    records: list[Record] | None = None  # with deep iteration
    error: str = ""  # records that could not be decoded


@dataclass
class LogDump:
    """A .log file: its batches and how many bytes at the end are not a complete batch."""

    start_offset: int
    batches: Iterator[BatchDump]
    trailing_bytes: Callable[[], int]


@dataclass
class Problems:
    """What DumpLogSegments reports on stderr after all files."""

    index_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_mismatches: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_out_of_order: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    time_not_found: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    non_consecutive: dict[str, list[tuple[int, int]]] = field(default_factory=dict)

    @staticmethod
    def add(table: dict[str, list[tuple[int, int]]], path: str, pair: tuple[int, int]) -> None:
        """Record a pair under the file's absolute path."""
        table.setdefault(os.path.abspath(path), []).append(pair)


def _base_offset(path: str) -> int:
    try:
        return int(os.path.basename(path).split(".")[0])
    except ValueError:
        raise DumpError(f"{path}: the file name is not a base offset") from None


def _map(path: str) -> memoryview:
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))


def _batches(data: memoryview, path: str, end: int) -> Iterator[tuple[int, BatchHeader]]:
    """Batches the way Kafka's FileLogInputStream finds them: stop at an incomplete tail."""
    pos = 0
    while end - pos >= 17:  # Kafka's HEADER_SIZE_UP_TO_MAGIC
        (length,) = struct.unpack_from(">i", data, pos + 8)
        if length < 14:
            raise DumpError(f"Found record size {length} smaller than minimum record overhead (14) in file {path}.")
        size = length + LOG_OVERHEAD
        if size > end - pos:
            return
        magic = data[pos + 16]
        if magic != 2 or size < BATCH_OVERHEAD:
            raise DumpError(f"{path}: batch at position {pos} has magic {magic}; only magic 2 is supported")
        yield pos, parse_header(data, pos)
        pos += size


def scan_log(path: str, deep: bool, max_bytes: int, problems: Problems) -> LogDump:
    """The batches of a .log file (with records when `deep`)."""
    data = _map(path)
    end = min(len(data), max_bytes)
    valid = [0]

    def batches() -> Iterator[BatchDump]:
        last_offset = -1
        for pos, h in _batches(data, path, end):
            ok = compute_crc(data, pos, h.size) == h.crc
            dump = BatchDump(h, pos, ok)
            if deep:
                try:
                    dump.records = read_records(data[pos : pos + h.size])
                except RecordError as e:
                    dump.error = str(e)
                for r in dump.records or ():
                    if last_offset != -1 and r.offset != last_offset + 1:
                        problems.add(problems.non_consecutive, path, (last_offset, r.offset))
                    last_offset = r.offset
            valid[0] = pos + h.size
            yield dump

    return LogDump(_base_offset(path), batches(), lambda: end - valid[0])


def _first_batch_at(data: memoryview, position: int, max_size: int) -> BatchHeader | None:
    if position < 0 or len(data) - position < BATCH_OVERHEAD:  # a corrupt index can point anywhere
        return None
    h = parse_header(data, position)
    return h if h.size <= max_size and position + h.size <= len(data) else None


def scan_index(path: str, sanity_only: bool, max_message_size: int, problems: Problems) -> Iterator[tuple[int, int]]:
    """(offset, position) entries of a .index file, checked against the batches they point at."""
    base = _base_offset(path)
    index = OffsetIndex(path, base)
    log_path = os.path.join(os.path.dirname(path) or ".", f"{base:020d}.log")
    data = _map(log_path) if os.path.exists(log_path) else memoryview(b"")
    if sanity_only:
        index.sanity_check(len(data))
        return
    for i in range(index.entries):
        offset, position = index.entry(i)
        if offset == base and i > 0:  # the zero tail of a preallocated (not trimmed) Kafka index
            return
        h = _first_batch_at(data, position, max_message_size)
        if h is None or h.last_offset != offset:
            problems.add(problems.index_mismatches, path, (offset, -1 if h is None else h.last_offset))
        yield offset, position


def scan_time_index(path: str, sanity_only: bool, problems: Problems) -> Iterator[tuple[int, int]]:
    """(timestamp, offset) entries of a .timeindex file, checked against the log's records."""
    base = _base_offset(path)
    tindex = TimeIndex(path, base)
    prefix = os.path.join(os.path.dirname(path) or ".", f"{base:020d}")
    index = OffsetIndex(prefix + ".index", base)
    log_path = prefix + ".log"
    data = _map(log_path) if os.path.exists(log_path) else memoryview(b"")
    if sanity_only:
        tindex.sanity_check()
        return
    prev_ts = -1
    for i in range(tindex.entries):
        ts, offset = tindex.entry(i)
        if offset == base and i > 0:
            return
        _, position = index.lookup(offset)
        found = None if not 0 <= position <= len(data) else next(
            (h for _, h in _batches(data[position:], log_path, len(data) - position) if h.last_offset >= offset), None)
        if found is None or found.last_offset != offset:
            problems.add(problems.time_not_found, path, (offset, -1 if found is None else found.last_offset))
        else:
            records = read_records(data[position + found.position : position + found.position + found.size])
            max_ts = max((r.timestamp for r in records), default=-1)
            if max_ts != ts:
                problems.add(problems.time_mismatches, path, (ts, max_ts))
            if prev_ts >= ts:
                problems.add(problems.time_out_of_order, path, (ts, prev_ts))
        prev_ts = ts
        yield ts, offset


# --- rendering ---------------------------------------------------------------------------------
def _text(b: bytes | None) -> str:
    """Kafka's StringDecoder: the bytes as UTF-8."""
    return "" if b is None else b.decode("utf-8", errors="replace")


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _control(r: Record) -> str:
    if r.key is None or len(r.key) < 4:
        return " controlType: UNKNOWN(-1)"
    _, type_id = struct.unpack_from(">hh", r.key)
    name = _CONTROL_TYPES.get(type_id, "UNKNOWN")
    if type_id in (0, 1) and r.value is not None and len(r.value) >= 6:
        _, coordinator_epoch = struct.unpack_from(">hi", r.value)
        return f" endTxnMarker: {name} coordinatorEpoch: {coordinator_epoch}"
    return f" controlType: {name}({type_id})"


def batch_line(d: BatchDump) -> str:
    """DumpLogSegments.printBatchLevel for a v2 batch."""
    h = d.header
    horizon = "OptionalLong.empty" if h.delete_horizon_ms is None else f"OptionalLong[{h.delete_horizon_ms}]"
    return (
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
        f"baseSequence: {h.base_sequence} lastSequence: {h.last_sequence} producerId: {h.producer_id} "
        f"producerEpoch: {h.producer_epoch} partitionLeaderEpoch: {h.partition_leader_epoch} "
        f"isTransactional: {_bool(h.is_transactional)} isControl: {_bool(h.is_control)} "
        f"deleteHorizonMs: {horizon} position: {d.position} {h.timestamp_type_name}: {h.max_timestamp} "
        f"size: {h.size} magic: {h.magic} compresscodec: {h.compression_name} crc: {h.crc} isvalid: {_bool(d.is_valid)}"
    )


Parser = Callable[[Record], tuple[str | None, str | None]]


def record_line(h: BatchHeader, r: Record, print_data: bool, skip_metadata: bool, parse: Parser | None = None) -> str:
    """One deep-iteration line, assembled exactly like DumpLogSegments.dumpLog does (`parse`: a decoder option's
    (key, payload) texts instead of the bytes as UTF-8)."""
    out = ""
    prefix = "| "
    if not skip_metadata:
        out += (
            f"{prefix}offset: {r.offset} {h.timestamp_type_name}: {r.timestamp} "
            f"keySize: {-1 if r.key is None else len(r.key)} valueSize: {-1 if r.value is None else len(r.value)}"
            f" sequence: {r.sequence} headerKeys: [{','.join(k for k, _ in r.headers)}]"
        )
        prefix = " "
        if h.is_control:
            out += _control(r)
    if print_data and not h.is_control:
        key, payload = parse(r) if parse is not None else (
            None if r.key is None else _text(r.key), None if r.value is None else _text(r.value))
        if key is not None:
            out += f"{prefix}key: {key}"
        if payload is not None:
            out += f" payload: {payload}"
    return out


def batch_json(path: str, d: BatchDump, print_data: bool) -> dict[str, Any]:
    """The machine-readable form of a batch (and its records with deep iteration)."""
    h = d.header
    obj: dict[str, Any] = {
        "type": "batch", "file": path, "base_offset": h.base_offset, "last_offset": h.last_offset,
        "count": h.records_count, "base_sequence": h.base_sequence, "last_sequence": h.last_sequence,
        "producer_id": h.producer_id, "producer_epoch": h.producer_epoch,
        "partition_leader_epoch": h.partition_leader_epoch, "is_transactional": h.is_transactional,
        "is_control": h.is_control, "position": d.position, "timestamp_type": h.timestamp_type_name,
        "max_timestamp": h.max_timestamp, "size": h.size, "magic": h.magic, "compression": h.compression_name,
        "crc": h.crc, "is_valid": d.is_valid,
    }
    if d.records is not None:
        recs = []
        for r in d.records:
            rec: dict[str, Any] = {"offset": r.offset, "timestamp": r.timestamp,
                                   "key_size": -1 if r.key is None else len(r.key),
                                   "value_size": -1 if r.value is None else len(r.value),
                                   "sequence": r.sequence, "header_keys": [k for k, _ in r.headers]}
            if print_data:
                rec["key"] = None if r.key is None else _text(r.key)
                rec["payload"] = None if r.value is None else _text(r.value)
            recs.append(rec)
        obj["records"] = recs
    if d.error:
        obj["error"] = d.error
    return obj


def _print_problems(p: Problems) -> None:
    err = sys.stderr
    for path, pairs in p.index_mismatches.items():
        print(f"Mismatches in :{path}", file=err)
        for index_offset, log_offset in reversed(pairs):  # Kafka prepends to its list
            print(f"  Index offset: {index_offset}, log offset: {log_offset}", file=err)
    for path, pairs in p.time_mismatches.items():
        print(f"Found timestamp mismatch in :{path}", file=err)
        for a, b in pairs:
            print(f"  Index timestamp: {a}, log timestamp: {b}", file=err)
    for path, pairs in p.time_out_of_order.items():
        print(f"Found out of order timestamp in :{path}", file=err)
        for a, b in pairs:
            print(f"  Index timestamp: {a}, Previously indexed timestamp: {b}", file=err)
    for pairs in p.time_not_found.values():
        print("The following indexed offsets are not found in the log.", file=err)
        for a, b in pairs:
            print(f"Indexed offset: {a}, found log offset: {b}", file=err)
    for path, pairs in p.non_consecutive.items():
        print(f"Non-consecutive offsets in {path}", file=err)
        for a, b in reversed(pairs):
            print(f"  {a} is followed by {b}", file=err)


def _dump_file(path: str, opts: dict[str, Any], problems: Problems, emit: Callable[[str], None]) -> None:
    as_json = opts["output"] == "json"
    suffix = os.path.splitext(path)[1]
    if suffix == ".log":
        dump = scan_log(path, opts["deep"], opts["max_bytes"], problems)
        if not as_json:
            emit(f"Log starting offset: {dump.start_offset}")
        for d in dump.batches:
            if as_json:
                obj = batch_json(path, d, opts["print_data"])
                if opts["transaction_log_decoder"] and not d.header.is_control:
                    _decode_json_records(obj, d.records or [])
                emit(json.dumps(obj))
                continue
            emit(batch_line(d))
            for r in d.records or ():
                emit(_record_line(d.header, r, opts))
            if d.error:
                print(f"Cannot read the records of the batch at offset {d.header.base_offset}: {d.error}",
                      file=sys.stderr)
        trailing = dump.trailing_bytes()
        if trailing > 0 and opts["max_bytes"] == INT_MAX:
            if as_json:
                emit(json.dumps({"type": "invalid_bytes", "file": path, "bytes": trailing}))
            else:
                emit(f"Found {trailing} invalid bytes at the end of {os.path.basename(path)}")
    elif suffix in (".index", ".timeindex"):
        is_offset_index = suffix == ".index"
        size = os.path.getsize(path)
        if is_offset_index and size < 8:
            emit(json.dumps({"type": "empty", "file": path}) if as_json else f"{path} is empty.")
            return
        entries = (scan_index(path, opts["sanity"], opts["max_message_size"], problems) if is_offset_index
                   else scan_time_index(path, opts["sanity"], problems))
        for a, b in entries:
            if opts["verify_only"]:
                continue
            if as_json:
                kind, names = ("index_entry", ("offset", "position")) if is_offset_index else (
                    "time_index_entry", ("timestamp", "offset"))
                emit(json.dumps({"type": kind, "file": path, names[0]: a, names[1]: b}))
            else:
                emit(f"offset: {a} position: {b}" if is_offset_index else f"timestamp: {a} offset: {b}")
        if opts["sanity"]:
            emit(f"{path} passed sanity check.")
    elif suffix == ".txnindex":
        with open(path, "rb") as f:
            entries = decode_entries(f.read())
        for t in entries:
            if as_json:
                emit(json.dumps({"type": "aborted_txn", "file": path, "version": 0, **t._asdict()}))
            else:  # DumpLogSegments.dumpTxnIndex
                emit(f"version: 0 producerId: {t.producer_id} firstOffset: {t.first_offset} "
                     f"lastOffset: {t.last_offset} lastStableOffset: {t.last_stable_offset}")
    elif suffix == ".snapshot":
        _dump_producer_snapshot(path, as_json, emit)
    else:
        print(f"Ignoring unknown file {path}", file=sys.stderr)


def _decode_json_records(obj: dict[str, Any], records: list[Record]) -> None:
    """--transaction-log-decoder with --output json: the decoded texts as each record's key and payload."""
    for rec, r in zip(obj.get("records", []), records):
        try:
            rec["key"], rec["payload"] = parse_transaction_log_record(r)
        except RecordFormatError as e:
            rec["decode_error"] = str(e)


def _record_line(h: BatchHeader, r: Record, opts: dict[str, Any]) -> str:
    if not opts["transaction_log_decoder"] or h.is_control:
        return record_line(h, r, opts["print_data"], opts["skip_metadata"])
    try:
        return record_line(h, r, opts["print_data"], opts["skip_metadata"], parse_transaction_log_record)
    except RecordFormatError as e:  # Kafka's tool dies here; we say which record and go on
        print(f"Cannot decode the record at offset {r.offset} as a transaction log record: {e}", file=sys.stderr)
        return record_line(h, r, opts["print_data"], opts["skip_metadata"])


def _dump_producer_snapshot(path: str, as_json: bool, emit: Callable[[str], None]) -> None:
    """A producer state snapshot, one producer per line in Kafka's words."""
    with open(path, "rb") as f:
        data = f.read()
    try:
        entries = decode_snapshot(data)
    except CorruptSnapshotError as exc:
        print(exc, file=sys.stderr)
        return
    for e in entries:
        txn = f"OptionalLong[{e.current_txn_first_offset}]" if e.current_txn_first_offset >= 0 else "OptionalLong.empty"
        b = e.batches[-1] if e.batches else None
        if as_json:
            emit(json.dumps({"type": "producer_snapshot_entry", "file": path, "producerId": e.producer_id,
                             "producerEpoch": e.epoch, "coordinatorEpoch": e.coordinator_epoch,
                             "currentTxnFirstOffset": e.current_txn_first_offset if e.current_txn_first_offset >= 0
                             else None, "lastTimestamp": e.last_timestamp,
                             "firstSequence": b.first_seq if b else None, "lastSequence": b.last_seq if b else None,
                             "lastOffset": b.last_offset if b else None, "offsetDelta": b.offset_delta if b else None,
                             "timestamp": b.timestamp if b else None}))
            continue
        line = (f"producerId: {e.producer_id} producerEpoch: {e.epoch} coordinatorEpoch: {e.coordinator_epoch} "
                f"currentTxnFirstOffset: {txn} lastTimestamp: {e.last_timestamp} ")
        if b is not None:
            line += (f"firstSequence: {b.first_seq} lastSequence: {b.last_seq} lastOffset: {b.last_offset} "
                     f"offsetDelta: {b.offset_delta} timestamp: {b.timestamp}")
        emit(line)


@click.command(context_settings={"help_option_names": ["-h", "--help"]},
               help="This tool helps to parse a log file and dump its contents to the console, useful for "
                    "debugging a seemingly corrupt log segment.")
@click.option("--files", help="REQUIRED: The comma separated list of data and index log files to be dumped.")
@click.option("--print-data-log", "print_data", is_flag=True,
              help="if set, printing the messages content when dumping data logs. Automatically set if any "
                   "decoder option is specified.")
@click.option("--deep-iteration", "deep", is_flag=True,
              help="if set, uses deep instead of shallow iteration. Automatically set if print-data-log is enabled.")
@click.option("--verify-index-only", "verify_only", is_flag=True,
              help="if set, just verify the index log without printing its content.")
@click.option("--index-sanity-check", "sanity", is_flag=True,
              help="if set, just checks the index sanity without printing its content.")
@click.option("--max-message-size", type=int, default=5 * 1024 * 1024, show_default=True,
              help="Size of largest message.")
@click.option("--max-bytes", type=int, default=INT_MAX, show_default=True,
              help="Limit the amount of total batches read in bytes avoiding reading the whole .log file(s).")
@click.option("--skip-record-metadata", "skip_metadata", is_flag=True,
              help="whether to skip printing metadata for each record.")
@click.option("--transaction-log-decoder", is_flag=True,
              help="if set, log data will be parsed as transaction metadata from the __transaction_state topic.")
@click.option("--output", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: kafka-dump-log.sh's lines; json: one JSON object per batch or index entry.")
def dump_log(**opts: Any) -> None:
    """Dump .log, .index, .timeindex and .txnindex files."""
    if not opts["files"]:
        click.echo('Missing required argument "[files]"', err=True)
        click.echo(click.get_current_context().get_help(), err=True)
        sys.exit(1)
    opts["print_data"] = opts["print_data"] or opts["transaction_log_decoder"]
    opts["deep"] = opts["deep"] or opts["print_data"]
    problems = Problems()
    failed = False
    for path in opts["files"].split(","):
        if opts["output"] == "text":
            click.echo(f"Dumping {path}")
        try:
            _dump_file(path, opts, problems, click.echo)
        except BrokenPipeError:
            raise
        except (OSError, DumpError, CorruptIndexError, RecordError, TxnIndexError) as e:
            click.echo(f"Error: {path}: {e.strerror if isinstance(e, OSError) and e.strerror else e}", err=True)
            failed = True
    _print_problems(problems)
    if failed:
        sys.exit(1)


def main() -> None:
    """Console entry point (pylog-dump-log)."""
    try:
        dump_log(prog_name="pylog-dump-log")
    except BrokenPipeError:  # e.g. `| head`: stop quietly like a shell tool
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)


if __name__ == "__main__":
    main()
