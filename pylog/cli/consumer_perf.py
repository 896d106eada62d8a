"""pylog-consumer-perf-test: kafka-consumer-perf-test.sh (ConsumerPerformance) on librdkafka.

Records are fetched by confluent-kafka's Consumer (librdkafka, a C client) in batches of up to 500
(the Java consumer's max.poll.records), so the figures measure the cluster rather than Python. The
header, the --show-detailed-stats interval lines and the final summary line are ConsumerPerformance's
(rebalance time is the time from subscribing, or from a revocation, to the assignment).
"""

from __future__ import annotations

import random
import sys
from typing import Any

import click

from pylog.cli.common import CONTEXT_SETTINGS, run_or_fail
from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.cli.perf_common import JavaDateFormat, jfloat, now_ms
from pylog.common import properties

_MB = 1024.0 * 1024.0
_BATCH = 500


def header(detailed: bool) -> str:
    """ConsumerPerformance.printHeader."""
    extra = ", rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
    first = "time, threadId" if detailed else "start.time, end.time"
    return f"{first}, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec{extra}"


def _div(a: float, b: float) -> float:
    if b == 0:
        return float("nan") if a == 0 else float("inf")
    return a / b


def progress_line(fmt: JavaDateFormat, bytes_read: int, last_bytes: int, msgs: int, last_msgs: int, start_ms: int,
                  end_ms: int, join_ms: int) -> str:
    """printConsumerProgress: one --show-detailed-stats line."""
    elapsed = float(end_ms - start_ms)
    interval_mb = (bytes_read - last_bytes) / _MB
    fetch_ms = end_ms - start_ms - join_ms
    fetch_mb_s = 0.0 if fetch_ms <= 0 else 1000.0 * interval_mb / fetch_ms
    fetch_n_s = 0.0 if fetch_ms <= 0 else 1000.0 * (msgs - last_msgs) / fetch_ms
    return (f"{fmt.format(end_ms)}, 0, {jfloat(bytes_read / _MB, 4)}, {jfloat(_div(1000.0 * interval_mb, elapsed), 4)}, "
            f"{msgs}, {jfloat(_div(msgs - last_msgs, elapsed) * 1000.0, 4)}, {join_ms}, {fetch_ms}, "
            f"{jfloat(fetch_mb_s, 4)}, {jfloat(fetch_n_s, 4)}")


def summary_line(fmt: JavaDateFormat, start_ms: int, end_ms: int, total_bytes: int, total_msgs: int,
                 join_ms: int) -> str:
    """The final line (without --show-detailed-stats)."""
    elapsed_s = (end_ms - start_ms) / 1000.0
    fetch_ms = end_ms - start_ms - join_ms
    mb = total_bytes / _MB
    return (f"{fmt.format(start_ms)}, {fmt.format(end_ms)}, {jfloat(mb, 4)}, {jfloat(_div(mb, elapsed_s), 4)}, "
            f"{total_msgs}, {jfloat(_div(total_msgs, elapsed_s), 4)}, {join_ms}, {fetch_ms}, "
            f"{jfloat(_div(mb, fetch_ms / 1000.0), 4)}, {jfloat(_div(total_msgs, fetch_ms / 1000.0), 4)}")


def _config(o: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = dict(properties.load(o["consumer_config"])) if o["consumer_config"] else {}
    props.update({"bootstrap.servers": o["bootstrap_server"] or o["broker_list"], "group.id": o["group"],
                  "receive.buffer.bytes": o["socket_buffer_size"], "max.partition.fetch.bytes": o["fetch_size"],
                  "auto.offset.reset": "latest" if o["from_latest"] else "earliest", "check.crcs": "false"})
    props.setdefault("client.id", "perf-consumer-client")
    return librdkafka_config(props)


class _Rebalances:
    """ConsumerPerfRebListener: join time in total and since the last report."""

    def __init__(self, start_ms: int) -> None:
        self.join_start = start_ms
        self.total = self.round = 0

    def on_assign(self, consumer: Any, partitions: Any) -> None:
        elapsed = now_ms() - self.join_start
        self.total += elapsed
        self.round += elapsed

    def on_revoke(self, consumer: Any, partitions: Any) -> None:
        self.join_start = now_ms()


def run(o: dict[str, Any]) -> None:
    """ConsumerPerformance.main after option parsing."""
    from confluent_kafka import Consumer, KafkaException

    fmt = JavaDateFormat(o["date_format"])
    if not o["hide_header"]:
        click.echo(header(o["show_detailed_stats"]))
    consumer = make_client(Consumer, _config(o))
    start = now_ms()
    reb = _Rebalances(start)
    consumer.subscribe([o["topic"]], on_assign=reb.on_assign, on_revoke=reb.on_revoke)
    msgs = bytes_read = last_msgs = last_bytes = 0
    now = last_report = last_consumed = now_ms()
    try:
        while msgs < o["messages"] and now - last_consumed <= o["timeout"]:
            batch = consumer.consume(_BATCH, 0.1)
            now = now_ms()
            if batch:
                last_consumed = now
            for m in batch:
                if m.error() is not None:
                    if m.error().fatal() or not m.error().retriable():
                        raise KafkaException(m.error())
                    continue
                msgs += 1
                bytes_read += len(m.key() or b"") + len(m.value() or b"")
                if now - last_report >= o["reporting_interval"]:
                    if o["show_detailed_stats"]:
                        click.echo(progress_line(fmt, bytes_read, last_bytes, msgs, last_msgs, last_report, now,
                                                 reb.round))
                    reb.round = 0
                    last_report, last_msgs, last_bytes = now, msgs, bytes_read
        if msgs < o["messages"]:
            click.echo(f"WARNING: Exiting before consuming the expected number of messages: timeout ({o['timeout']} "
                       "ms) exceeded. You can use the --timeout option to increase the timeout.")
        end = now_ms()
    finally:
        consumer.close()
    if not o["show_detailed_stats"]:
        click.echo(summary_line(fmt, start, end, bytes_read, msgs, reb.total))


@click.command("pylog-consumer-perf-test", context_settings=CONTEXT_SETTINGS, help=(
    "This tool is used to verify the consumer performance (kafka-consumer-perf-test.sh). Records are fetched by "
    "librdkafka (confluent-kafka), a C client, so the figures measure the cluster; Java consumer properties "
    "in --consumer.config are translated to librdkafka's."))
@click.option("--bootstrap-server", help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to "
              "connect to.")
@click.option("--broker-list", help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is "
              "specified.")
@click.option("--topic", help="REQUIRED: The topic to consume from.")
@click.option("--group", default=lambda: f"perf-consumer-{random.randrange(100000)}",
              help="The group id to consume on.  [default: perf-consumer-<random>]")
@click.option("--fetch-size", type=int, default=1024 * 1024, show_default=True,
              help="The amount of data to fetch in a single request.")
@click.option("--from-latest", is_flag=True, help="If the consumer does not already have an established offset to "
              "consume from, start with the latest message present in the log rather than the earliest message.")
@click.option("--socket-buffer-size", type=int, default=2 * 1024 * 1024, show_default=True,
              help="The size of the tcp RECV size.")
@click.option("--threads", type=int, default=None, help="DEPRECATED AND IGNORED: Number of processing threads.")
@click.option("--num-fetch-threads", type=int, default=None, help="DEPRECATED AND IGNORED: Number of fetcher threads.")
@click.option("--consumer.config", "consumer_config", type=click.Path(exists=True, dir_okay=False),
              help="Consumer config properties file.")
@click.option("--print-metrics", is_flag=True, help="Print out the metrics (not available: librdkafka's statistics "
              "differ from the Java consumer's metrics; accepted so scripts keep working).")
@click.option("--show-detailed-stats", is_flag=True, help="If set, stats are reported for each reporting interval "
              "as configured by reporting-interval")
@click.option("--timeout", type=int, default=10000, show_default=True,
              help="The maximum allowed time in milliseconds between returned records.")
@click.option("--messages", type=int, help="REQUIRED: The number of messages to send or consume")
@click.option("--reporting-interval", type=int, default=5000, show_default=True,
              help="Interval in milliseconds at which to print progress info.")
@click.option("--date-format", default="yyyy-MM-dd HH:mm:ss:SSS", show_default=True,
              help="The date format to use for formatting the time field. See java.text.SimpleDateFormat for options.")
@click.option("--hide-header", is_flag=True, help="If set, skips printing the header for the stats")
def consumer_perf_command(**o: Any) -> None:
    """The pylog-consumer-perf-test command."""
    if o["threads"] is not None or o["num_fetch_threads"] is not None:
        click.echo("WARNING: option [threads] and [num-fetch-threads] have been deprecated and will be ignored by "
                   "the test")
    if not (o["bootstrap_server"] or o["broker_list"]):
        raise click.UsageError('Missing required argument "[bootstrap-server]"')
    for name in ("topic", "messages"):
        if o[name] is None:
            raise click.UsageError(f'Missing required argument "[{name}]"')
    if o["reporting_interval"] <= 0:
        raise click.ClickException("Reporting interval must be greater than 0.")
    run_or_fail(run, o)


def main() -> None:
    """Console entry point (bin/pylog-consumer-perf-test.sh, `pylog-consumer-perf-test`)."""
    consumer_perf_command.main(prog_name="pylog-consumer-perf-test")


if __name__ == "__main__":
    sys.exit(main())
