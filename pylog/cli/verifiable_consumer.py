"""pylog-verifiable-consumer: kafka-verifiable-consumer.sh (VerifiableConsumer) on librdkafka.

Joins a group on one topic and prints JSON events: startup_complete, partitions_assigned /
partitions_revoked {partitions:[{topic,partition}]}, records_consumed {count, partitions:[{topic,
partition,count,minOffset,maxOffset}]}, record_data with --verbose, offsets_committed {offsets,
[error], success} after each batch unless --enable-autocommit, and shutdown_complete when it has
consumed --max-messages or gets SIGTERM/SIGINT. The classic group protocol only (pylog has no KIP-848).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from pylog.cli.common import CONTEXT_SETTINGS, require_one_bootstrap, run_or_fail
from pylog.cli.java_client_props import librdkafka_config, make_client
from pylog.cli.verifiable_events import StopSignal, emit
from pylog.common import properties

_BATCH = 500  # the Java consumer's max.poll.records


def _config(o: dict[str, Any]) -> dict[str, Any]:
    props: dict[str, Any] = dict(properties.load(o["consumer_config"])) if o["consumer_config"] else {}
    props.update({"partition.assignment.strategy": o["assignment_strategy"], "group.id": o["group_id"],
                  "bootstrap.servers": o["bootstrap_server"] or o["broker_list"],
                  "enable.auto.commit": "true" if o["enable_autocommit"] else "false",
                  "auto.offset.reset": o["reset_policy"], "session.timeout.ms": str(o["session_timeout"])})
    if o["group_instance_id"]:
        props["group.instance.id"] = o["group_instance_id"]
    return librdkafka_config(props)


def _partitions(tps: Any) -> list[dict[str, Any]]:
    return [{"topic": tp.topic, "partition": tp.partition} for tp in tps]


def _on_batch(records: list[Any], consumed: int, limit: int | None, verbose: bool) -> tuple[int, dict]:
    """VerifiableConsumer.onRecordsReceived: the summaries (and offsets to commit) of one poll."""
    by_tp: dict[tuple[str, int], list[Any]] = {}
    for m in records:
        by_tp.setdefault((m.topic(), m.partition()), []).append(m)
    offsets, summaries = {}, []
    for (topic, partition), msgs in by_tp.items():
        if limit is not None and consumed + len(msgs) > limit:
            msgs = msgs[:limit - consumed]
        if not msgs:
            continue
        offsets[(topic, partition)] = msgs[-1].offset() + 1
        summaries.append({"topic": topic, "partition": partition, "count": len(msgs),
                          "minOffset": msgs[0].offset(), "maxOffset": msgs[-1].offset()})
        if verbose:
            for m in msgs:
                emit("record_data", key=_text(m.key()), value=_text(m.value()), topic=topic, partition=partition,
                     offset=m.offset())
        consumed += len(msgs)
        if limit is not None and consumed >= limit:
            break
    emit("records_consumed", count=len(records), partitions=summaries)
    return consumed, offsets


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def _commit(consumer: Any, offsets: dict) -> None:
    from confluent_kafka import TopicPartition

    listed = [{"topic": t, "partition": p, "offset": o} for (t, p), o in offsets.items()]
    try:
        consumer.commit(offsets=[TopicPartition(t, p, o) for (t, p), o in offsets.items()], asynchronous=False)
        emit("offsets_committed", offsets=listed, success=True)
    except Exception as exc:
        err = exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)
        emit("offsets_committed", offsets=listed, error=err, success=False)


def run(o: dict[str, Any]) -> None:
    """VerifiableConsumer.run."""
    from confluent_kafka import Consumer

    stop = StopSignal()
    consumer = make_client(Consumer, _config(o))
    limit = o["max_messages"] if o["max_messages"] >= 0 else None
    consumed = 0
    emit("startup_complete")
    try:
        consumer.subscribe([o["topic"]], on_assign=lambda c, tps: emit("partitions_assigned", partitions=_partitions(tps)),
                           on_revoke=lambda c, tps: emit("partitions_revoked", partitions=_partitions(tps)))
        while not stop.stopped and (limit is None or consumed < limit):
            batch = [m for m in consumer.consume(_BATCH, 0.5) if m.error() is None]
            if not batch:
                continue
            consumed, offsets = _on_batch(batch, consumed, limit, o["verbose"])
            if not o["enable_autocommit"] and offsets:
                _commit(consumer, offsets)
    finally:
        consumer.close()
        emit("shutdown_complete")


@click.command("pylog-verifiable-consumer", context_settings=CONTEXT_SETTINGS, help=(
    "This tool consumes messages from a specific topic and emits consumer events (e.g. group rebalances, received "
    "messages, and offsets committed) as JSON objects to STDOUT (kafka-verifiable-consumer.sh, on librdkafka)."))
@click.option("--bootstrap-server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.")
@click.option("--broker-list", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
              help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
@click.option("--topic", required=True, metavar="TOPIC", help="Consumes messages from this topic.")
@click.option("--group-protocol", default="classic", show_default=True, metavar="GROUP_PROTOCOL",
              help="Group protocol (must be one of CLASSIC, CONSUMER); pylog brokers speak CLASSIC.")
@click.option("--group-remote-assignor", default=None, metavar="GROUP_REMOTE_ASSIGNOR",
              help="Group remote assignor; only used if the group protocol is CONSUMER")
@click.option("--group-id", required=True, metavar="GROUP_ID",
              help="The groupId shared among members of the consumer group")
@click.option("--group-instance-id", metavar="GROUP_INSTANCE_ID", help="A unique identifier of the consumer instance")
@click.option("--max-messages", type=int, default=-1, show_default=True, metavar="MAX-MESSAGES",
              help="Consume this many messages. If -1 (the default), the consumer will consume until the process is "
                   "killed externally")
@click.option("--session-timeout", type=int, default=30000, show_default=True, metavar="TIMEOUT_MS",
              help="Set the consumer's session timeout")
@click.option("--verbose", is_flag=True, help="Enable to log individual consumed records")
@click.option("--enable-autocommit", is_flag=True, help="Enable offset auto-commit on consumer")
@click.option("--reset-policy", default="earliest", show_default=True,
              help="Set reset policy (must be either 'earliest', 'latest', or 'none'")
@click.option("--assignment-strategy", default="org.apache.kafka.clients.consumer.RangeAssignor", show_default=True,
              help="Set assignment strategy (e.g. org.apache.kafka.clients.consumer.RoundRobinAssignor)")
@click.option("--consumer.config", "consumer_config", type=click.Path(exists=True, dir_okay=False),
              metavar="CONFIG_FILE", help="Consumer config properties file (config options shared with command line "
              "parameters will be overridden).")
def verifiable_consumer_command(**o: Any) -> None:
    """The pylog-verifiable-consumer command."""
    require_one_bootstrap(o)
    if o["group_protocol"].upper() != "CLASSIC":
        raise click.UsageError(f"--group-protocol {o['group_protocol']}: pylog brokers implement the CLASSIC group "
                               "protocol only (no KIP-848 ConsumerGroupHeartbeat)")
    run_or_fail(run, o)


def main() -> None:
    """Console entry point (bin/pylog-verifiable-consumer.sh, `pylog-verifiable-consumer`)."""
    verifiable_consumer_command.main(prog_name="pylog-verifiable-consumer")


if __name__ == "__main__":
    sys.exit(main())
