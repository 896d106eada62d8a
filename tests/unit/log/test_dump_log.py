"""pylog-dump-log: Kafka 3.3 DumpLogSegments output (golden), JSON output, index checks, the wrapper."""

import json
import os
import struct
import subprocess

import pytest
from click.testing import CliRunner
from kafka.record.memory_records import MemoryRecords

from pylog.cli.dump_log import dump_log
from pylog.log import Log, LogConfig
from pylog.protocol.records import build_batch, validate_batches

TS = 1_690_000_000_000
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

GOLDEN = """\
Dumping foo-0/00000000000000000000.log
Log starting offset: 0
baseOffset: 0 lastOffset: 1 count: 2 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1690000000005 size: 96 magic: 2 compresscodec: none crc: 3120883723 isvalid: true
| offset: 0 CreateTime: 1690000000000 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: hello
| offset: 1 CreateTime: 1690000000005 keySize: 2 valueSize: 5 sequence: -1 headerKeys: [h1,h2] key: k1 payload: world
baseOffset: 2 lastOffset: 4 count: 3 baseSequence: 7 lastSequence: 9 producerId: 1000 producerEpoch: 2 partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty position: 96 CreateTime: 1690000000010 size: 102 magic: 2 compresscodec: zstd crc: 200117518 isvalid: true
| offset: 2 CreateTime: 1690000000010 keySize: 2 valueSize: 10 sequence: 7 headerKeys: [] key: k2 payload: zstd value
| offset: 3 CreateTime: 1690000000010 keySize: 2 valueSize: 10 sequence: 8 headerKeys: [] key: k2 payload: zstd value
| offset: 4 CreateTime: 1690000000010 keySize: 2 valueSize: 10 sequence: 9 headerKeys: [] key: k2 payload: zstd value
baseOffset: 5 lastOffset: 5 count: 1 baseSequence: -1 lastSequence: -1 producerId: 1000 producerEpoch: 2 partitionLeaderEpoch: 1 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty position: 198 CreateTime: 1690000000020 size: 78 magic: 2 compresscodec: none crc: 1099035789 isvalid: true
| offset: 5 CreateTime: 1690000000020 keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT coordinatorEpoch: 5
baseOffset: 6 lastOffset: 6 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 276 CreateTime: 1690000000030 size: 68 magic: 2 compresscodec: none crc: 842008322 isvalid: true
| offset: 6 CreateTime: 1690000000030 keySize: -1 valueSize: -1 sequence: -1 headerKeys: []
Found 30 invalid bytes at the end of 00000000000000000000.log
Dumping foo-0/00000000000000000000.index
offset: 5 position: 198
Dumping foo-0/00000000000000000000.timeindex
timestamp: 1690000000020 offset: 5
timestamp: 1690000000030 offset: 6
"""

FILES = "foo-0/00000000000000000000.log,foo-0/00000000000000000000.index,foo-0/00000000000000000000.timeindex"


@pytest.fixture
def segment(tmp_path, monkeypatch):
    """A segment with plain, zstd/transactional, control and null-value batches plus a torn tail."""
    log = Log.open(str(tmp_path / "foo-0"), LogConfig(index_interval_bytes=100))
    batches = [
        build_batch([(None, b"hello", [], TS), (b"k1", b"world", [("h1", b"a"), ("h2", None)], TS + 5)]),
        build_batch([(b"k2", b"zstd value", [], TS + 10)] * 3, compression=4, producer_id=1000,
                    producer_epoch=2, base_sequence=7, is_transactional=True),
        build_batch([(struct.pack(">hh", 0, 1), struct.pack(">hi", 0, 5), [], TS + 20)], producer_id=1000,
                    producer_epoch=2, is_transactional=True, is_control=True),
        build_batch([(None, None, [], TS + 30)]),
    ]
    for i, raw in enumerate(batches):
        buf = bytearray(raw)
        log.append_as_leader(buf, validate_batches(buf), i // 2)
    log.close()
    path = tmp_path / "foo-0" / "00000000000000000000.log"
    with open(path, "r+b") as f:
        head = f.read(30)
        f.seek(0, os.SEEK_END)
        f.write(head)  # a torn write: the start of a batch, no more
    monkeypatch.chdir(tmp_path)
    return path


def run(*args):
    return CliRunner().invoke(dump_log, list(args))


def test_text_output_matches_kafka_golden(segment):
    result = run("--files", FILES, "--print-data-log")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == GOLDEN
    assert result.stderr == ""
    # the CRCs in the golden text are what a real client computes for these batches
    records = MemoryRecords(segment.read_bytes()[:344])
    crcs = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        crcs.append(batch.crc)
    assert crcs == [3120883723, 200117518, 1099035789, 842008322]


def test_shallow_iteration_prints_batches_only(segment):
    result = run("--files", "foo-0/00000000000000000000.log")
    lines = result.stdout.splitlines()
    assert [line for line in GOLDEN.splitlines()[:13] if not line.startswith("|")] == lines[:6]
    assert lines[6] == "Found 30 invalid bytes at the end of 00000000000000000000.log"


def test_deep_iteration_without_data_and_skip_metadata(segment):
    deep = run("--files", "foo-0/00000000000000000000.log", "--deep-iteration").stdout.splitlines()
    assert deep[3] == "| offset: 0 CreateTime: 1690000000000 keySize: -1 valueSize: 5 sequence: -1 headerKeys: []"
    skip = run("--files", "foo-0/00000000000000000000.log", "--print-data-log", "--skip-record-metadata").stdout
    assert "|key: " not in skip and "\n payload: hello\n" in skip and "\n| key: k1 payload: world\n" in skip


def test_json_output_one_object_per_batch(segment):
    result = run("--files", FILES, "--output", "json")
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    batches = [o for o in objs if o["type"] == "batch"]
    assert [(b["base_offset"], b["last_offset"], b["partition_leader_epoch"], b["crc"]) for b in batches] == [
        (0, 1, 0, 3120883723), (2, 4, 0, 200117518), (5, 5, 1, 1099035789), (6, 6, 1, 842008322)]
    assert batches[1]["compression"] == "zstd" and batches[2]["is_control"] and "records" not in batches[0]
    assert {"type": "invalid_bytes", "file": "foo-0/00000000000000000000.log", "bytes": 30} in objs
    assert {"type": "index_entry", "file": "foo-0/00000000000000000000.index", "offset": 5, "position": 198} in objs
    assert [o["timestamp"] for o in objs if o["type"] == "time_index_entry"] == [TS + 20, TS + 30]
    deep = [json.loads(line) for line in run("--files", FILES, "--output", "json", "--print-data-log").stdout.splitlines()]
    assert deep[0]["records"][1] == {"offset": 1, "timestamp": TS + 5, "key_size": 2, "value_size": 5, "sequence": -1,
                                     "header_keys": ["h1", "h2"], "key": "k1", "payload": "world"}


def test_index_mismatch_and_corrupt_crc_are_reported(segment):
    index = segment.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 4, 198))  # offset 4 is not the last offset of the batch at 198
    data = bytearray(segment.read_bytes())
    data[150] ^= 0xFF
    segment.write_bytes(bytes(data))
    result = run("--files", FILES)
    assert "compresscodec: zstd crc: 200117518 isvalid: false" in result.stdout
    assert f"Mismatches in :{index}\n  Index offset: 4, log offset: 5\n" in result.stderr


def test_index_entries_pointing_outside_the_log_are_mismatches_not_tracebacks(segment):
    # A corrupt index is what an operator runs this tool for: a negative (or too large) position
    # is reported like any other mismatch.
    index = segment.with_suffix(".index")
    index.write_bytes(struct.pack(">ii", 5, -777933469) + struct.pack(">ii", 6, 10**9))
    result = run("--files", "foo-0/00000000000000000000.index")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("Dumping foo-0/00000000000000000000.index\noffset: 5 position: -777933469\n"
                             "offset: 6 position: 1000000000\n")
    assert f"Mismatches in :{index}\n  Index offset: 6, log offset: -1\n  Index offset: 5, log offset: -1\n" \
        in result.stderr  # Kafka's order (it prepends)
    # The time index finds batches through the offset index; an unreadable log names the log file.
    index.write_bytes(struct.pack(">ii", 5, 0))
    segment.write_bytes(b"\xff" * 100)
    result = run("--files", "foo-0/00000000000000000000.timeindex")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: foo-0/00000000000000000000.timeindex: Found record size -1 smaller than "
                                    "minimum record overhead (14) in file foo-0/00000000000000000000.log.")


@pytest.mark.parametrize("codec", [1, 2, 3, 4])
def test_a_corrupt_compressed_batch_is_one_error_line(tmp_path, codec):
    batch = bytearray(build_batch([(b"k", b"value %d" % i, [], TS) for i in range(20)], compression=codec))
    for i in range(61, len(batch), 7):  # scramble the compressed records, keep the batch header
        batch[i] ^= 0x5A
    (tmp_path / "00000000000000000000.log").write_bytes(bytes(batch))
    result = CliRunner().invoke(dump_log, ["--files", str(tmp_path / "00000000000000000000.log"),
                                           "--print-data-log"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "isvalid: false" in result.stdout
    assert result.stderr.startswith("Cannot read the records of the batch at offset 0: Cannot decode the records")
    assert len(result.stderr.splitlines()) == 1


def test_missing_files_argument_and_missing_file(segment):
    result = run()
    assert result.exit_code == 1
    assert result.stderr.startswith('Missing required argument "[files]"')
    result = run("--files", "nope.log")
    assert result.exit_code == 1
    assert result.stdout == "Dumping nope.log\n"
    assert result.stderr == "Error: nope.log: No such file or directory\n"


def test_wrapper_script_runs_from_any_directory(segment, tmp_path):
    script = os.path.join(REPO, "bin", "pylog-dump-log.sh")
    out = subprocess.run([script, "--files", FILES, "--print-data-log"], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == GOLDEN


def test_txn_index_entries_in_kafkas_words(tmp_path):
    from pylog.log.txn_index import AbortedTxn, TransactionIndex

    path = str(tmp_path / "00000000000000000000.txnindex")
    idx = TransactionIndex(path)
    idx.append(AbortedTxn(4000, 3, 9, 3))
    idx.append(AbortedTxn(4001, 5, 12, 13))
    result = CliRunner().invoke(dump_log, ["--files", path])
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        f"Dumping {path}",
        "version: 0 producerId: 4000 firstOffset: 3 lastOffset: 9 lastStableOffset: 3",
        "version: 0 producerId: 4001 firstOffset: 5 lastOffset: 12 lastStableOffset: 13",
    ]
    out = CliRunner().invoke(dump_log, ["--files", path, "--output", "json"]).output.splitlines()
    assert json.loads(out[0]) == {"type": "aborted_txn", "file": path, "version": 0, "producer_id": 4000,
                                  "first_offset": 3, "last_offset": 9, "last_stable_offset": 3}
    with open(path, "r+b") as f:
        f.write(b"\x00\x07")  # an entry version no reader knows
    bad = CliRunner().invoke(dump_log, ["--files", path])
    assert bad.exit_code == 1 and "unknown transaction index entry version 7" in bad.output


def test_producer_snapshot_in_kafkas_words(tmp_path):
    from pylog.log.producer_snapshot import write_snapshot
    from pylog.log.producer_state import BatchMetadata, ProducerEntry
    write_snapshot(str(tmp_path), 372, [ProducerEntry(1004, 0, [BatchMetadata(371, 371, 1, 1706471404037)], -1,
                                                      1706471404037, -1),
                                        ProducerEntry(7, 2, [], 5, 99, 300)], sync=False)
    path = str(tmp_path / "00000000000000000372.snapshot")
    result = run("--files", path)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == (
        f"Dumping {path}\n"
        "producerId: 1004 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 1706471404037 firstSequence: 370 lastSequence: 371 lastOffset: 371 offsetDelta: 1 "
        "timestamp: 1706471404037\n"
        "producerId: 7 producerEpoch: 2 coordinatorEpoch: 5 currentTxnFirstOffset: OptionalLong[300] "
        "lastTimestamp: 99 \n")
    as_json = [json.loads(line) for line in run("--files", path, "--output", "json").stdout.splitlines()
               if line.startswith("{")]
    assert [(e["producerId"], e["lastSequence"]) for e in as_json] == [(1004, 371), (7, None)]
    with open(path, "r+b") as f:
        f.seek(20)
        f.write(b"\x01")
    bad = run("--files", path)
    assert "Snapshot is corrupt (CRC is no longer valid)" in bad.stderr
