"""pylog-transactions: kafka-transactions.sh for pylog (list, describe, describe-producers, abort, find-hanging).

The global options come before the command, as in Kafka's tool:
`pylog-transactions --bootstrap-server HOST:PORT [--command-config FILE] COMMAND [options]`.
Tables are Kafka's (each column padded to its widest cell and followed by a tab); a failure is one
line on stderr in Kafka's words and exit 1; so is bad input, as argparse4j's error exits 1 there.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, NoReturn, Sequence

import click

from pylog.cli.common import CONTEXT_SETTINGS, describe_exception, open_admin, quiet_libraries
from pylog.cli.status_codes import ERROR
from pylog.cli.txn_admin import AbortSpec, ProducerState, TxnAdmin, TxnDescription, tp_name
from pylog.cli.txn_hanging import HANGING_HEADERS, find_hanging

PROG = "pylog-transactions"
USAGE = f"usage: {PROG} [-h] [--command-config FILE] --bootstrap-server host:port COMMAND ..."
PRODUCERS_HEADERS = ("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                     "CurrentTransactionStartOffset")
DESCRIBE_HEADERS = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                    "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TopicPartitions")
LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DEBUG_HINT = " Enable debug logging for additional detail."


class Failed(Exception):
    """printErrorAndExit: the line to print on stderr before exiting 1."""


def fail(message: str, cause: BaseException | None = None) -> NoReturn:
    """Kafka's printErrorAndExit(message[, cause])."""
    if cause is None:
        raise Failed(message)
    raise Failed(f"{message}: {describe_exception(cause)}.{DEBUG_HINT}") from cause


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """prettyPrintTable: every cell padded to its column's width and followed by a tab."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    return "\n".join("".join(cell.ljust(w) + "\t" for cell, w in zip(row, widths)) for row in [headers, *rows])


def producers_table(states: Sequence[ProducerState]) -> str:
    """describe-producers' table."""
    return table(PRODUCERS_HEADERS, [
        [str(s.producer_id), str(s.producer_epoch), str(-1 if s.coordinator_epoch is None else s.coordinator_epoch),
         str(s.last_sequence), str(s.last_timestamp), "None" if s.txn_start_offset is None else str(s.txn_start_offset)]
        for s in states])


def describe_table(tid: str, d: TxnDescription, now_ms: int) -> str:
    """describe's one-row table."""
    start = "None" if d.start_ms is None else str(d.start_ms)
    duration = "None" if d.start_ms is None else str(now_ms - d.start_ms)
    return table(DESCRIBE_HEADERS, [[str(d.coordinator_id), tid, str(d.producer_id), str(d.producer_epoch), d.state,
                                     str(d.timeout_ms), start, duration, ",".join(tp_name(tp) for tp in d.partitions)]])


def list_table(by_broker: dict[int, list[tuple[str, int, str]]]) -> str:
    """list's table: one row per transactional id, with the broker coordinating it."""
    return table(LIST_HEADERS, [[tid, str(broker), str(pid), state]
                                for broker, listings in sorted(by_broker.items()) for tid, pid, state in listings])


def _admin(ctx: click.Context) -> TxnAdmin:
    ctx.params["command_config"] = ctx.obj["command_config"]  # open_admin reads it from the running command
    try:
        return TxnAdmin(open_admin(ctx.obj["bootstrap_server"]))
    except Exception as e:  # the admin connects lazily: only reading --command-config can fail here
        fail("Failed to load admin client properties", e)


def _require(**values: Any) -> None:
    for name, value in values.items():
        if value is None:
            raise click.UsageError(f"argument --{name.replace('_', '-')} is required")


class TransactionsGroup(click.Group):
    """Exit 1 with argparse4j's two lines for bad input; Failed is one line on stderr and exit 1."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Note a help option anywhere, which argparse4j honours before checking required arguments."""
        ctx.meta["help"] = any(a in ("-h", "--help") for a in args)
        return super().parse_args(ctx, args)

    def main(self, args: Sequence[str] | None = None, **kwargs: Any) -> Any:  # type: ignore[override]
        """Run the tool; always exits."""
        quiet_libraries(False)
        try:
            code = super().main(args, standalone_mode=False, **kwargs)
        except click.UsageError as e:
            click.echo(USAGE, err=True)
            click.echo(f"{PROG}: error: {e.format_message()}", err=True)
            sys.exit(ERROR)
        except click.Abort:
            sys.exit(ERROR)
        except Failed as e:
            click.echo(str(e), err=True)
            sys.exit(ERROR)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(PROG, cls=TransactionsGroup, context_settings=CONTEXT_SETTINGS,
             help="This tool is used to analyze the transactional state of producers in the cluster. It can be used "
                  "to detect and recover from hanging transactions (kafka-transactions.sh).")
@click.option("--command-config", metavar="FILE", help="property file containing configs to be passed to admin client")
@click.option("--bootstrap-server", metavar="host:port",
              help="hostname and port for the broker to connect to, in the form `host:port`  (multiple "
                   "comma-separated entries can be given)")
@click.pass_context
def transactions(ctx: click.Context, command_config: str | None, bootstrap_server: str | None) -> None:
    """The pylog-transactions tool."""
    if not ctx.meta.get("help"):  # a command's help needs no cluster
        _require(bootstrap_server=bootstrap_server)
    ctx.obj = {"bootstrap_server": bootstrap_server, "command_config": command_config}


def _run(what: str, fn: Callable[[], Any]) -> Any:
    """Call the admin; a failure is printed as Kafka prints an ExecutionException: `what: cause.`"""
    try:
        return fn()
    except (Failed, click.ClickException):
        raise
    except Exception as e:
        fail(what, e)


@transactions.command("list", help="list transactions")
@click.pass_context
def list_command(ctx: click.Context) -> None:
    """List every transaction the brokers coordinate."""
    admin = _admin(ctx)
    click.echo(list_table(_run("Failed to list transactions", admin.list_transactions)))


@transactions.command("describe", help="describe the state of an active transactional-id")
@click.option("--transactional-id", help="transactional id")
@click.pass_context
def describe_command(ctx: click.Context, transactional_id: str | None) -> None:
    """Describe one transactional id."""
    _require(transactional_id=transactional_id)
    admin = _admin(ctx)
    d = _run(f"Failed to describe transaction state of transactional-id `{transactional_id}`",
             lambda: admin.describe_transaction(transactional_id))  # type: ignore[arg-type]
    click.echo(describe_table(transactional_id, d, int(time.time() * 1000)))  # type: ignore[arg-type]


@transactions.command("describe-producers", help="describe the states of active producers for a topic partition")
@click.option("--broker-id", type=int, help="optional broker id to describe the producer state on a specific replica")
@click.option("--topic", help="topic name")
@click.option("--partition", type=int, help="partition number")
@click.pass_context
def describe_producers_command(ctx: click.Context, broker_id: int | None, topic: str | None,
                               partition: int | None) -> None:
    """The producers a partition's leader (or one replica) remembers."""
    _require(topic=topic, partition=partition)
    tp = (topic, partition)
    admin = _admin(ctx)
    where = "leader" if broker_id is None else f"broker {broker_id}"
    states = _run(f"Failed to describe producers for partition {tp_name(tp)} on {where}",  # type: ignore[arg-type]
                  lambda: admin.describe_producers([tp], broker_id)[tp])  # type: ignore[list-item,index]
    click.echo(producers_table(states))


@transactions.command("abort", help="abort a hanging transaction (requires administrative privileges)")
@click.option("--topic", help="topic name")
@click.option("--partition", type=int, help="partition number")
@click.option("--start-offset", type=int, help="start offset of the transaction to abort (brokers on 3.0 and above)")
@click.option("--producer-id", type=int, help="producer id (brokers older than 3.0)")
@click.option("--producer-epoch", type=int, help="producer epoch (brokers older than 3.0)")
@click.option("--coordinator-epoch", type=int, help="coordinator epoch (brokers older than 3.0)")
@click.pass_context
def abort_command(ctx: click.Context, topic: str | None, partition: int | None, start_offset: int | None,
                  producer_id: int | None, producer_epoch: int | None, coordinator_epoch: int | None) -> None:
    """Write an ABORT marker for a transaction left open on one partition."""
    _require(topic=topic, partition=partition)
    tp = (topic, partition)
    if start_offset is None and producer_id is None:
        fail("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 or above) "
             "or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
    admin = _admin(ctx)
    if start_offset is None:
        if producer_epoch is None:
            fail("Missing required argument --producer-epoch")
        if coordinator_epoch is None:
            fail("Missing required argument --coordinator-epoch")
        # A transaction that hung before its first marker has coordinator epoch -1 in DescribeProducers; 0 is
        # no newer than any leader epoch, as Kafka's tool reasons.
        spec = AbortSpec(tp, producer_id, producer_epoch, max(coordinator_epoch, 0))  # type: ignore[arg-type]
    else:
        states = _run(f"Failed to validate producer state for partition {tp_name(tp)}",  # type: ignore[arg-type]
                      lambda: admin.describe_producers([tp])[tp])  # type: ignore[list-item,index]
        found = next((s for s in states if s.txn_start_offset == start_offset), None)
        if found is None:
            fail(f"Could not find any open transactions starting at offset {start_offset} on partition {tp_name(tp)}")
        spec = AbortSpec(tp, found.producer_id, found.producer_epoch, found.coordinator_epoch or 0)  # type: ignore
    _run(f"Failed to abort transaction {spec}", lambda: admin.abort(spec))


@transactions.command("find-hanging", help="find hanging transactions")
@click.option("--broker-id", type=int, help="broker id to search for hanging transactions")
@click.option("--max-transaction-timeout", type=int, default=15, show_default=True,
              help="maximum transaction timeout in minutes to limit the scope of the search")
@click.option("--topic", help="topic name to limit search to")
@click.option("--partition", type=int, help="partition number")
@click.pass_context
def find_hanging_command(ctx: click.Context, broker_id: int | None, max_transaction_timeout: int,
                         topic: str | None, partition: int | None) -> None:
    """Open transactions older than the timeout that their coordinator no longer knows about."""
    if topic is None and broker_id is None:
        fail("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the search")
    if partition is not None and topic is None:
        fail("The --partition argument requires --topic to be provided")
    rows = find_hanging(_admin(ctx), topic, partition, broker_id, max_transaction_timeout * 60000, fail,
                        lambda: int(time.time() * 1000))
    click.echo(table(HANGING_HEADERS, rows))


def main() -> None:
    """Console entry point (bin/pylog-transactions.sh, `pylog-transactions`)."""
    transactions.main(prog_name=PROG)


if __name__ == "__main__":
    main()
