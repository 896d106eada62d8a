"""The package map in README.md, enforced: which pylog package may import which, the parts (layers) they
form, which third-party code each part may use (protocol/ stays sans-I/O; common/ and planner/ stdlib only),
and two code rules: Kafka error codes are named from common/errors.py, and no module touches another's
private attributes (tests/support/code_rules.py holds both checks)."""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

import pytest
from support.code_rules import literal_codes, private_accesses

ROOT = Path(__file__).resolve().parents[2]
PYLOG = ROOT / "pylog"
ANY = None  # tools at the top of the map may import everything
ALLOWED: dict[str, set[str] | None] = {
    "common": set(),
    "protocol": {"common"},  # the error registry (common/errors.py)
    "log": {"protocol", "common"},
    # The ZooKeeper client bumps its request latency and session event counters (metrics/recorders.py).
    "zk": {"common", "metrics"},
    "client": {"protocol"},
    "controller": {"protocol", "zk", "client", "common", "metrics"},
    "planner": {"common"},  # the error registry; common is stdlib-only too
    "spark": {"planner", "common", "client"},
    "coordinator": {"protocol", "common", "metrics"},
    # The broker hosts the controller and the group coordinator, and places new topics' replicas with the
    # planner's create-time rule.
    "broker": {"protocol", "log", "zk", "client", "common", "planner", "controller", "coordinator", "security",
               "metrics"},
    # Prometheus families with Kafka's names from a plain-data snapshot; the hot paths' counters (recorders.py,
    # stdlib only) are what the packages above import.
    "metrics": {"common", "protocol"},
    # TLS contexts, SASL exchanges, SCRAM credentials and ACLs: the broker and the tools share them.
    "security": {"protocol", "zk", "common", "client"},
    # Tools reach a cluster through ZooKeeper and the protocol, as Kafka's do, never through broker internals
    # (the coordinator's pure parts are fine: group state names, the consumer protocol's assignment codec).
    "cli": {"protocol", "log", "zk", "client", "common", "planner", "spark", "security", "coordinator", "metrics"},
    # The balancer (Cruise Control's REST API) is a tool too: it reaches the cluster the way the tools do,
    # reusing their cluster access (BrokerCluster: Metadata, DescribeLogDirs, KIP-455, throttles, elections)
    # rather than a second copy of it, and plans with the planner.
    "balancer": {"cli", "planner", "common"},
    "bench": ANY, "chaos": ANY, "localcluster": ANY,
}
# The parts of the house, bottom up: a package may import only packages of a lower part. The Common part (the
# error registry, config definitions, shared names) is the floor; the Client part speaks the protocol for the
# broker's fetchers, the controller, the tools and Spark; the Security part (TLS, SASL, SCRAM, ACLs) sits on
# ZooKeeper and the client and is shared by the broker and the tools.
PARTS: list[tuple[str, set[str]]] = [
    ("Common", {"common"}),
    ("Protocol", {"protocol"}),
    # The hot paths' counters: every part above bumps them (ZooKeeper's latency and session events too).
    ("Metrics", {"metrics"}),
    ("ZooKeeper, Planner", {"zk", "planner"}),
    ("Client, Log, Coordinators", {"client", "log", "coordinator"}),
    ("Security, Controller, Spark", {"security", "controller", "spark"}),
    ("Broker, Tools", {"broker", "cli"}),
    # Cruise Control's API over the tools' cluster access and the planner.
    ("Balancer", {"balancer"}),
    ("Harnesses", {"bench", "chaos", "localcluster"}),
]
# Third-party top-level modules each package may import (stdlib always; ANY: no limit).
THIRD_PARTY: dict[str, set[str] | None] = {
    "common": set(), "planner": set(), "client": set(), "coordinator": set(), "controller": set(),
    "protocol": {"kafka", "crc32c"},  # kafka-python's schema classes, the CRC-32C of record batches
    "log": {"crc32c"},
    "zk": {"kazoo"},
    "security": {"cryptography"},  # the local CA for tests and `pylog-ca`
    "spark": {"kafka", "pandas", "pyspark"},
    "broker": {"click", "uvloop"},
    # pylog-top parses the brokers' /metrics; pylog-zookeeper-shell.sh is ZooKeeperMain, a raw ZooKeeper client
    # (kazoo), not a reader of Kafka's tree; Java client property files' PKCS12 truststores become PEM.
    "cli": {"click", "confluent_kafka", "rich", "prometheus_client", "kazoo", "cryptography"},
    "metrics": {"prometheus_client"},
    # stdlib's http.server; the load monitor reads __pylog_metrics with kafka-python's consumer (the wire
    # codec's package already), so the balancer needs no fetch loop of its own.
    "balancer": {"kafka"},
    "bench": ANY, "chaos": ANY, "localcluster": ANY,
}
NO_IO = {"asyncio", "socket", "selectors", "ssl", "subprocess"}  # protocol/ only moves bytes it is given


@cache
def _tree(path: Path) -> ast.Module:
    """Each source parsed once for all the rules."""
    return ast.parse(path.read_text(), str(path))


def _imports(path: Path) -> list[str]:
    names = []
    for node in ast.walk(_tree(path)):
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
        elif top not in sys.stdlib_module_names and (extra := THIRD_PARTY.get(pkg, set())) is not ANY \
                and top not in extra:
            bad.append(name)
        elif pkg == "protocol" and top in NO_IO:
            bad.append(name)
    assert bad == [], f"{path.relative_to(PYLOG)} imports {bad}, which README.md's package map does not allow"


def test_benchmarks_live_in_bench():
    # A benchmark elsewhere is missed by `scripts/bench` and drags its harness into a runtime package.
    stray = [p.relative_to(PYLOG) for p in PYLOG.rglob("*.py") if "bench" in p.stem and p.parent.name != "bench"]
    assert stray == []


def test_every_arrow_runs_down_the_parts():
    # A package may import only lower parts: no import circle between packages, now or later.
    rank = {pkg: i for i, (_, pkgs) in enumerate(PARTS) for pkg in pkgs}
    for table, name in ((rank, "PARTS"), (THIRD_PARTY, "THIRD_PARTY")):
        missing = sorted(set(ALLOWED) - set(table))
        assert not missing, f"{missing} in ALLOWED but not in {name}: say which part each is and what it may use"
    up = [f"{pkg} ({PARTS[rank[pkg]][0]}) may import {dep} ({PARTS[rank[dep]][0]})"
          for pkg, deps in ALLOWED.items() if deps is not ANY for dep in deps if rank[dep] >= rank[pkg]]
    assert up == [], "an arrow runs sideways or up the parts; move the shared code down a part: " + "; ".join(up)


def _readme_rows() -> dict[str, list[set[str]]]:
    """README's Layout table: package -> the pylog packages each of its rows' 'may import' cell names."""
    rows: dict[str, list[set[str]]] = {}
    for line in (ROOT / "README.md").read_text().splitlines():
        m = re.match(r"\| `pylog/(\w+)[/`]", line)
        if not m or m.group(1) not in ALLOWED or ALLOWED[m.group(1)] is ANY:
            continue
        cell = re.sub(r"\([^)]*\)", "", line.rstrip(" |").rsplit("|", 1)[1])  # asides in parentheses name no rule
        if "everything" in cell:  # the tools' row is a rule with exceptions, checked by ALLOWED alone
            continue
        rows.setdefault(m.group(1), []).append({w for w in re.findall(r"[a-z]+", cell) if w in ALLOWED})
    return rows


def test_readme_map_matches():
    # The map a newcomer reads and the arrows this test enforces are one: Security, Common and Client included.
    rows = _readme_rows()
    assert {"security", "common", "client"} <= set(rows)
    wrong = [f"pylog/{pkg}/: README says {sorted(named)}, ALLOWED says {sorted(ALLOWED[pkg])}"
             for pkg, cells in rows.items() for named in cells if named != ALLOWED[pkg]]
    assert wrong == [], "README.md's Layout table and ALLOWED disagree; change both together: " + "; ".join(wrong)


# -- code rules -----------------------------------------------------------------------------------------------
# The only accepted violations, each with its reason.
# {file: how many findings may remain}; a file may have fewer, never more.
PRIVATE_ALLOWED = {
    # Not ours: kazoo has no public call for a request type it lacks (ZooKeeper's multiRead).
    "zk/_multiread.py": 1,
}
LITERAL_CODES_ALLOWED: dict[str, int] = {}
REGISTRY_FILE = "common/errors.py"  # the registry is where the numbers are written, once


def _findings(rule, allowed: dict[str, int]) -> list[str]:
    """Every finding of `rule` in files over their allowance, as `pylog/<file>:<line>: <what>`."""
    out = []
    for path in sorted(PYLOG.rglob("*.py")):
        rel = str(path.relative_to(PYLOG))
        if rel == REGISTRY_FILE:
            continue
        found = list(rule(_tree(path), path))
        if len(found) > allowed.get(rel, 0):
            out += [f"pylog/{rel}:{f.line}: {f.text}" for f in found]
    return out


def test_error_codes_are_named():
    bad = _findings(lambda tree, _: literal_codes(tree), LITERAL_CODES_ALLOWED)
    assert not bad, ("Kafka error codes written as numbers; name them from pylog/common/errors.py "
                     "(ErrorCode.X, or int(ErrorCode.X) where a number must be stored):\n" + "\n".join(bad))


def test_no_module_touches_another_modules_privates():
    bad = _findings(private_accesses, PRIVATE_ALLOWED)
    assert not bad, ("private names of another module; give the owner a public method or property for what is "
                     "needed (or make the name public if it is meant to be shared), and use that:\n" + "\n".join(bad))


def test_shared_names_have_one_home():
    # A topic partition is common/types.TP everywhere; a module that needs it imports it.
    homes = [str(p.relative_to(PYLOG)) for p in sorted(PYLOG.rglob("*.py"))
             for node in _tree(p).body if isinstance(node, (ast.Assign, ast.AnnAssign))
             for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
             if isinstance(t, ast.Name) and t.id == "TP"]
    assert homes == ["common/types.py"], f"TP is defined in {homes}; import it from pylog.common.types instead"
