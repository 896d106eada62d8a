"""Following a reassignment until it completes: partitions done, bytes copied, rate and ETA.

Bytes copied are measured on the brokers (DescribeLogDirs): each new replica's size against the
size of the partition where it already lives. The bar is drawn on stderr only when both stdout and
stderr are terminals, so scripts, cron and pipes get no escape codes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

import click

from pylog.cli.common import OperationError
from pylog.cli.reassign_cluster import ClusterView
from pylog.cli.reassign_logic import TP

POLL_S = 0.5
LINE_EVERY_S = 10.0  # LineBar: the longest silence while nothing finishes


@dataclass
class Progress:
    """Where a reassignment stands."""

    partitions: int
    done: int = 0
    bytes_total: int | None = None   # None: replica sizes are not known
    bytes_copied: int = 0
    started: float = field(default_factory=time.monotonic)

    @property
    def complete(self) -> bool:
        """Every followed partition has finished."""
        return self.done >= self.partitions


def measure(moving: Mapping[TP, tuple[Sequence[int], Sequence[int]]], finished: Iterable[TP],
            sizes: Mapping[tuple[TP, int], int] | None, progress: Progress) -> None:
    """Update `progress` from the partitions' (sources, destinations), which have finished, and replica sizes.

    A partition's size is the largest copy among its sources; a destination counts what it holds,
    up to that; a finished partition counts fully (its sources may be gone by then).
    """
    finished = set(finished)
    progress.done = len(finished & set(moving))
    if sizes is None:
        return
    total = copied = 0
    for tp, (sources, destinations) in moving.items():
        size = max((sizes.get((tp, s), 0) for s in sources), default=0)
        if tp in finished:
            size = max([size] + [sizes.get((tp, d), 0) for d in destinations])
        total += size * len(destinations)
        copied += sum(size if tp in finished else min(size, sizes.get((tp, d), 0)) for d in destinations)
    progress.bytes_total = max(total, progress.bytes_total or 0)
    progress.bytes_copied = min(copied, progress.bytes_total)


def show_bar() -> bool:
    """A progress bar only for a person at a terminal."""
    return sys.stdout.isatty() and sys.stderr.isatty()


def step(text: str) -> None:
    """One line per step on stderr when no person watches a terminal (logs, pipes, cron)."""
    if not show_bar():
        click.echo(text, err=True)


class Bar:
    """A rich progress bar: partitions done, bytes copied / total, transfer rate and time remaining."""

    def __init__(self, console: Any = None) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, DownloadColumn, Progress as RichProgress, TextColumn,
                                   TimeRemainingColumn, TransferSpeedColumn)
        self._rich = RichProgress(TextColumn("Reassigning"), BarColumn(),
                                  TextColumn("{task.fields[parts]}"), DownloadColumn(), TransferSpeedColumn(),
                                  TextColumn("ETA"), TimeRemainingColumn(),
                                  console=console or Console(stderr=True), transient=True)
        self._task: Any = None

    def __enter__(self) -> "Bar":
        self._rich.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._rich.__exit__(*exc)

    def update(self, p: Progress) -> None:
        """Redraw from a Progress (by bytes when sizes are known, else by partitions)."""
        parts = f"{p.done}/{p.partitions} partitions"
        total, done = (p.bytes_total, p.bytes_copied) if p.bytes_total else (p.partitions, p.done)
        if self._task is None:
            self._task = self._rich.add_task("reassign", total=total, parts=parts)
        self._rich.update(self._task, total=total, completed=done, parts=parts)


class LineBar:
    """Progress for a log or a pipe (no terminal): a line on stderr when the count of finished partitions
    changes, else at most every LINE_EVERY_S seconds, and one when it is done."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._last: tuple[int, float] | None = None

    def __enter__(self) -> "LineBar":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, p: Progress) -> None:
        """Print a line if the state moved on (or enough time passed)."""
        now = self._clock()
        if self._last is not None and p.done == self._last[0] and not p.complete \
                and now - self._last[1] < LINE_EVERY_S:
            return
        if self._last is not None and p.complete and self._last[0] == p.done:
            return
        self._last = (p.done, now)
        copied = (f", {p.bytes_copied / 1e6:.1f} of {p.bytes_total / 1e6:.1f} MB copied" if p.bytes_total else "")
        click.echo(f"Reassigning: {p.done}/{p.partitions} partitions done{copied}, {now - p.started:.0f} s", err=True)


class _NoBar:
    def __enter__(self) -> "_NoBar":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def update(self, p: Progress) -> None:
        """Nothing to draw."""


def follow(cluster: ClusterView, moving: Mapping[TP, tuple[Sequence[int], Sequence[int]]],
           timeout_s: float | None, bar: Any = None, sleep: Callable[[float], None] = time.sleep,
           clock: Callable[[], float] = time.monotonic) -> Progress:
    """Poll until none of `moving` (partition -> (sources, destinations)) is in flight; the final Progress.

    Raises OperationError after `timeout_s` (None waits as long as it takes).
    """
    progress = Progress(len(moving), started=clock())
    deadline = None if timeout_s is None else clock() + timeout_s
    bar = bar if bar is not None else (Bar() if show_bar() else LineBar(clock))
    with bar:
        while True:
            busy = set(cluster.ongoing()) | cluster.pending()
            finished = [tp for tp in moving if tp not in busy]
            measure(moving, finished, cluster.replica_sizes(), progress)
            bar.update(progress)
            if progress.complete:
                return progress
            if deadline is not None and clock() >= deadline:
                raise OperationError(f"Timed out after {timeout_s:g} s waiting for the reassignment of "
                                     f"{progress.partitions - progress.done} of {progress.partitions} partition(s) "
                                     f"to complete; it continues (check it with --verify)")
            sleep(POLL_S)
