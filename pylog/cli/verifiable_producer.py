"""pylog-verifiable-producer: kafka-verifiable-producer.sh (VerifiableProducer) on librdkafka.

Produces increasing integers ("N", or "PREFIX.N") to a topic and prints a JSON event per send outcome:
startup_complete, producer_send_success {key,value,topic,partition,offset}, producer_send_error
{key,value,topic,exception,message}, then, on completion or SIGTERM/SIGINT, shutdown_complete and
tool_data {sent,acked,target_throughput,avg_throughput}. Retries are 0 as in Kafka's tool; keyed
records are placed as the Java client places them (murmur2).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from pylog.cli.common import CONTEXT_SETTINGS, require_one_bootstrap, run_or_fail
from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.cli.perf_common import ThroughputThrottler, now_ms
from pylog.cli.verifiable_events import StopSignal, emit, exception_class
from pylog.common import properties


def _config(o: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = {"bootstrap.servers": o["bootstrap_server"] or o["broker_list"],
                             "acks": str(o["acks"]), "retries": "0"}
    if o["producer_config"]:
        props.update(properties.load(o["producer_config"]))
    config = librdkafka_config(props)
    config.setdefault("partitioner", "murmur2_random")
    return config


def run(o: dict[str, Any]) -> None:
    """VerifiableProducer.run plus its shutdown hook."""
    from confluent_kafka import Producer

    stop = StopSignal()
    producer = make_client(Producer, _config(o))
    topic, prefix, repeating = o["topic"], o["value_prefix"], o["repeating_keys"]
    counts = {"sent": 0, "acked": 0}
    create_time = o["message_create_time"] if o["message_create_time"] != -1 else None
    start = now_ms()
    throttler = ThroughputThrottler(o["throughput"], start)
    key_counter = 0

    def report(key: str | None, value: str) -> Any:
        def done(err: Any, msg: Any) -> None:
            if err is None:
                counts["acked"] += 1
                emit("producer_send_success", key=key, value=value, topic=msg.topic(), partition=msg.partition(),
                     offset=msg.offset())
            else:
                emit("producer_send_error", key=key, value=value, topic=topic, exception=exception_class(err),
                     message=err.str())
        return done

    emit("startup_complete")
    limit = o["max_messages"] if o["max_messages"] >= 0 else None
    i = 0
    while (limit is None or i < limit) and not stop.stopped:
        send_start = now_ms()
        key = None
        if repeating is not None:
            key, key_counter = str(key_counter), (key_counter + 1) % repeating
        value = f"{prefix}.{i}" if prefix is not None else str(i)
        extra = {}
        if create_time is not None:
            extra["timestamp"] = create_time
            create_time += now_ms() - start  # Kafka's own (odd) progression of the create time
        counts["sent"] += 1
        try:
            producer.produce(topic, value.encode(), key.encode() if key is not None else None,
                             on_delivery=report(key, value), **extra)
        except BufferError:
            producer.poll(0.1)
            counts["sent"] -= 1
            continue
        except Exception as exc:  # KafkaProducer.send throwing: reported as an event, like Kafka
            emit("producer_send_error", key=key, value=value, topic=topic,
                 exception="class org.apache.kafka.common.KafkaException", message=str(exc))
        producer.poll(0)
        if throttler.should_throttle(i, send_start):
            throttler.throttle()
        i += 1
    producer.flush()
    emit("shutdown_complete")
    elapsed = now_ms() - start
    emit("tool_data", sent=counts["sent"], acked=counts["acked"], target_throughput=o["throughput"],
         avg_throughput=1000 * (counts["acked"] / elapsed) if elapsed else float(counts["acked"]))


@click.command("pylog-verifiable-producer", context_settings=CONTEXT_SETTINGS, help=(
    "This tool produces increasing integers to the specified topic and prints JSON metadata to stdout on each "
    "\"send\" request, making externally visible which messages have been acked and which have not "
    "(kafka-verifiable-producer.sh, on librdkafka)."))
@click.option("--topic", required=True, metavar="TOPIC", help="Produce messages to this topic.")
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="REQUIRED: The server(s) to connect to.")
@click.option("--broker-list", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--max-messages", type=int, default=-1, show_default=True, metavar="MAX-MESSAGES",
              help="Produce this many messages. If -1, produce messages until the process is killed externally.")
@click.option("--throughput", type=int, default=-1, show_default=True, metavar="THROUGHPUT",
              help="If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec.")
@click.option("--acks", type=int, default=-1, show_default=True, metavar="ACKS",
              help="Acks required on each produced message. See Kafka docs on acks for details.")
@click.option("--producer.config", "producer_config", type=click.Path(exists=True, dir_okay=False),
              metavar="CONFIG_FILE", help="Producer config properties file.")
@click.option("--message-create-time", type=int, default=-1, show_default=True, metavar="CREATETIME",
              help="Send messages with creation time starting at the arguments value, in milliseconds since epoch")
@click.option("--value-prefix", type=int, metavar="VALUE-PREFIX",
              help="If specified, each produced value will have this prefix with a dot separator")
@click.option("--repeating-keys", type=click.IntRange(min=1), metavar="REPEATING-KEYS",
              help="If specified, each produced record will have a key starting at 0 increment by 1 up to the number "
                   "specified (exclusive), then the key is set to 0 again")
def verifiable_producer_command(**o: Any) -> None:
    """The pylog-verifiable-producer command."""
    require_one_bootstrap(o)
    run_or_fail(run, o)


def main() -> None:
    """Console entry point (bin/pylog-verifiable-producer.sh, `pylog-verifiable-producer`)."""
    verifiable_producer_command.main(prog_name="pylog-verifiable-producer")


if __name__ == "__main__":
    sys.exit(main())
