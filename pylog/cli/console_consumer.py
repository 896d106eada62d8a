"""pylog-console-consumer: kafka-console-consumer.sh for pylog (records to stdout).

Kafka 3.x's flags, option checks and texts, and DefaultMessageFormatter's --property settings, on a
confluent-kafka (librdkafka) consumer. With --group the consumer subscribes in that group (the
group coordinator assigns partitions and offsets are committed, as in Kafka). Without --group,
Kafka subscribes with a throw-away group `console-consumer-NNNNN` that never commits; here the
consumer assigns itself every partition of the topic instead (from the start with
--from-beginning, else from the end), which reads the same records without a coordinator round.
--partition reads one partition from --offset. "Processed a total of N messages" ends on stderr.
"""

from __future__ import annotations

import random
import signal
import sys
import time
from typing import Any

import click

from pylog.cli.common import CliError, PylogCommand
from pylog.cli.console_reach import Reachability
from pylog.cli.console_io import ConsumedRecord, LineError, RecordFormatter, client_logger, parse_properties
from pylog.cli.console_producer import check_bootstrap
from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.common import properties
from pylog.common.configdef import ConfigError
from pylog.common.errors import ErrorCode

ISOLATION_LEVELS = ("read_committed", "read_uncommitted")
EARLIEST, LATEST = -2, -1  # ListOffsetsRequest.EARLIEST_TIMESTAMP / LATEST_TIMESTAMP
# What Kafka's consumer throws from poll() (ConsoleConsumer then ends with an error) rather than retries.
_FATAL_CODES = {ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.GROUP_AUTHORIZATION_FAILED,
                ErrorCode.TOPIC_AUTHORIZATION_FAILED}


def parse_offset(value: str | None, from_beginning: bool) -> int:
    """--offset: earliest, latest or a non-negative number (ConsoleConsumerOptions.parseOffset)."""
    if value is None:
        return EARLIEST if from_beginning else LATEST
    lowered = value.lower()
    if lowered in ("earliest", "latest"):
        return EARLIEST if lowered == "earliest" else LATEST
    if value.lstrip("+").isdigit():
        return int(value)
    raise click.UsageError(f"The provided offset value '{value}' is incorrect. Valid values are 'earliest', "
                           "'latest', or a non-negative long.")


def check_options(o: dict[str, Any]) -> None:
    """ConsoleConsumerOptions.checkRequiredArgs and checkConsumerGroup, with Kafka's messages."""
    if o["partition"] is not None:
        if o["from_beginning"] and o["offset"] is not None:
            raise click.UsageError("Options from-beginning and offset cannot be specified together.")
    elif o["offset"] is not None:
        raise click.UsageError("The partition is required when offset is specified.")
    if not o["bootstrap_server"]:
        raise click.UsageError("Missing required argument \"[bootstrap-server]\"")
    check_bootstrap(o["bootstrap_server"])
    if o["isolation_level"] not in ISOLATION_LEVELS:
        raise CliError(f"Invalid value {o['isolation_level']} for configuration isolation.level: String must be "
                       "one of: read_committed, read_uncommitted")


def consumer_config(o: dict[str, Any]) -> dict[str, Any]:
    """librdkafka settings: --consumer.config < --consumer-property, then the tool's own (Kafka's order)."""
    # Kafka's Java client property files work as they are (java_client_props translates them).
    cfg = librdkafka_config(properties.load(o["consumer_config"])) if o["consumer_config"] else {}
    cfg.update(librdkafka_config(parse_properties(o["consumer_property"])))
    groups = {g for g in (o["group"], cfg.get("group.id")) if g}
    if len(groups) > 1:
        raise click.UsageError("The group ids provided in different places (directly using '--group', via "
                               "'--consumer-property', or via '--consumer.config') do not match. Detected group "
                               "ids: " + ", ".join(f"'{g}'" for g in sorted(groups)))
    if groups and o["partition"] is not None:
        raise click.UsageError("Options group and partition cannot be specified together.")
    reset = cfg.get("auto.offset.reset")
    if reset is not None and o["from_beginning"] and reset != "earliest":
        raise CliError(f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', please "
                       "remove one option")
    cfg.setdefault("auto.offset.reset", "earliest" if o["from_beginning"] else "latest")
    cfg["bootstrap.servers"] = o["bootstrap_server"]
    cfg.setdefault("client.id", "console-consumer")
    cfg["isolation.level"] = o["isolation_level"]
    if groups:
        cfg["group.id"] = groups.pop()
    else:
        cfg["group.id"] = f"console-consumer-{random.randrange(100000)}"
        cfg.setdefault("enable.auto.commit", "false")
    cfg["logger"] = client_logger(o["debug"])
    return cfg


def _metadata(consumer: Any, o: dict[str, Any], reach: Reachability) -> Any:
    """The topic's metadata, failing at once (Kafka's line) when no broker can be reached."""
    from confluent_kafka import KafkaException

    deadline = time.monotonic() + 30
    while True:
        try:
            meta = consumer.list_topics(o["topic"], timeout=0.5)
            reach.answered = True
            return meta
        except KafkaException as e:
            consumer.poll(0.1)  # serves error_cb (nothing is assigned yet, so no record is taken)
            if reach.unreachable:
                raise CliError(reach.message()) from e
            if time.monotonic() > deadline:
                raise CliError(f"ERROR Could not get the metadata of {o['topic']} from {o['bootstrap_server']}: "
                               f"{e.args[0].str()}") from e


def _failure(err: Any) -> str | None:
    """The text that ends the consumer for an error Kafka's consumer would throw from poll(), else None."""
    if err.fatal():
        return f"ERROR Error processing message, terminating consumer process: {err.str()}"
    code = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if err.name() == "_UNKNOWN_TOPIC" else err.code()
    if code in _FATAL_CODES:
        java = ErrorCode(code)
        return (f"ERROR Error processing message, terminating consumer process: {java.exception_name}: "
                f"{err.str()}")
    return None


def _start(consumer: Any, o: dict[str, Any], offset: int, reach: Reachability) -> None:
    """Subscribe (--group) or assign partitions at their start offsets."""
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, TopicPartition

    if o["group"]:
        consumer.subscribe([o["topic"]], on_assign=lambda *_: setattr(reach, "answered", True))
        return
    meta = _metadata(consumer, o, reach)
    topic = meta.topics.get(o["topic"])
    if topic is None or topic.error is not None or not topic.partitions:
        raise CliError(f"ERROR Topic {o['topic']} does not exist or has no partitions"
                       + (f" ({topic.error.str()})" if topic is not None and topic.error is not None else ""))
    start = {EARLIEST: OFFSET_BEGINNING, LATEST: OFFSET_END}.get(offset, offset)
    if o["partition"] is not None:
        if o["partition"] not in topic.partitions:
            raise CliError(f"ERROR Partition {o['partition']} of topic {o['topic']} does not exist")
        parts = [o["partition"]]
    else:
        parts = sorted(topic.partitions)
    consumer.assign([TopicPartition(o["topic"], p, start) for p in parts])


def run(o: dict[str, Any], out: Any) -> int:
    """Consume and print until --max-messages, --timeout-ms or a signal; the number printed."""
    from confluent_kafka import Consumer, KafkaException

    offset = parse_offset(o["offset"], o["from_beginning"])
    formatter = RecordFormatter(parse_properties(o["property"] + o["formatter_property"]))
    cfg = consumer_config(o)
    reach = Reachability(cfg["bootstrap.servers"], cfg["client.id"], "Consumer")
    cfg["error_cb"] = reach.error_cb
    try:
        consumer = make_client(Consumer, cfg)
    except (KafkaException, ConfigError) as e:
        raise CliError(f"Invalid consumer configuration: {e.args[0].str() if isinstance(e, KafkaException) else e}") \
            from e
    stop = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.append(True))
    try:
        _start(consumer, o, offset, reach)
    except BaseException:
        consumer.close()
        raise
    count = 0
    try:
        timeout = o["timeout_ms"] / 1000 if o["timeout_ms"] is not None and o["timeout_ms"] >= 0 else None
        last = time.monotonic()
        while not stop and (o["max_messages"] is None or count < o["max_messages"]):
            msg = consumer.poll(0.2 if timeout is None else min(0.2, timeout))
            if msg is None:
                if reach.unreachable:
                    raise CliError(reach.message())
                if timeout is not None and time.monotonic() - last > timeout:
                    click.echo("ERROR Error processing message, terminating consumer process: "
                               "org.apache.kafka.common.errors.TimeoutException", err=True)
                    break
                continue
            if msg.error() is not None:  # librdkafka retries the rest by itself, as Kafka's consumer does
                failure = _failure(msg.error())
                if failure is not None:  # a missing topic or a refused group/topic: exit 1 (edge 4 of issue 25)
                    raise CliError(failure)
                click.echo(f"WARN {msg.error().str()}", err=True)
                continue
            last = time.monotonic()
            ts_type, ts = msg.timestamp()
            count += 1
            try:
                out.write(formatter.format(ConsumedRecord(msg.partition(), msg.offset(), ts_type, ts, msg.key(),
                                                          msg.value(), msg.headers() or ())))
                out.flush()
            except BrokenPipeError:  # e.g. `| head`: nobody reads any more
                click.echo("Unable to write to standard out, closing consumer.", err=True)
                break
    finally:
        consumer.close()
        click.echo(f"Processed a total of {count} messages", err=True)
    return count


@click.command("pylog-console-consumer", cls=PylogCommand, error_prefix="",
               context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
               help="This tool helps to read data from Kafka topics and outputs it to standard output.")
@click.option("--bootstrap-server", help="REQUIRED: The server(s) to connect to.")
@click.option("--topic", required=True, help="The topic to consume on.")
@click.option("--group", help="The consumer group id of the consumer.")
@click.option("--partition", type=click.IntRange(min=0), help="The partition to consume from. Consumption starts "
              "from the end of the partition unless '--offset' is specified.")
@click.option("--offset", help="The offset to consume from (a non-negative number), or 'earliest' which means from "
              "beginning, or 'latest' which means from end  [default: latest]")
@click.option("--from-beginning", is_flag=True, help="If the consumer does not already have an established offset "
              "to consume from, start with the earliest message present in the log rather than the latest message.")
@click.option("--max-messages", type=click.IntRange(min=0), help="The maximum number of messages to consume before "
              "exiting. If not set, consumption is continual.")
@click.option("--timeout-ms", type=int, help="If specified, exit if no message is available for consumption for the "
              "specified interval.")
@click.option("--property", multiple=True, help="Properties of the formatter, key=value: print.timestamp, print.key, "
              "print.offset, print.partition, print.headers, print.value (true/false), key.separator, "
              "line.separator, headers.separator, null.literal.")
@click.option("--formatter-property", multiple=True, help="Same as --property (Kafka 4's name).")
@click.option("--isolation-level", default="read_uncommitted", show_default=True,
              help="Set to read_committed in order to filter out transactional messages which are not committed. "
              "Set to read_uncommitted to read all messages.")
@click.option("--consumer-property", multiple=True, help="A consumer property key=value (librdkafka names).")
@click.option("--consumer.config", "consumer_config", type=click.Path(exists=True, dir_okay=False),
              help="Consumer config properties file (--consumer-property takes precedence).")
@click.option("--debug", is_flag=True, help="Print the traceback of an error.")
def console_consumer_command(**o: Any) -> None:
    """Consume records and print them."""
    check_options(o)
    try:
        run(o, sys.stdout.buffer)
    except LineError as e:
        raise click.UsageError(str(e)) from e


def main() -> None:
    """Console entry point (bin/pylog-console-consumer.sh, `pylog-console-consumer`)."""
    console_consumer_command.main(prog_name="pylog-console-consumer")


if __name__ == "__main__":
    sys.exit(main())
