"""What every pylog command shares: errors and exit codes, the connection and output options,
Kafka-style option checks, opening ZooKeeper or a broker, and progress bars.

A command's callback returns a result (a dataclass from results.py); PylogCommand renders it in
the chosen --output format and turns any exception into one line on stderr with the right exit
code (a traceback too with --debug). Usage mistakes are click.UsageError (exit 2).
"""

from __future__ import annotations

import logging
import sys
import traceback
import warnings
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

import click
from click.core import ParameterSource

from pylog.cli import render, status_codes
from pylog.cli.admin_client import BrokerAdmin
from pylog.client.sync import ClientError
from pylog.common.configdef import ConfigError
from pylog.common.errors import KafkaError
from pylog.planner.model import PlanError
from pylog.zk.client import ZkClient
from pylog.zk.errors import ZkError

assert click.UsageError.exit_code == status_codes.USAGE_ERROR

CONTEXT_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 110}
# Kafka's tools wait up to 30 s for ZooKeeper (zookeeper.connection.timeout.ms in the tools) and the admin client.
DEFAULT_TIMEOUT_MS = 30000


class OperationError(Exception):
    """The operation failed for a reason the user should read (Kafka's AdminCommandFailedException)."""


class CliError(click.ClickException):
    """One line on stderr, exit 1: the message is printed as given (the command added its prefix)."""

    exit_code = status_codes.ERROR

    def show(self, file: Any = None) -> None:
        """Print the message alone (click would add 'Error: ')."""
        click.echo(self.format_message(), err=True)


# Exceptions whose message is meant for the operator; anything else also names its type. KafkaError covers the
# admin client's, the placement's and the brokers' refusals (ApiError), all carrying a Kafka error code.
_EXPECTED = (OperationError, KafkaError, ConfigError, PlanError, ClientError, ZkError)


def describe_exception(exc: BaseException) -> str:
    """The one line an operator sees for a failure."""
    if isinstance(exc, _EXPECTED):
        return str(exc) or type(exc).__name__
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return f"{type(exc).__name__}: {exc}"


class PylogCommand(click.Command):
    """A click command whose callback returns a result to render (see module docstring).

    error_prefix: what Kafka prints before an error message (TopicCommand's
    "Error while executing topic command : "); "Error: " by default.
    """

    def __init__(self, *args: Any, error_prefix: str = "Error: ", **kwargs: Any) -> None:
        kwargs.setdefault("context_settings", CONTEXT_SETTINGS)
        super().__init__(*args, **kwargs)
        self.error_prefix = error_prefix

    def invoke(self, ctx: click.Context) -> Any:
        """Run, render the result, map failures to exit codes."""
        quiet_libraries(bool(ctx.params.get("debug")))
        emitted_before = render.EMITTED[0]
        try:
            result = super().invoke(ctx)
            if result is not None:
                render.emit(result, ctx.params.get("output") or "text")
            failure = getattr(result, "failure", None)
            if failure:
                raise CliError(self.error_prefix + failure)
        except click.ClickException as exc:
            if render.EMITTED[0] == emitted_before:
                _json_failure(ctx, exc.format_message(), exc.exit_code)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except Exception as exc:
            if ctx.params.get("debug"):
                traceback.print_exc()
            error = CliError(self.error_prefix + describe_exception(exc) + _security_hint(ctx, exc))
            if render.EMITTED[0] == emitted_before:
                _json_failure(ctx, error.format_message(), error.exit_code)
            raise error from exc
        return result


def _security_hint(ctx: click.Context, exc: Exception) -> str:
    """Why a broker hung up on a plaintext tool: its listener wants TLS, or SASL (the user's fix either way)."""
    bootstrap = ctx.params.get("bootstrap_server")
    if not bootstrap or ctx.params.get("command_config") or "connection closed by broker" not in str(exc):
        return ""
    host, _, port = bootstrap.split(",")[0].strip().rpartition(":")
    if _speaks_tls(host, int(port)):
        return (f" (the listener at {host}:{port} speaks TLS: give --command-config a file with "
                "security.protocol=SSL or SASL_SSL and ssl.truststore.location)")
    return (f" (the listener at {host}:{port} closed the connection of a PLAINTEXT client; if it is a SASL "
            "listener, give --command-config a file with security.protocol=SASL_PLAINTEXT, sasl.mechanism and "
            "sasl.jaas.config)")


def _speaks_tls(host: str, port: int) -> bool:
    """Whether a TLS handshake (certificate unchecked: only the protocol is probed) succeeds there."""
    import socket
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=3) as raw, ctx.wrap_socket(raw):
            return True
    except (OSError, ValueError):
        return False


def _json_failure(ctx: click.Context, message: str, exit_code: int) -> None:
    """With --output json a failure is a JSON document on stdout too (the one line stays on stderr)."""
    if ctx.params.get("output") == "json":
        import json
        click.echo(json.dumps({"error": message, "exit_code": exit_code}))


def quiet_libraries(debug: bool) -> None:
    """Keep library chatter (kazoo's reconnect warnings) off stderr, where only our one error line belongs.

    Python prints unhandled WARNING records through its last-resort handler; a NullHandler on the root
    logger stops that. --debug shows the libraries' log instead.
    """
    warnings.filterwarnings("ignore", message="No chroot path exists", module="kazoo")  # open_zk says it once
    root = logging.getLogger()
    if debug:
        logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    elif not any(isinstance(h, logging.NullHandler) for h in root.handlers):
        root.addHandler(logging.NullHandler())


def command(name: str, help: str, error_prefix: str = "Error: ", cls: type[PylogCommand] | None = None
            ) -> Callable[[Callable[..., Any]], PylogCommand]:
    """@command(...) makes a PylogCommand (or the subclass `cls`) with --output and --debug."""
    def decorate(func: Callable[..., Any]) -> PylogCommand:
        cmd = click.command(name, cls=cls or PylogCommand, help=help, error_prefix=error_prefix)(func)
        # Appended, so the help lists them after the command's own (Kafka-named) options.
        cmd.params += [
            click.Option(["--output"], type=click.Choice(["text", "json", "table"]), default="text",
                         show_default=True,
                         help="text: Kafka's format; json: one JSON document; table: tables for people."),
            click.Option(["--debug"], is_flag=True, help="Print the traceback of an error."),
        ]
        return cmd
    return decorate


def output_format() -> str:
    """The running command's --output (text when there is none)."""
    ctx = click.get_current_context(silent=True)
    return (ctx.params.get("output") if ctx else None) or "text"


# ---------------------------------------------------------------- connection options

@dataclass(frozen=True)
class Target:
    """Where a command goes: ZooKeeper (writes znodes like Kafka 2.8's tools) or a broker (admin RPCs)."""

    zookeeper: str | None = None
    bootstrap_server: str | None = None

    @property
    def via(self) -> str:
        """'zookeeper' or 'bootstrap-server' (results carry it; the text formats differ by mode)."""
        return "zookeeper" if self.zookeeper else "bootstrap-server"


def target_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Add --bootstrap-server and --zookeeper (exactly one is needed; see require_target)."""
    func = click.option("--command-config", type=click.Path(dir_okay=False), metavar="FILE",
                        help="Client properties for --bootstrap-server (security.protocol, ssl.*, sasl.mechanism, "
                             "sasl.jaas.config), as Kafka's tools take them.")(func)
    func = click.option("--zookeeper", metavar="HOST:PORT[/chroot]",
                        help="Work through ZooKeeper, writing the znodes the controller watches.")(func)
    return click.option("--bootstrap-server", metavar="HOST:PORT[,HOST:PORT]",
                        help="Work through a broker's admin APIs.")(func)


def require_target(zookeeper: str | None, bootstrap_server: str | None) -> Target:
    """Exactly one of the two, with ConfigCommand's messages."""
    if not zookeeper and not bootstrap_server:
        raise click.UsageError("One of the required --bootstrap-server or --zookeeper arguments must be specified")
    if zookeeper and bootstrap_server:
        raise click.UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
    return Target(zookeeper, bootstrap_server)


def open_zk(connect: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> ZkClient:
    """A ZooKeeper session closed when the command ends. Unlike a broker, a tool never creates the chroot."""
    from pylog.security.zk_login import zk_security  # KAFKA_OPTS' JAAS login, as Kafka's tools read it
    client = ZkClient(connect, session_timeout_ms=timeout_ms, connection_timeout_ms=timeout_ms, create_chroot=False,
                      **zk_security(None))
    client.start()
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(client.close)
    if client.chroot and client.exists("/") is None:  # a typo here would otherwise just look like an empty cluster
        click.echo(f"WARNING: the chroot {client.chroot} does not exist in ZooKeeper at {client.hosts}; no pylog "
                   f"cluster uses it (check --zookeeper)", err=True)
    elif not client.chroot and client.exists("/brokers/ids") is None:
        _warn_missing_chroot(client)
    return client


def _warn_missing_chroot(client: ZkClient) -> None:
    """No cluster at the root: name the chroots that hold one, as the operator probably meant one of them."""
    chroots = [f"/{c}" for c in sorted(client.get_children("/")) if c != "zookeeper"
               and client.exists(f"/{c}/brokers/ids") is not None]
    if chroots:
        click.echo(f"WARNING: no pylog cluster at the root of ZooKeeper at {client.hosts}; clusters live under "
                   f"{', '.join(chroots)}: add the chroot to --zookeeper (e.g. {client.hosts}{chroots[0]})",
                   err=True)


def open_admin(bootstrap: str, timeout_ms: int = DEFAULT_TIMEOUT_MS) -> BrokerAdmin:
    """A broker admin client closed when the command ends (TLS/SASL from the command's --command-config)."""
    ctx = click.get_current_context(silent=True)
    config_file = ctx.params.get("command_config") if ctx is not None else None
    security = None
    if config_file:
        from pylog.common import properties
        from pylog.security.client_config import client_security
        security = client_security(properties.load(config_file))
    admin = BrokerAdmin(bootstrap, timeout_ms, security)
    if ctx is not None:
        ctx.call_on_close(admin.close)
    return admin


# ---------------------------------------------------------------- Kafka's option checks (CommandLineUtils)

class OptionRules:
    """Kafka's CommandLineUtils checks over the options given on the command line (names without dashes)."""

    def __init__(self, ctx: click.Context) -> None:
        self.given: set[str] = set()
        for param in ctx.command.params:
            if not isinstance(param, click.Option) or param.name is None:
                continue
            if ctx.get_parameter_source(param.name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT):
                long = next((o for o in param.opts if o.startswith("--")), param.opts[0])
                self.given.add(long.lstrip("-"))

    def has(self, name: str) -> bool:
        """Whether --name was given."""
        return name in self.given

    def count(self, names: Iterable[str]) -> int:
        """How many of these were given."""
        return sum(1 for n in names if n in self.given)

    def invalid(self, used: str, invalid: Iterable[str]) -> None:
        """checkInvalidArgs: `used` must not come with any of `invalid`."""
        if used in self.given:
            for name in invalid:
                if name in self.given and name != used:
                    raise click.UsageError(f'Option "[{used}]" can\'t be used with option "[{name}]"')

    def required(self, *names: str) -> None:
        """checkRequiredArgs."""
        for name in names:
            if name not in self.given:
                raise click.UsageError(f'Missing required argument "[{name}]"')


# ---------------------------------------------------------------- progress

@contextmanager
def progress(description: str, total: float | None = None) -> Iterator[Callable[[float], None]]:
    """A transient rich progress bar on stderr when stdout and stderr are terminals; a no-op otherwise
    (cron, pipes, output redirected to a file).

    Yields update(completed).
    """
    if not (sys.stdout.isatty() and sys.stderr.isatty()):
        yield lambda completed: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn()]
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda completed: bar.update(task, completed=completed)


def run_or_fail(run: Callable[[dict], None], options: dict) -> None:
    """A tool's body: click's own errors pass through, any other failure becomes one error line and exit 1."""
    try:
        run(options)
    except click.ClickException:
        raise
    except Exception as exc:
        raise click.ClickException(str(exc)) from exc


def require_one_bootstrap(options: dict) -> None:
    """Kafka's Verifiable* tools: exactly one of --bootstrap-server and the older --broker-list."""
    if options["bootstrap_server"] and options["broker_list"]:
        raise click.UsageError("argument --broker-list: not allowed with argument --bootstrap-server")
    if not (options["bootstrap_server"] or options["broker_list"]):
        raise click.UsageError("one of the arguments --bootstrap-server --broker-list is required")
