"""Clock faults: one broker's wall clock jumps forward or back, or runs fast.

Every broker of a run with this nemesis starts with a small LD_PRELOAD library
(pylog/chaos/nemesis/wallclock.c, compiled with cc into the run folder) that fakes only the wall
clock (clock_gettime(CLOCK_REALTIME*), gettimeofday, time) from its own file: "0 1" is the true
time, "120 1" two minutes ahead, "0 3" three times as fast from now. CLOCK_MONOTONIC, sleeps and
timed waits are untouched, as on a real machine whose clock NTP steps: a broker that uses the
wall clock where it should use the monotonic one shows up.

Why not libfaketime (Debian's `faketime`, 0.9.10): with FAKETIME_DONT_FAKE_MONOTONIC=1, which
keeps monotonic true, Python's time.sleep() fails with EINVAL (clock_nanosleep with
TIMER_ABSTIME) and ZooKeeper requests stall for seconds (20 ensure_path calls: 19.4 s against
0.07 s without it; measured); without it the monotonic clock jumps along with the wall clock,
which no real clock fault does.

    bump-forward, bump-back   the clock jumps 30-300 s (Jepsen's bump range), then back to true
    fast                      the clock runs 2-4x fast, then back to true
"""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

from pylog.chaos.nemesis.base import Context, Entry, hold

KINDS = ("bump-forward", "bump-back", "fast")
SOURCE = Path(__file__).with_name("wallclock.c")


class ClockUnavailable(RuntimeError):
    """No C compiler to build the wall-clock library."""


def clock_file(base: Path, bid: int) -> Path:
    """The file holding a broker's clock setting."""
    return base / f"clock-b{bid}"


def library(base: Path) -> Path:
    """Compile the wall-clock library once per run."""
    lib = base / "wallclock.so"
    if not lib.exists():
        cc = shutil.which("cc") or shutil.which("gcc")
        if cc is None:
            raise ClockUnavailable("the clock nemesis compiles a small C library: install gcc (scripts/setup)")
        subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(lib), str(SOURCE), "-ldl"], check=True,
                       capture_output=True, timeout=60)
    return lib


def launcher(base: Path, bid: int) -> list[str]:
    """The command prefix that starts a broker with a fakeable wall clock (`env` execs: same pid)."""
    rc = clock_file(base, bid)
    if not rc.exists():
        rc.write_text("0 1\n")
    return ["env", f"LD_PRELOAD={library(base)}", f"PYLOG_WALLCLOCK_FILE={rc}"]


def set_clock(base: Path, bid: int, offset: float, rate: float = 1.0) -> None:
    """Change a running broker's wall clock (atomically: the broker may read the file at any moment)."""
    rc = clock_file(base, bid)
    tmp = rc.with_name(rc.name + ".tmp")
    tmp.write_text(f"{offset:g} {rate:g}\n")
    tmp.replace(rc)


def inject(ctx: Context, kind: str, rng: random.Random) -> Entry:
    """Move a broker's clock, hold, set it true again."""
    bid = rng.choice(sorted(ctx.cluster.brokers))
    base = ctx.cluster.base.parent
    offset, rate = 0.0, 1.0
    if kind == "fast":
        rate = float(rng.randint(2, 4))
    else:
        offset = rng.randint(30, 300) * (1 if kind == "bump-forward" else -1)
    seconds = rng.uniform(0.5, 2.0) * ctx.session_timeout_ms / 1000
    ctx.log(f"clock {kind}: broker {bid} offset {offset:+g}s rate x{rate:g} for {seconds:.1f}s")
    start = ctx.now()
    try:
        set_clock(base, bid, offset, rate)
        hold(seconds)
    finally:
        set_clock(base, bid, 0)
    return Entry(start, ctx.now(), f"clock:{kind}", [f"b{bid}"], {"offset_s": offset, "rate": rate})
