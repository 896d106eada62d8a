"""pylog-producer-perf-test: kafka-producer-perf-test.sh (ProducerPerformance) on librdkafka.

The records are sent by confluent-kafka's Producer (librdkafka, a C client): Python only hands each
record over and takes its delivery report, so the figures measure the cluster, not the tool, up to
the rate one Python thread can call produce() (a few hundred thousand small records a second).
Latency is, as in Kafka's tool, from send() to the delivery callback, in whole milliseconds.
Flags, interval lines (every 5 s) and the final summary line are ProducerPerformance's.
"""

from __future__ import annotations

import os
import random
import sys
from typing import Any

import click

from pylog.cli.common import CONTEXT_SETTINGS, run_or_fail
from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.cli.perf_common import ThroughputThrottler, jfloat, now_ms
from pylog.common import properties

_LETTERS = bytes(65 + i % 26 for i in range(256))  # random bytes -> 'A'..'Z', as Kafka's payloads
_MB = 1024.0 * 1024.0


class Stats:
    """ProducerPerformance.Stats: windows of 5 s, up to 500,000 sampled latencies for the percentiles."""

    def __init__(self, num_records: int, reporting_interval_ms: int = 5000) -> None:
        self.start = self.window_start = now_ms()
        self.sampling = num_records // min(num_records, 500000)
        self.latencies: list[int] = []
        self.iteration = self.count = self.bytes = self.total_latency = self.max_latency = 0
        self.window_count = self.window_bytes = self.window_total_latency = self.window_max_latency = 0
        self.interval = reporting_interval_ms

    def record(self, latency: int, size: int, time_ms: int) -> None:
        """One acknowledged record."""
        self.count += 1
        self.bytes += size
        self.total_latency += latency
        self.max_latency = max(self.max_latency, latency)
        self.window_count += 1
        self.window_bytes += size
        self.window_total_latency += latency
        self.window_max_latency = max(self.window_max_latency, latency)
        if self.iteration % self.sampling == 0:
            self.latencies.append(latency)
        if time_ms - self.window_start >= self.interval:
            self.print_window()
            self.window_start = now_ms()
            self.window_count = self.window_bytes = self.window_total_latency = self.window_max_latency = 0

    def print_window(self) -> None:
        """`N records sent, R records/sec (M MB/sec), A ms avg latency, X ms max latency.`"""
        elapsed = now_ms() - self.window_start
        rate = 1000.0 * self.window_count / elapsed if elapsed else float("inf")
        mb = 1000.0 * self.window_bytes / elapsed / _MB if elapsed else float("inf")
        avg = self.window_total_latency / self.window_count if self.window_count else float("nan")
        click.echo(f"{self.window_count} records sent, {jfloat(rate, 1)} records/sec ({jfloat(mb, 2)} MB/sec), "
                   f"{jfloat(avg, 1)} ms avg latency, {jfloat(float(self.window_max_latency), 1)} ms max latency.")

    def total_line(self) -> str:
        """The final summary line, with the 50th, 95th, 99th and 99.9th percentiles."""
        elapsed = now_ms() - self.start
        rate = 1000.0 * self.count / elapsed if elapsed else float("inf")
        mb = 1000.0 * self.bytes / elapsed / _MB if elapsed else float("inf")
        lat = sorted(self.latencies)
        percs = [lat[int(p * len(lat))] if lat else 0 for p in (0.5, 0.95, 0.99, 0.999)]
        avg = self.total_latency / self.count if self.count else float("nan")
        return (f"{self.count} records sent, {jfloat(rate)} records/sec ({jfloat(mb, 2)} MB/sec), {jfloat(avg, 2)} ms "
                f"avg latency, {jfloat(float(self.max_latency), 2)} ms max latency, {percs[0]} ms 50th, {percs[1]} ms "
                f"95th, {percs[2]} ms 99th, {percs[3]} ms 99.9th.")


def _props(pairs: tuple[str, ...], config_file: str | None, transactional_id: str | None) -> dict[str, Any]:
    props: dict[str, Any] = dict(properties.load(config_file)) if config_file else {}
    for pair in pairs:
        pieces = pair.split("=")
        if len(pieces) != 2:
            raise click.ClickException(f"Invalid property: {pair}")
        props[pieces[0]] = pieces[1]
    props.setdefault("client.id", "perf-producer-client")
    if transactional_id is not None:
        props["transactional.id"] = transactional_id
    config = librdkafka_config(props)
    config.setdefault("partitioner", "murmur2_random")  # the Java producer's placement of keyed records
    return config


def _payloads(path: str | None, delimiter: str) -> list[bytes]:
    if path is None:
        return []
    click.echo(f"Reading payloads from: {os.path.abspath(path)}")
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        raise click.ClickException("File does not exist or empty file provided.")
    with open(path, encoding="utf-8") as f:
        items = f.read().split(delimiter)
    while items and items[-1] == "":  # Java's String.split drops trailing empty strings
        items.pop()
    click.echo(f"Number of messages read: {len(items)}")
    return [p.encode() for p in items]


def run(o: dict[str, Any]) -> None:
    """ProducerPerformance.start."""
    from confluent_kafka import Producer

    delimiter = "\n" if o["payload_delimiter"] == "\\n" else o["payload_delimiter"]
    payloads = _payloads(o["payload_file"], delimiter)
    transactions = o["transaction_duration_ms"] > 0
    config = _props(o["producer_props"], o["producer_config"], o["transactional_id"] if transactions else None)
    last_stats: list[str] = []
    if o["print_metrics"]:  # librdkafka's own counters stand in for the Java client's metrics
        config.update({"statistics.interval.ms": 1000, "stats_cb": last_stats.append})
    producer = make_client(Producer, config)
    if transactions:
        producer.init_transactions()
    num, size, topic = o["num_records"], o["record_size"], o["topic"]
    rng = random.Random(0)
    stats = Stats(num)
    throttler = ThroughputThrottler(o["throughput"], stats.start)
    txn_size, txn_start = 0, 0

    def callback(start: int, nbytes: int) -> Any:
        def done(err: Any, _msg: Any) -> None:
            now = now_ms()
            if err is None:  # like Kafka's, only successes count
                stats.record(now - start, nbytes, now)
                stats.iteration += 1
            else:
                click.echo(f"org.apache.kafka.common.KafkaException: {err.str()}", err=True)
        return done

    for i in range(num):
        if payloads:
            payload = payloads[rng.randrange(len(payloads))]
        elif size is not None:
            payload = os.urandom(size).translate(_LETTERS)
        else:
            payload = str(i).encode()
        if transactions and txn_size == 0:
            producer.begin_transaction()
            txn_start = now_ms()
        send_start = now_ms()
        while True:
            try:
                producer.produce(topic, payload, on_delivery=callback(send_start, len(payload)))
                break
            except BufferError:  # librdkafka's queue is full: serve delivery reports, then retry
                producer.poll(0.01)
        producer.poll(0)
        txn_size += 1
        if transactions and o["transaction_duration_ms"] <= send_start - txn_start:
            producer.commit_transaction()
            txn_size = 0
        if throttler.should_throttle(i, send_start):
            throttler.throttle()
    if transactions and txn_size:
        producer.commit_transaction()
    producer.flush()
    click.echo(stats.total_line())
    if o["print_metrics"]:
        producer.poll(1.1)  # one more statistics report, after the last delivery
        click.echo("librdkafka statistics (JSON, see librdkafka's STATISTICS.md):")
        click.echo(last_stats[-1] if last_stats else "{}")


@click.command("pylog-producer-perf-test", context_settings=CONTEXT_SETTINGS, help=(
    "This tool is used to verify the producer performance (kafka-producer-perf-test.sh). The records are sent "
    "by librdkafka (confluent-kafka), a C client, so the figures measure the cluster; Java producer properties "
    "are translated to librdkafka's and keyed placement is the Java client's murmur2."))
@click.option("--topic", required=True, metavar="TOPIC", help="produce messages to this topic")
@click.option("--num-records", required=True, type=click.IntRange(min=1), metavar="NUM-RECORDS",
              help="number of messages to produce")
@click.option("--record-size", type=click.IntRange(min=0), metavar="RECORD-SIZE",
              help="message size in bytes. Note that you must provide exactly one of --record-size or "
                   "--payload-file or --payload-monotonic.")
@click.option("--payload-file", metavar="PAYLOAD-FILE", help="file to read the message payloads from. This works "
              "only for UTF-8 encoded text files. Payloads will be read from this file and a payload will be randomly "
              "selected when sending messages.")
@click.option("--payload-monotonic", is_flag=True, help="payload is monotonically increasing integer.")
@click.option("--payload-delimiter", default="\\n", show_default=True, metavar="PAYLOAD-DELIMITER",
              help="provides delimiter to be used when --payload-file is provided.")
@click.option("--throughput", required=True, type=float, metavar="THROUGHPUT",
              help="throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to -1 "
                   "to disable throttling.")
@click.option("--producer-props", multiple=True, metavar="PROP-NAME=PROP-VALUE",
              help="kafka producer related configuration properties like bootstrap.servers,client.id etc. These "
                   "configs take precedence over those passed via --producer.config.")
@click.option("--producer.config", "producer_config", type=click.Path(exists=True, dir_okay=False),
              metavar="CONFIG-FILE", help="producer config properties file.")
@click.option("--print-metrics", is_flag=True, help="print out metrics at the end of the test.")
@click.option("--transactional-id", default="performance-producer-default-transactional-id", show_default=True,
              help="The transactionalId to use if transaction-duration-ms is > 0.")
@click.option("--transaction-duration-ms", type=int, default=0, show_default=True, metavar="TRANSACTION-DURATION",
              help="The max age of each transaction. The commitTransaction will be called after this time has "
                   "elapsed. Transactions are only enabled if this value is positive.")
def producer_perf_command(**o: Any) -> None:
    """The pylog-producer-perf-test command."""
    given = [n for n in ("record_size", "payload_file") if o[n] is not None] + (["x"] if o["payload_monotonic"] else [])
    if len(given) != 1:
        raise click.UsageError("exactly one of the arguments --record-size --payload-file --payload-monotonic is "
                               "required")
    if not o["producer_props"] and not o["producer_config"]:
        raise click.UsageError("Either --producer-props or --producer.config must be specified.")
    o["producer_props"] = tuple(p for arg in o["producer_props"] for p in arg.split())
    run_or_fail(run, o)


def expand_multi_value(args: list[str], option: str) -> list[str]:
    """argparse4j's nargs('+'): `--producer-props a=1 b=2` becomes one --producer-props per value for click."""
    out: list[str] = []
    taking = False
    for arg in args:
        if arg == option:
            taking = True
            continue
        if taking and not arg.startswith("--"):
            out += [option, arg]
            continue
        taking = False
        out.append(arg)
    return out


def main() -> None:
    """Console entry point (bin/pylog-producer-perf-test.sh, `pylog-producer-perf-test`)."""
    producer_perf_command.main(expand_multi_value(sys.argv[1:], "--producer-props"),
                               prog_name="pylog-producer-perf-test")


if __name__ == "__main__":
    sys.exit(main())
