"""pylog-console-producer: kafka-console-producer.sh for pylog (lines from stdin become records).

Kafka 3.x's flags, defaults and LineMessageReader properties (parse.key, key.separator, parse.headers,
null.marker, ignore.error, ...), on a confluent-kafka (librdkafka) producer. Kafka's Java producer
settings map to librdkafka's (acks, compression.type, linger.ms, batch.size, retries, ...), and a
Java client property file works as it is (java_client_props: stores, JAAS login, serializers);
--producer-property passes any librdkafka property through. Keyed records land where Kafka's tools
put them: toPositive(murmur2(key)) % partitions (librdkafka's murmur2_random partitioner). Unlike Kafka's tool, which logs a failed
send and still exits 0, a record the cluster refused makes the tool exit 1 after the others are sent.
"""

from __future__ import annotations

import io
import sys
from typing import Any

import click

from pylog.cli.common import CliError, PylogCommand
from pylog.cli.console_io import LineError, LineReader, client_logger, parse_properties
from pylog.cli.console_reach import Reachability
from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.common import properties
from pylog.common.configdef import ConfigError

COMPRESSION_CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
LINE_READERS = ("kafka.tools.LineMessageReader", "org.apache.kafka.tools.LineMessageReader")


def check_bootstrap(servers: str) -> None:
    """ToolsUtils.validatePortOrExit: every entry must be host:port."""
    for hp in servers.split(","):
        host, sep, port = hp.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise CliError("Please provide valid host:port like host1:9091,host2:9092")


def producer_config(o: dict[str, Any]) -> dict[str, Any]:
    """librdkafka settings for the options, in Kafka's precedence (file < flags < --producer-property)."""
    cfg = librdkafka_config(properties.load(o["producer_config"])) if o["producer_config"] else {}
    codec = o["compression_codec"]
    if codec is not None and codec not in COMPRESSION_CODECS:
        raise CliError(f"Invalid value {codec} for configuration compression.type: String must be one of: "
                       + ", ".join(COMPRESSION_CODECS))
    cfg.update({
        "bootstrap.servers": o["bootstrap_server"] or o["broker_list"],
        "compression.type": codec or "none",
        "linger.ms": o["timeout"],
        "batch.size": o["max_partition_memory_bytes"] or o["batch_size"],
        "retries": o["message_send_max_retries"],
        "retry.backoff.ms": o["retry_backoff_ms"],
        "acks": o["acks"] or o["request_required_acks"],
        "request.timeout.ms": o["request_timeout_ms"],
        "metadata.max.age.ms": o["metadata_expiry_ms"],
        "queue.buffering.max.kbytes": max(1, o["max_memory_bytes"] // 1024),
        "socket.send.buffer.bytes": o["socket_buffer_size"],
    })
    cfg.setdefault("client.id", "console-producer")
    cfg.setdefault("message.timeout.ms", 120000)  # the Java producer's delivery.timeout.ms
    # librdkafka's default (consistent_random, CRC32) would put keyed records elsewhere than Java clients do.
    cfg.setdefault("partitioner", "murmur2_random")
    cfg.update(librdkafka_config(parse_properties(o["producer_property"])))
    cfg["logger"] = client_logger(o["debug"])
    return cfg


def _reader_props(o: dict[str, Any]) -> dict[str, str]:
    props = dict(properties.load(o["reader_config"])) if o["reader_config"] else {}
    props.update(parse_properties(o["property"]))
    return props


def _reason(exc: Exception) -> str:
    return exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)


def run(o: dict[str, Any], stdin: Any) -> int:
    """Send every stdin line to the topic; the number of records the cluster refused."""
    from confluent_kafka import KafkaException, Producer

    if o["line_reader"] not in LINE_READERS:
        raise CliError(f"Unsupported --line-reader {o['line_reader']}: only {LINE_READERS[0]} is available")
    reader = LineReader(_reader_props(o))
    cfg = producer_config(o)
    reach = Reachability(cfg["bootstrap.servers"], cfg["client.id"], "Producer")
    cfg["error_cb"] = reach.error_cb
    try:
        producer = make_client(Producer, cfg)
    except (KafkaException, ConfigError) as e:
        raise CliError(f"Invalid producer configuration: {_reason(e)}") from e
    failures = [0]

    def delivered(err: Any, msg: Any) -> None:
        reach.answered = reach.answered or err is None
        if err is not None:
            failures[0] += 1
            key, value = msg.key(), msg.value()
            click.echo(
                f"ERROR Error when sending message to topic {msg.topic()} with key: "
                f"{'null' if key is None else f'{len(key)} bytes'}, value: "
                f"{'null' if value is None else f'{len(value)} bytes'} with error: {err.str()}", err=True)

    try:
        for number, line in enumerate(stdin, 1):
            key, value, headers = reader.parse(line[:-1] if line.endswith("\n") else line, number)
            while True:
                try:
                    producer.produce(o["topic"], value=value, key=key, headers=headers or None, on_delivery=delivered)
                    break
                except BufferError:  # the local queue is full: wait for deliveries, then retry
                    producer.poll(0.1)
                    if reach.unreachable:
                        raise CliError(reach.message())
            producer.poll(0)
            if reach.unreachable:
                raise CliError(reach.message())
            if o["sync"]:
                _flush(producer, reach)
    finally:
        _flush(producer, reach)
    return failures[0]


def _flush(producer: Any, reach: Reachability) -> None:
    """flush(), but stop with Kafka's line as soon as no broker can be reached (edge 3 of issue 25)."""
    while producer.flush(0.2) > 0:
        if reach.unreachable:
            raise CliError(reach.message())


@click.command("pylog-console-producer", cls=PylogCommand, error_prefix="",
               context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110},
               help="This tool helps to read data from standard input and publish it to Kafka.")
@click.option("--bootstrap-server", help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to "
              "connect to. The broker list string in the form HOST1:PORT1,HOST2:PORT2.")
@click.option("--broker-list", help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is "
              "specified.")
@click.option("--topic", required=True, help="REQUIRED: The topic id to produce messages to.")
@click.option("--sync", is_flag=True, help="If set message send requests to the brokers are synchronously, one at "
              "a time as they arrive.")
@click.option("--compression-codec", is_flag=False, flag_value="gzip", default=None,
              help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'. If specified without "
              "value, then it defaults to 'gzip'")
@click.option("--batch-size", type=int, default=16384, show_default=True,
              help="Number of bytes to send in a single batch (`batch.size`).")
@click.option("--message-send-max-retries", type=int, default=3, show_default=True, help="`retries`.")
@click.option("--retry-backoff-ms", type=int, default=100, show_default=True, help="`retry.backoff.ms`.")
@click.option("--timeout", type=int, default=1000, show_default=True,
              help="The maximum time in ms a message waits for a batch to fill (`linger.ms`).")
@click.option("--request-required-acks", default="-1", show_default=True,
              help="The required `acks` of the producer requests")
@click.option("--acks", default=None, help="Same as --request-required-acks.")
@click.option("--request-timeout-ms", type=click.IntRange(min=1), default=1500, show_default=True,
              help="The ack timeout of the producer requests. Value must be non-negative and non-zero.")
@click.option("--metadata-expiry-ms", type=int, default=300000, show_default=True, help="`metadata.max.age.ms`.")
@click.option("--max-memory-bytes", type=int, default=32 * 1024 * 1024, show_default=True,
              help="The total memory used to buffer records waiting to be sent (`buffer.memory`).")
@click.option("--max-partition-memory-bytes", type=int, default=None,
              help="The buffer size allocated for a partition (`batch.size`); overrides --batch-size.")
@click.option("--socket-buffer-size", type=int, default=102400, show_default=True,
              help="The size of the tcp send buffer (`send.buffer.bytes`).")
@click.option("--line-reader", default=LINE_READERS[0], show_default=True,
              help="The class name of the class to use for reading lines from standard in.")
@click.option("--property", multiple=True, help="Properties of the line reader, key=value: parse.key=false, "
              "parse.headers=false, ignore.error=false, key.separator=\\t, headers.delimiter=\\t, "
              "headers.separator=',', headers.key.separator=':', null.marker (fields equal to it become null).")
@click.option("--reader-config", type=click.Path(exists=True, dir_okay=False),
              help="Config properties file for the message reader (--property takes precedence).")
@click.option("--producer-property", multiple=True, help="A producer property key=value (librdkafka names).")
@click.option("--producer.config", "producer_config", type=click.Path(exists=True, dir_okay=False),
              help="Producer config properties file (--producer-property takes precedence).")
@click.option("--debug", is_flag=True, help="Print the traceback of an error.")
def console_producer_command(**o: Any) -> None:
    """Read lines from stdin and produce them."""
    if not (o["bootstrap_server"] or o["broker_list"]):
        raise click.UsageError("Missing required argument \"[bootstrap-server]\"")
    check_bootstrap(o["bootstrap_server"] or o["broker_list"])
    try:
        # Kafka reads stdin as UTF-8 lines whatever the locale (BufferedReader over InputStreamReader(UTF_8)).
        failed = run(o, io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8"))
    except LineError as e:
        raise CliError(f"ERROR {e}") from e
    if failed:
        raise CliError(f"ERROR {failed} record(s) could not be sent to {o['topic']}")


def main() -> None:
    """Console entry point (bin/pylog-console-producer.sh, `pylog-console-producer`)."""
    console_producer_command.main(prog_name="pylog-console-producer")


if __name__ == "__main__":
    sys.exit(main())
