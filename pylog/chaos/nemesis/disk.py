"""Disk faults: a broker's second log dir sits on a small tmpfs that a ballast file fills up.

Every broker gets two log dirs when the disk nemesis is on: `logs` on the run's disk and `small`,
a 64 MB tmpfs mounted by the harness in the root mount namespace before any process of the run
starts (`ip netns exec` copies the mount table, so every node sees the same tmpfs). The fault
fills a broker's `small` with a ballast file, so its next append or roll fails with ENOSPC: the
dir must go offline alone (KIP-112: its replicas answer KAFKA_STORAGE_ERROR and lose their
leaderships) while the broker serves its other dir, and nothing acknowledged may be lost. After
the ballast is removed the operator's move is a restart (a failed dir stays offline until then).

A dir that returns EIO needs device-mapper's dm-error/dm-flakey; this kernel has no device-mapper
(CONFIG_BLK_DEV_DM unset), so that variant is not offered.

    fill-leader, fill-random   fill the small dir of a partition leader / of a random broker
"""

from __future__ import annotations

import errno
import os
import random
import subprocess
from pathlib import Path

from pylog.chaos.nemesis.base import Context, Entry, hold

KINDS = ("fill-leader", "fill-random")
SIZE = "64m"


def small_dir(base: Path, bid: int) -> Path:
    """Where a broker's small log dir is mounted."""
    return base / "cluster" / f"broker-{bid}" / "small"


def prepare(cfg, base: Path) -> list[Path]:
    """Mount one tmpfs per broker (root mount namespace, before the run's processes start)."""
    mounts = []
    try:
        for bid in range(cfg.brokers):
            path = small_dir(base, bid)
            path.mkdir(parents=True, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(path)], check=True,
                           capture_output=True, timeout=30)
            mounts.append(path)
    except BaseException:
        release(mounts)
        raise
    return mounts


def release(mounts: list[Path]) -> None:
    """Unmount the tmpfs dirs (lazily: a broker killed a moment ago may still hold a file)."""
    for path in mounts:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)


def configure(cluster, base: Path, brokers: int) -> None:
    """Give every broker its small dir as a second log dir."""
    for bid in range(brokers):
        data = base / "cluster" / f"broker-{bid}"
        cluster.broker_overrides.setdefault(bid, {})["log.dirs"] = f"{data / 'logs'},{small_dir(base, bid)}"


def fill(path: Path) -> int:
    """Write ballast until the filesystem is full; the bytes written."""
    written = 0
    chunk = b"\0" * (1 << 20)
    with open(path, "wb") as f:
        try:
            while True:
                f.write(chunk)
                f.flush()
                written += len(chunk)
        except OSError as exc:
            if exc.errno != errno.ENOSPC:
                raise
        try:
            while True:  # the last partial megabyte too
                os.write(f.fileno(), b"\0" * 4096)
                written += 4096
        except OSError:
            pass
    return written


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """Fill a broker's small dir, hold, free it, restart the broker."""
    bid = ctx.leader(rng) if kind == "fill-leader" else rng.choice(sorted(ctx.cluster.brokers))
    base = ctx.cluster.base.parent
    ballast = small_dir(base, bid) / "ballast"
    seconds = rng.uniform(0.5, 2.0) * ctx.session_timeout_ms / 1000
    ctx.log(f"disk {kind}: filling broker {bid}'s small log dir for {seconds:.1f}s")
    broker = ctx.cluster.brokers[bid]
    log_from = broker.log_path.stat().st_size
    start = ctx.now()
    try:
        size = fill(ballast)
        hold(seconds)
        # what it still serves with the dir full: its leaderships (those in the other dir)
        leads = sorted(p for p, st in ctx.driver.states().items() if st.leader == bid)
    finally:
        ballast.unlink(missing_ok=True)
    with open(broker.log_path, "rb") as f:
        f.seek(log_from)
        failed = b"Error while accessing log dir" in f.read()
    alive = broker.pid is not None
    owner = ctx.driver.owner(bid)
    broker.kill()
    ctx.driver.restart(bid, owner)  # a failed dir stays offline until the broker restarts (KIP-112)
    return Entry(start, ctx.now(), f"disk:{kind}", [f"b{bid}"],
                 {"ballast_mb": size >> 20, "dir_failed": failed, "broker_survived": alive, "leads_while_full": leads})
