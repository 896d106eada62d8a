"""pylog-top.sh: a live view of a cluster in the terminal (brokers, controller, partitions, groups, reassignments).

Reads only: the Kafka APIs (Metadata, DescribeConfigs, ListPartitionReassignments) and each broker's
/metrics endpoint; nothing is written anywhere. `--once --output json` prints one JSON document for scripts.
"""

from __future__ import annotations

import json
import time
from typing import Any

import click
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table

from pylog.cli.common import CliError, describe_exception, open_admin
from pylog.cli.top_data import Scrape, TopView, build_view, metrics_urls, scrape


def _fmt(v: Any, unit: str = "", digits: int = 1) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{digits}f}{unit}"
    return f"{v}{unit}"


def _bytes(v: float | None) -> str:
    if v is None:
        return "-"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(v) < 1024 or unit == "GB":
            return f"{v:,.0f}{unit}" if unit == "B" else f"{v:,.1f}{unit}"
        v /= 1024
    return "-"


def render(view: TopView) -> Group:
    """The rich tables of one refresh."""
    c = view.cluster
    head = Table.grid(padding=(0, 2))
    head.add_row(f"[b]brokers[/b] {c.get('brokers')}", f"[b]controller[/b] {_fmt(view.controller)}",
                 f"[b]topics[/b] {c.get('topics')}", f"[b]partitions[/b] {c.get('partitions')}",
                 f"[b]under-replicated[/b] {c.get('under_replicated_partitions')}",
                 f"[b]offline[/b] {c.get('offline_partitions')}")
    brokers = Table(title="Brokers (* controller; p99 in ms)", title_justify="left")
    for col in ("id", "host", "state", "parts", "leads", "URP", "in/s", "out/s", "prod p99", "fetch p99", "busy"):
        brokers.add_column(col, justify="right" if col not in ("host", "state") else "left")
    for b in view.brokers:
        state = b.get("state") or (f"[red]{b['error']}[/red]" if b.get("error") else "no metrics")
        brokers.add_row(f"{b['id']}{' *' if b['controller'] else ''}", b["host"], state, _fmt(b.get("partitions"), digits=0),
                        str(b["leaders"]), _fmt(b.get("under_replicated"), digits=0), _bytes(b.get("bytes_in_per_sec")),
                        _bytes(b.get("bytes_out_per_sec")), _fmt(b.get("produce_p99_ms"), digits=2),
                        _fmt(b.get("fetch_p99_ms"), digits=2),
                        "-" if b.get("event_loop_busy") is None else f"{b['event_loop_busy']:.0%}")
    parts = Table(title="Busiest partitions", title_justify="left")
    for col in ("partition", "leader", "records/s", "log end offset", "size"):
        parts.add_column(col, justify="left" if col == "partition" else "right")
    for p in view.partitions:
        parts.add_row(f"{p['topic']}-{p['partition']}", str(p["leader"]), _fmt(p["records_per_sec"]),
                      _fmt(p["log_end_offset"], digits=0), _fmt(p["size_bytes"], digits=0))
    groups = Table(title="Groups by lag", title_justify="left")
    for col in ("group", "coordinator", "members", "partitions", "lag"):
        groups.add_column(col, justify="left" if col == "group" else "right")
    for g in view.groups:
        groups.add_row(g["group"], str(g["coordinator"]), str(g["members"]), str(g["partitions"]), f"{g['lag']:,}")
    moves = Table(title="Reassignments in flight", title_justify="left")
    for col in ("partition", "replicas", "adding", "removing"):
        moves.add_column(col)
    for r in view.reassignments:
        moves.add_row(f"{r['topic']}-{r['partition']}", ",".join(map(str, r["replicas"])),
                      ",".join(map(str, r["adding"])), ",".join(map(str, r["removing"])))
    left = sum(b.get("reassignment_bytes_remaining") or 0 for b in view.brokers)
    tail = f"reassignment: {len(view.reassignments)} partitions, ~{left / 1e6:,.1f} MB left to copy" \
        if view.reassignments else "no reassignment in flight"
    return Group(head, brokers, parts, groups, moves, tail)


def _scrape_all(urls: dict[int, str | None]) -> dict[int, Scrape]:
    return {bid: scrape(url) for bid, url in urls.items() if url is not None}


@click.command("pylog-top", context_settings={"help_option_names": ["-h", "--help"]}, help=(
    "A live view of a pylog (or Kafka) cluster: brokers and controller, under-replicated/offline partitions, "
    "bytes in/out and request p99 per broker, the busiest partitions, groups by lag, reassignments in flight. "
    "Reads the Kafka APIs and each broker's prometheus.listener endpoint; writes nothing."))
@click.option("--bootstrap-server", required=True, metavar="HOST:PORT[,HOST:PORT]", help="A broker to start from.")
@click.option("--command-config", type=click.Path(dir_okay=False), help="Client properties (TLS/SASL).")
@click.option("--interval", type=click.FloatRange(min=0.2), default=2.0, show_default=True,
              help="Seconds between refreshes (and between the two scrapes --once takes for its rates).")
@click.option("--once", is_flag=True, help="Print one view and exit.")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="json: one document (with --once).")
@click.option("--top", "top_n", type=click.IntRange(min=1), default=10, show_default=True, help="Busiest partitions shown.")
@click.option("--metrics", "metrics", multiple=True, metavar="ID=URL",
              help="A broker's metrics URL when its prometheus.listener is not reachable as configured (repeatable).")
def top_command(bootstrap_server: str, command_config: str | None, interval: float, once: bool, output: str,
                top_n: int, metrics: tuple[str, ...]) -> None:
    """The pylog-top command."""
    if output == "json" and not once:
        raise click.UsageError("--output json needs --once")
    overrides = {}
    for item in metrics:
        bid, sep, url = item.partition("=")
        if not sep or not bid.strip().isdigit():
            raise click.UsageError(f"--metrics expects ID=URL, got {item!r}")
        overrides[int(bid)] = url
    try:
        admin = open_admin(bootstrap_server)
        urls = metrics_urls(admin, overrides)
        before = _scrape_all(urls)
        if once:
            time.sleep(interval)
            view = build_view(admin, urls, _scrape_all(urls), before, top_n)
            if output == "json":
                click.echo(json.dumps(view.to_json(), indent=2, sort_keys=True))
            else:
                Console().print(render(view))
            return
        _live(admin, overrides, before, interval, top_n)
    except (click.ClickException, KeyboardInterrupt):
        raise
    except Exception as exc:
        raise CliError(f"Error: {describe_exception(exc)}") from exc


def _live(admin: Any, overrides: dict[int, str], before: dict[int, Scrape], interval: float, top_n: int) -> None:
    """Refresh until Ctrl-C; brokers joining or leaving show up on the next refresh."""
    with Live(refresh_per_second=4, screen=False) as live:
        try:
            while True:
                time.sleep(interval)
                urls = metrics_urls(admin, overrides)
                now = _scrape_all(urls)
                live.update(render(build_view(admin, urls, now, before, top_n)))
                before = now
        except KeyboardInterrupt:
            return


def main() -> None:
    """Console entry point (bin/pylog-top.sh)."""
    try:
        top_command.main(prog_name="pylog-top")
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
