"""The package map in README.md, enforced: which pylog package may import which, and the rules that keep
protocol/ sans-I/O and planner/ and common/ free of third-party code (DESIGN.md, rules 1 and 10)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PYLOG = Path(__file__).resolve().parents[2] / "pylog"
ANY = None  # tools at the top of the map may import everything
ALLOWED: dict[str, set[str] | None] = {
    "common": set(),
    "protocol": {"common"},  # the error registry (common/errors.py)
    "log": {"protocol", "common"},
    "zk": {"common"},
    "client": {"protocol"},
    "controller": {"protocol", "zk", "client", "common"},
    "planner": {"common"},  # the error registry; common is stdlib-only too
    "spark": {"planner", "common", "client"},
    "coordinator": {"protocol", "common"},
    # The broker hosts the controller and the group coordinator, and places new topics' replicas with the
    # planner's create-time rule.
    "broker": {"protocol", "log", "zk", "client", "common", "planner", "controller", "coordinator", "security"},
    # TLS contexts, SASL exchanges, SCRAM credentials and ACLs: the broker and the tools share them.
    "security": {"protocol", "zk", "common", "client"},
    # Tools reach a cluster through ZooKeeper and the protocol, as Kafka's do, never through broker internals
    # (the coordinator's pure parts are fine: group state names, the consumer protocol's assignment codec).
    "cli": {"protocol", "log", "zk", "client", "common", "planner", "spark", "security", "coordinator"},
    # The balancer (Cruise Control's REST API) is a tool too: it reaches the cluster the way the tools do,
    # reusing their cluster access (BrokerCluster: Metadata, DescribeLogDirs, KIP-455, throttles, elections)
    # rather than a second copy of it, and plans with the planner.
    "balancer": {"cli", "planner", "common"},
    "bench": ANY, "chaos": ANY, "localcluster": ANY,
}
STDLIB_ONLY = {"common", "planner"}
NO_IO = {"asyncio", "socket", "selectors", "ssl", "subprocess"}  # protocol/ only moves bytes it is given


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PYLOG.rglob("*.py")):
        rel = path.relative_to(PYLOG).parts
        if rel == ("__init__.py",):
            continue
        out.append((rel[0] if len(rel) > 1 else path.stem, path))
    return out


def test_every_package_is_on_the_map():
    assert {pkg for pkg, _ in _modules()} <= set(ALLOWED)


@pytest.mark.parametrize("pkg,path", _modules(), ids=lambda v: str(v.relative_to(PYLOG)) if isinstance(v, Path) else "")
def test_imports_follow_the_map(pkg, path):
    allowed = ALLOWED[pkg]
    bad = []
    for name in _imports(path):
        top, _, rest = name.partition(".")
        if top == "pylog":
            target = rest.split(".")[0]
            if target and target != pkg and allowed is not ANY and target not in allowed:
                bad.append(name)
        elif pkg in STDLIB_ONLY and top not in sys.stdlib_module_names:
            bad.append(name)
        elif pkg == "protocol" and top in NO_IO:
            bad.append(name)
    assert bad == [], f"{path.relative_to(PYLOG)} imports {bad}, which README.md's package map does not allow"


def test_benchmarks_live_in_bench():
    # A benchmark elsewhere is missed by `scripts/bench` and drags its harness into a runtime package.
    stray = [p.relative_to(PYLOG) for p in PYLOG.rglob("*.py") if "bench" in p.stem and p.parent.name != "bench"]
    assert stray == []
