"""`pylog-server CONFIG [--override key=value ...]`: run one broker in the foreground.

The event loop is uvloop where it is installed (a dependency on Linux): it costs 11-18 % less
broker CPU per small request than the stock loop (`scripts/bench request-cost --loops
asyncio,uvloop`, BENCHMARKS.md "The request path's CPU"). It has no loop.sendfile; the server then
calls os.sendfile on the socket itself (pylog/broker/server.py), so segment bytes still go
zero-copy. PYLOG_EVENT_LOOP=asyncio selects the stock loop (=uvloop insists on uvloop). PYLOG_PROFILE=<file>
runs the event loop thread under cProfile and writes the stats there at exit, `%p` standing for the pid
(`scripts/bench produce --profile DIR` sets it).

A start-up mistake (a port in use, a broker.id that does not match meta.properties, ZooKeeper out of
reach) ends with one line on stderr and exit 1; the console log says the cause in one line too, and
the stack trace goes to the log file only: $LOG_DIR/server.log (LOG_DIR defaults to <install>/logs,
where Kafka keeps its server.log).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Iterator

import click

from pylog.common.config import BrokerConfig, ConfigError
from pylog.common.properties import PropertiesError, load


def _loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop: uvloop unless PYLOG_EVENT_LOOP=asyncio or uvloop is not installed; None = stock asyncio."""
    choice = os.environ.get("PYLOG_EVENT_LOOP", "").strip().lower()
    if choice == "asyncio":
        return None
    if choice not in ("", "uvloop"):
        raise click.ClickException(f"PYLOG_EVENT_LOOP={choice!r}: expected asyncio or uvloop")
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise click.ClickException("PYLOG_EVENT_LOOP=uvloop: uvloop is not installed") from None
        return None
    return uvloop.new_event_loop


@contextlib.contextmanager
def _profiled(path: str | None) -> Iterator[None]:
    """cProfile the calling (event loop) thread into `path` when set (benchmarks only)."""
    if not path:
        yield
        return
    import cProfile
    prof = cProfile.Profile()
    prof.enable()
    try:
        yield
    finally:
        prof.disable()
        prof.dump_stats(path.replace("%p", str(os.getpid())))


def _setup_logging(level: str) -> None:
    logging.basicConfig(
        level=getattr(logging, level.upper(), logging.INFO),
        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)",
        stream=sys.stdout,
    )
    logging.getLogger("kazoo").setLevel(logging.WARNING)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("config_file", type=click.Path(dir_okay=False))
@click.option("--override", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a property of CONFIG_FILE (repeatable), like Kafka's --override.")
@click.option("--log-level", default="INFO", show_default=True, help="Python logging level.")
def cli(config_file: str, overrides: tuple[str, ...], log_level: str) -> None:
    """Start a pylog broker with the properties in CONFIG_FILE."""
    _setup_logging(log_level)
    try:
        props = load(config_file)
    except (OSError, PropertiesError) as exc:
        raise click.ClickException(f"Cannot read {config_file}: {exc}") from exc
    extra: dict[str, str] = {}
    for item in overrides:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"--override expects key=value, got {item!r}")
        extra[key.strip()] = value.strip()
    from pylog.broker.broker import Broker

    try:
        config = BrokerConfig.from_props(props, extra)
        broker = Broker(config)  # builds the listeners' TLS and SASL settings: ConfigError when unusable
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    loop_factory = _loop_factory()
    try:
        with _profiled(os.environ.get("PYLOG_PROFILE")), asyncio.Runner(loop_factory=loop_factory) as runner:
            start_metrics_endpoint(broker, runner.get_loop())  # before start(): it reports loading too
            runner.run(broker.run_until_signalled())
    except Exception as exc:  # a start-up failure: one clear line here and on stderr, the stack in the log file
        cause = _cause(exc)
        where = _log_stack_trace(exc)
        logging.getLogger("pylog.broker").error("Fatal error during broker startup: %s (stack trace in %s)",
                                                cause, where)
        raise click.ClickException(f"Broker {config.get('broker.id')} failed to start: {cause}") from exc


def _cause(exc: BaseException) -> str:
    """The innermost message an operator can act on (the address in use, the id mismatch, ...)."""
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())  # one line, whatever the exception put in it


def _log_stack_trace(exc: BaseException) -> Path:
    """Append the traceback to $LOG_DIR/server.log; the path it went to (stderr if that cannot be written)."""
    home = os.environ.get("PYLOG_HOME") or Path(__file__).resolve().parents[2]  # the install, as the scripts say
    log_dir = Path(os.environ.get("LOG_DIR") or Path(home) / "logs")
    path = log_dir / "server.log"
    text = "".join(traceback.format_exception(exc))
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        with open(path, "a", encoding="utf-8") as f:
            f.write(f"[pid {os.getpid()}] Fatal error during broker startup\n{text}")
    except OSError:
        sys.stderr.write(text)
        return Path("/dev/stderr")
    return path


def start_metrics_endpoint(broker: Any, loop: asyncio.AbstractEventLoop) -> None:
    """prometheus.listener's /metrics endpoint, if set; a taken port is a start-up error with the key named."""
    from pylog.broker.metrics_view import MetricsView
    from pylog.metrics.exporter import start_exporter

    listener = broker.config.get("prometheus.listener")
    try:
        start_exporter(listener, MetricsView(broker, loop).take)
    except OSError as exc:
        raise click.ClickException(f"prometheus.listener {listener}: {exc}") from exc


def main() -> None:
    """Console entry point."""
    cli()


if __name__ == "__main__":
    main()
