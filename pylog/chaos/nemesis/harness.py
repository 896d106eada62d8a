"""The root side of a nemesis run: build the private network, run the runner inside it, tear it all down.

`run_isolated(cfg, run_dir)` creates one namespace per node (pylog/chaos/nemesis/net.py), starts
`python -m pylog.chaos.nemesis.runner RUN_DIR` in the clients' node, waits for it, and whatever
happens (failure, SIGTERM turned into SystemExit) stops it by pid, kills every process left in
the run's namespaces by pid, and deletes them. The result is RUN_DIR/result.json's content.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from pylog.chaos.nemesis.config import NemesisConfig
from pylog.chaos.nemesis.net import PrivateNet, capability


class HarnessError(RuntimeError):
    """The private network could not be built, or the runner died without a result."""


def run_isolated(cfg: NemesisConfig, run_dir: str | Path, timeout: float | None = None) -> dict:
    """One nemesis run in its own network; the runner's result (see runner.result)."""
    why = capability()
    if why:
        raise HarnessError(f"a nemesis run needs its own network namespaces: {why}")
    base = Path(run_dir)
    base.mkdir(parents=True, exist_ok=True)
    from pylog.chaos.nemesis import disk
    mounts = disk.prepare(cfg, base) if cfg.uses("disk") else []
    net = PrivateNet(cfg.node_names())
    child = None
    try:
        net.up()
        (base / "spec.json").write_text(json.dumps({"config": cfg.to_json(), "net": net.to_json()}, indent=1))
        child = subprocess.Popen([*net.node("cl").prefix, sys.executable, "-m", "pylog.chaos.nemesis.runner",
                                  str(base)], stdin=subprocess.DEVNULL)
        child.wait(timeout)
    finally:
        if child is not None and child.poll() is None:
            child.terminate()  # its SystemExit stops the cluster it started
            try:
                child.wait(60)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait(10)
        net.down()
        disk.release(mounts)
    try:
        return json.loads((base / "result.json").read_text())
    except (OSError, ValueError):
        raise HarnessError(f"the runner exited with code {child.returncode if child else None} "
                           f"without a result in {base}") from None
