"""pylog-delete-records: kafka-delete-records.sh (delete a partition's records below an offset).

Reads kafka-delete-records.sh's --offset-json-file ({"partitions": [{"topic": "foo", "partition":
1, "offset": 1}], "version": 1}; offset -1 means the high watermark) and sends DeleteRecords (API 21)
to each partition's leader. The output is Kafka's, line for line. Kafka's tool exits 0 even when a
partition failed; we print the same lines and then exit 1 with one error line, so scripts notice.
"""

from __future__ import annotations

import json
from typing import Any

import click

from pylog.cli.admin_client import ApiError
from pylog.cli.common import DEFAULT_TIMEOUT_MS, OperationError, command, open_admin
from pylog.cli.results import DeletedPartition, RecordsDeleted
from pylog.zk.codecs import TopicPartition

OFFSET_JSON_HELP = ('REQUIRED: The JSON file with offset per partition. The format to use is: {"partitions": '
                    '[{"topic": "foo", "partition": 1, "offset": 1}], "version":1}')


def _field(entry: dict, name: str, kind: type) -> Any:
    value = entry.get(name)
    if name not in entry:
        raise OperationError(f"No such field exists: `{name}`")
    if not isinstance(value, kind) or isinstance(value, bool):
        wanted = "a string" if kind is str else "an integer"
        raise OperationError(f"Field `{name}` of {json.dumps(entry)} must be {wanted}")
    return value


def parse_offset_json(text: str) -> dict[TopicPartition, int]:
    """DeleteRecordsCommand.parseOffsetJsonStringWithoutDedup plus its duplicate check, with Kafka's texts."""
    try:
        data = json.loads(text)
    except ValueError:
        raise OperationError("The input string is not a valid JSON") from None
    if not isinstance(data, dict):
        raise OperationError("The input string is not a valid JSON object")
    version = data.get("version", 1)
    if version != 1:
        raise OperationError(f"Not supported version field value {version}")
    if "partitions" not in data:
        raise OperationError("Missing partitions field")
    if not isinstance(data["partitions"], list):
        raise OperationError("The partitions field must be a JSON array")
    offsets: dict[TopicPartition, int] = {}
    duplicates: list[TopicPartition] = []
    for entry in data["partitions"]:
        if not isinstance(entry, dict):
            raise OperationError(f"Each entry of partitions must be a JSON object, got {json.dumps(entry)}")
        tp = TopicPartition(_field(entry, "topic", str), _field(entry, "partition", int))
        offset = _field(entry, "offset", int)
        if tp in offsets and tp not in duplicates:
            duplicates.append(tp)
        offsets[tp] = offset
    if duplicates:
        raise OperationError("Offset json file contains duplicate topic partitions: "
                             f"{','.join(str(tp) for tp in duplicates)}")
    return offsets


def delete_records(bootstrap: str, offsets: dict[TopicPartition, int], timeout_ms: int) -> RecordsDeleted:
    """Send the deletions and collect each partition's outcome."""
    admin = open_admin(bootstrap, timeout_ms)
    outcome = admin.delete_records({(tp.topic, tp.partition): o for tp, o in offsets.items()})
    parts = []
    for (topic, partition), result in sorted(outcome.items()):
        name = str(TopicPartition(topic, partition))
        if isinstance(result, ApiError):
            parts.append(DeletedPartition(name, None, result.java_string()))
        else:
            parts.append(DeletedPartition(name, result))
    failed = sum(1 for p in parts if p.error is not None)
    return RecordsDeleted(parts, f"{failed} partition(s) could not be deleted" if failed else None)


@command("pylog-delete-records", help=(
    "This tool helps to delete records of the given partitions down to the specified offset "
    "(kafka-delete-records.sh)."))
@click.option("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT]", help="REQUIRED: The server to connect to.")
@click.option("--offset-json-file", type=click.Path(dir_okay=False), help=OFFSET_JSON_HELP)
@click.option("--timeout", type=click.IntRange(min=1), default=DEFAULT_TIMEOUT_MS, show_default=True,
              help="Milliseconds the brokers may take (the followers must follow the new start offset).")
def delete_records_command(bootstrap_server: str | None, offset_json_file: str | None, timeout: int,
                           **_: Any) -> RecordsDeleted:
    """The pylog-delete-records command."""
    for name, value in (("bootstrap-server", bootstrap_server), ("offset-json-file", offset_json_file)):
        if not value:  # CommandLineUtils.checkRequiredArgs: the first one missing
            raise click.UsageError(f'Missing required argument "[{name}]"')
    with open(offset_json_file, encoding="utf-8") as f:  # type: ignore[arg-type]
        offsets = parse_offset_json(f.read())
    return delete_records(bootstrap_server, offsets, timeout)  # type: ignore[arg-type]


def main() -> None:
    """Console entry point (bin/pylog-delete-records.sh, `pylog-delete-records`)."""
    delete_records_command.main(prog_name="pylog-delete-records")


if __name__ == "__main__":
    main()
