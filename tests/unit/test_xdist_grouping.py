"""The test tooling keeps an xdist_group on one worker (pytest 9.2 with pytest-xdist 3.8 silently did not)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TEST = """
import os, time, pytest
pytestmark = pytest.mark.xdist_group("{group}")

def test_{name}():
    time.sleep(0.2)
    with open(os.path.join(os.path.dirname(__file__), "ran-{name}"), "w") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"])
"""


def test_loadgroup_runs_a_group_on_one_worker(tmp_path: Path) -> None:
    names = [f"g{i}" for i in range(4)] + [f"o{i}" for i in range(4)]
    for name in names:
        group = "together" if name.startswith("g") else name
        (tmp_path / f"test_{name}.py").write_text(TEST.format(group=group, name=name))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "2",
                           "--dist", "loadgroup", "--rootdir", str(tmp_path), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {name: (tmp_path / f"ran-{name}").read_text() for name in names}
    assert len({workers[n] for n in names if n.startswith("g")}) == 1, workers
