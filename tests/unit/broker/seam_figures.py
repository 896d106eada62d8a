"""The broker seam's figures, from the source alone (ast, no imports): issue 22's before/after numbers.

Run: `python tests/unit/broker/seam_figures.py` from the repository root. Prints BrokerServices' width
(its attributes and members), the components whose constructor takes the whole broker, the import
cycles among pylog/broker's modules (strongly connected components of the import graph, with and
without `if TYPE_CHECKING:` imports) and the lines of every module under pylog/broker.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BROKER = ROOT / "pylog" / "broker"
WHOLE_BROKER = {"BrokerServices", "Broker"}


def module_name(path: Path) -> str:
    """pylog/broker/handlers/fetch.py -> pylog.broker.handlers.fetch."""
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def broker_modules() -> dict[str, Path]:
    """Every module under pylog/broker, by dotted name."""
    return {module_name(p): p for p in sorted(BROKER.rglob("*.py"))}


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for sub in node.body:
                ids.update(id(n) for n in ast.walk(sub))
    return ids


def imports(path: Path, modules: set[str], runtime_only: bool) -> set[str]:
    """The pylog.broker modules `path` imports (any scope; without TYPE_CHECKING ones if `runtime_only`)."""
    tree = ast.parse(path.read_text())
    skip = _type_checking_nodes(tree) if runtime_only else set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != module_name(path):
                out.add(name)
    return out


def cycles(runtime_only: bool) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan), largest first."""
    mods = broker_modules()
    graph = {m: imports(p, set(mods), runtime_only) for m, p in mods.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return sorted(out, key=len, reverse=True)


def services_width() -> tuple[list[str], list[str]]:
    """BrokerServices' annotated attributes and its methods/properties."""
    tree = ast.parse((BROKER / "services.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "BrokerServices":
            attrs = [n.target.id for n in node.body if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)]
            funcs = [n.name for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
            return attrs, funcs
    return [], []


def whole_broker_takers() -> list[str]:
    """Classes under pylog/broker whose __init__ takes the whole broker (a BrokerServices/Broker, or a
    parameter named `broker`), and module functions taking one."""
    out = []
    for mod, path in broker_modules().items():
        tree = ast.parse(path.read_text())
        for node in tree.body:
            funcs = []
            if isinstance(node, ast.ClassDef):
                funcs = [(f"{node.name}", f) for f in node.body
                         if isinstance(f, ast.FunctionDef) and f.name == "__init__"]
            for owner, fn in funcs:
                for a in fn.args.args[1:]:
                    ann = ast.unparse(a.annotation) if a.annotation is not None else ""
                    if a.arg == "broker" or any(w in ann.replace("'", "").split(" | ") for w in WHOLE_BROKER):
                        out.append(f"{mod}.{owner}")
                        break
    return out


def main() -> None:
    """Print the figures."""
    attrs, funcs = services_width()
    print(f"BrokerServices: {len(attrs)} attributes, {len(funcs)} methods/properties: {', '.join(attrs)}")
    takers = whole_broker_takers()
    print(f"constructors taking the whole broker: {len(takers)}: {', '.join(takers)}")
    for label, runtime in (("all imports", False), ("runtime imports (no TYPE_CHECKING)", True)):
        cs = cycles(runtime)
        print(f"import cycles in pylog/broker, {label}: {len(cs)} "
              f"({', '.join(str(len(c)) for c in cs) or 'no'} modules)")
        for c in cs:
            print("   ", " ".join(m.removeprefix("pylog.broker.") for m in c))
    if "--lines" in sys.argv:
        for mod, path in broker_modules().items():
            print(f"{len(path.read_text().splitlines()):5d} {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
