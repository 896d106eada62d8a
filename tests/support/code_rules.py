"""Code rules the architecture test enforces beyond imports, as pure AST checks (no module is imported).

literal_codes(tree)      Kafka error numbers written as literals where an error is meant: an `error_code=29`
                         keyword, `err == 3` / `resp.error_code in (6, 15)`, `error = 41`, `ErrorCode(58)`,
                         a registry name bound to a number (`INVALID_REQUEST = 42`), or an (int, message) pair
                         such as `return 31, "Cluster authorization failed."`. 0 (NONE) stays allowed: it is the
                         wire's "no error" default that every response builder writes, never ambiguous.
private_accesses(tree)   `obj._name` where obj is not self/cls and `_name` is not defined in this module
                         (a method, a class attribute, a `self._name` assignment, a module-level name), and
                         `from pylog.x import _name`: the module reaches into another module's private state.
                         Same-module access to its own classes' fields (an `__eq__`, a helper over its own
                         objects) is fine; the unit of privacy is the module, so a sibling in the same package
                         counts as outside. A private module (`bench/_harness.py`) is private to its package:
                         its siblings may import it. Stdlib underscore API (namedtuple's _replace, enum's
                         _value_) passes.

Run `python tests/support/code_rules.py [DIR...]` to print the counts per file (the measure the issue asks for).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT = Path(__file__).resolve().parents[2]
MAX_CODE = 200  # above any Kafka error number; larger literals are sizes, ports, counts
ERROR_NAMES = frozenset({"error", "err", "error_code", "ec", "code"})
# Underscore names that are public API of the stdlib: namedtuple's methods, enum's sunder names, os._exit,
# sys._getframe.
PUBLIC_UNDERSCORE = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults", "_exit", "_getframe"})
# confluent-kafka's KafkaError names librdkafka's local (client-side) error codes with a leading underscore
# (_TIMED_OUT, _UNKNOWN_TOPIC, ...): public constants of its API, not private names.
PUBLIC_UNDERSCORE_OWNERS = frozenset({"KafkaError"})


class Finding(NamedTuple):
    """One violation: where and what."""

    line: int
    text: str


def _registry_names() -> frozenset[str]:
    # Read the registry's enum by AST, so the rules stay importable without pylog on the path.
    src = ROOT / "pylog" / "common" / "errors.py"
    for node in ast.walk(ast.parse(src.read_text())):
        if isinstance(node, ast.ClassDef) and node.name == "ErrorCode":
            return frozenset(t.id for s in node.body if isinstance(s, ast.Assign) for t in s.targets
                             if isinstance(t, ast.Name))
    return frozenset()


REGISTRY = _registry_names()


def _int_value(node: ast.AST) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _is_code(node: ast.AST) -> bool:
    v = _int_value(node)
    return v is not None and v != 0 and -1 <= v <= MAX_CODE


def _terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _errorish(name: str | None) -> bool:
    # lower-case names only: an upper-case constant is a code only if it is a registry name (REGISTRY)
    return name is not None and (name in ERROR_NAMES or name.endswith("error_code"))


def _codes_in(node: ast.AST) -> bool:
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_code(e) for e in node.elts)
    return _is_code(node)


def literal_codes(tree: ast.AST) -> Iterator[Finding]:
    """Error numbers written as literals (see the module docstring for the shapes)."""
    # An enum member's value tuple, e.g. TxnState.ONGOING = (1, "Ongoing"), is data, not an error pair.
    members = {id(s.value) for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for s in c.body
               if isinstance(s, ast.Assign)}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and _errorish(node.arg) and _is_code(node.value):
            yield Finding(node.value.lineno, f"{node.arg}={ast.unparse(node.value)}")
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_errorish(_terminal(s)) for s in sides) and any(_codes_in(s) for s in sides):
                yield Finding(node.lineno, ast.unparse(node))
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target, value in _pairs(targets, node.value):
                name = _terminal(target)
                if (_errorish(name) or name in REGISTRY) and _is_code(value):
                    yield Finding(node.lineno, f"{ast.unparse(target)} = {ast.unparse(value)}")
        elif isinstance(node, ast.Call) and _terminal(node.func) == "ErrorCode" and node.args \
                and _is_code(node.args[0]):
            yield Finding(node.lineno, ast.unparse(node))
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and _errorish(k.value) and _is_code(v):
                    yield Finding(v.lineno, f"{k.value!r}: {ast.unparse(v)}")
        elif isinstance(node, ast.Tuple) and id(node) not in members and len(node.elts) == 2 \
                and _is_code(node.elts[0]) \
                and isinstance(node.elts[1], (ast.JoinedStr, ast.Constant)) \
                and isinstance(getattr(node.elts[1], "value", ""), str):
            yield Finding(node.lineno, f"({ast.unparse(node.elts[0])}, <message>)")


def _pairs(targets: list[ast.expr], value: ast.expr) -> Iterator[tuple[ast.expr, ast.expr]]:
    for target in targets:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            yield from zip(target.elts, value.elts)
        else:
            yield target, value


def _defined_names(tree: ast.AST) -> set[str]:
    """Underscore names this module defines: functions, classes, class/module-level names, self/cls fields."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            names.add(node.attr)
        elif isinstance(node, ast.Assign) and any(_terminal(t) == "__slots__" for t in node.targets):
            names.update(c.value for c in ast.walk(node.value) if isinstance(c, ast.Constant))
    return {n for n in names if n.startswith("_")}


def _private(name: str) -> bool:
    if not name.startswith("_") or name in PUBLIC_UNDERSCORE:
        return False
    dunder = name.startswith("__") and name.endswith("__")
    sunder = len(name) > 2 and name.endswith("_") and not name.startswith("__")  # enum's _value_, _missing_
    return not dunder and not sunder


def _sibling_module(node: ast.ImportFrom, name: str, path: Path | None) -> bool:
    """Whether `from <package> import _name` names a private module of the importing file's own package."""
    if path is None:
        return False
    parts = (node.module or "").split(".") if node.module else []
    base = (ROOT.joinpath(*parts) if node.level == 0 else path.parents[node.level - 1].joinpath(*parts))
    target = base / name
    return base == path.parent and (target.with_suffix(".py").exists() or (target / "__init__.py").exists())


def private_accesses(tree: ast.AST, path: Path | None = None) -> Iterator[Finding]:
    """`obj._name` on something other than self/cls, for a `_name` this module does not define; and
    `from pylog.x import _name`, unless `_name` is a private module of the importer's own package (a
    leading underscore on a module means private to its package, on a name private to its module)."""
    own = _defined_names(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "pylog"):
            for alias in node.names:
                if _private(alias.name) and not _sibling_module(node, alias.name, path):
                    yield Finding(node.lineno, f"from {'.' * node.level}{node.module or ''} import {alias.name}")
        if isinstance(node, ast.Attribute) and _private(node.attr) and node.attr not in own:
            if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
                continue
            if _terminal(node.value) in PUBLIC_UNDERSCORE_OWNERS and node.attr[1:].isupper():
                continue
            yield Finding(node.lineno, ast.unparse(node))


def count(paths: list[Path]) -> dict[str, tuple[int, int]]:
    """{file: (literal codes, private accesses)} for the files with any."""
    out = {}
    for path in paths:
        tree = ast.parse(path.read_text(), str(path))
        got = (len(list(literal_codes(tree))), len(list(private_accesses(tree, path.resolve()))))
        if any(got):
            out[str(path)] = got
    return out


if __name__ == "__main__":
    roots = [Path(a) for a in sys.argv[1:]] or [Path("pylog")]
    files = sorted(p for r in roots for p in (r.rglob("*.py") if r.is_dir() else [r]))
    found = count(files)
    for name, (codes, privs) in sorted(found.items()):
        print(f"{codes:4d} {privs:4d}  {name}")
    print(f"{sum(c for c, _ in found.values()):4d} {sum(p for _, p in found.values()):4d}  total "
          f"(literal error codes, cross-module private accesses) in {len(files)} files")
