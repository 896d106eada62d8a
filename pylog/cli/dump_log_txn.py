"""pylog-dump-log's --transaction-log-decoder: `__transaction_state` records in Kafka's words.

Kafka 3.x's TransactionLog.formatRecordKeyAndValue: the key as `transaction_metadata::transactionalId=<id>`
and the value as `producerId:<id>,producerEpoch:<epoch>,state=<State>,partitions=[t-0,t-1],
txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>`, or `<DELETE>` for the tombstone of an expired id.
"""

from __future__ import annotations

from pylog.coordinator.transaction.records import RecordFormatError, decode_key, decode_value
from pylog.coordinator.transaction.state import from_id
from pylog.protocol.records import Record


def parse_transaction_log_record(r: Record) -> tuple[str, str]:
    """(key text, payload text) of one `__transaction_state` record; RecordFormatError if it is not one."""
    if r.key is None:
        raise RecordFormatError("the record has no key")
    tid = decode_key(bytes(r.key))
    key = f"transaction_metadata::transactionalId={tid}"
    if r.value is None:
        return key, "<DELETE>"
    v = decode_value(bytes(r.value))
    try:
        state = from_id(v.status).kafka_name
    except ValueError as e:
        raise RecordFormatError(str(e)) from None
    partitions = ",".join(f"{t}-{p}" for t in sorted(v.partitions or {}) for p in sorted(v.partitions[t]))  # type: ignore[index]
    return key, (f"producerId:{v.producer_id},producerEpoch:{v.producer_epoch},state={state},"
                 f"partitions=[{partitions}],txnLastUpdateTimestamp={v.last_update_ms},txnTimeoutMs={v.timeout_ms}")
