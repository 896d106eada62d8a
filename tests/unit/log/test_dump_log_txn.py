"""pylog-dump-log --transaction-log-decoder: `__transaction_state` records as Kafka 3.x's DumpLogSegments prints them."""

from click.testing import CliRunner

from pylog.cli.dump_log import dump_log
from pylog.coordinator.transaction.records import TxnLogValue, encode_key, encode_value
from pylog.log import Log, LogConfig
from pylog.protocol.records import build_batch, validate_batches

TS = 1_690_000_000_000


def _segment(tmp_path):
    log = Log.open(str(tmp_path / "__transaction_state-7"), LogConfig())
    ongoing = TxnLogValue(1000, 2, 60000, 1, {"b": (3,), "a": (1, 0)}, TS + 5, TS)
    empty = TxnLogValue(1001, 0, 30000, 0, None, TS + 6, -1)
    batches = [
        build_batch([(encode_key("app-1"), encode_value(ongoing), [], TS + 5),
                     (encode_key("app-2"), encode_value(empty), [], TS + 6)]),
        build_batch([(encode_key("gone"), None, [], TS + 7), (b"\x00\x09junk", b"\x00\x00", [], TS + 8)]),
    ]
    for raw in batches:
        buf = bytearray(raw)
        log.append_as_leader(buf, validate_batches(buf), 0)
    log.close()
    return str(tmp_path / "__transaction_state-7" / "00000000000000000000.log")


def test_transaction_log_records_are_decoded(tmp_path):
    path = _segment(tmp_path)
    result = CliRunner().invoke(dump_log, ["--files", path, "--transaction-log-decoder"])
    assert result.exit_code == 0, result.output
    records = [line for line in result.stdout.splitlines() if line.startswith("| ")]
    assert [r.split(" headerKeys: [] ", 1)[1] for r in records[:3]] == [
        "key: transaction_metadata::transactionalId=app-1 payload: producerId:1000,producerEpoch:2,state=Ongoing,"
        "partitions=[a-0,a-1,b-3],txnLastUpdateTimestamp=1690000000005,txnTimeoutMs=60000",
        "key: transaction_metadata::transactionalId=app-2 payload: producerId:1001,producerEpoch:0,state=Empty,"
        "partitions=[],txnLastUpdateTimestamp=1690000000006,txnTimeoutMs=30000",
        "key: transaction_metadata::transactionalId=gone payload: <DELETE>",
    ]
    # A record that is not a transaction log record is named on stderr and shown undecoded.
    assert records[3].endswith("key: \x00\tjunk payload: \x00\x00")
    assert "Cannot decode the record at offset 3 as a transaction log record: unknown TransactionLogKey version 9" \
        in result.stderr


def test_without_the_decoder_the_bytes_print_as_text(tmp_path):
    path = _segment(tmp_path)
    result = CliRunner().invoke(dump_log, ["--files", path, "--print-data-log"])
    assert result.exit_code == 0 and "transaction_metadata::" not in result.stdout


def test_json_output_carries_the_decoded_texts(tmp_path):
    import json
    path = _segment(tmp_path)
    result = CliRunner().invoke(dump_log, ["--files", path, "--transaction-log-decoder", "--output", "json"])
    assert result.exit_code == 0, result.output
    first, second = [json.loads(line) for line in result.stdout.splitlines()]
    assert first["records"][0]["key"] == "transaction_metadata::transactionalId=app-1"
    assert first["records"][1]["payload"].startswith("producerId:1001,producerEpoch:0,state=Empty,")
    assert second["records"][0]["payload"] == "<DELETE>"
    assert second["records"][1]["decode_error"] == "unknown TransactionLogKey version 9"
