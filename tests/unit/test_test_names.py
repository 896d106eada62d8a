"""Test modules outside packages must have unique basenames: pytest imports them by basename
(rootdir-relative without __init__.py), and a second one with the same name fails collection
with "import file mismatch" only when both are collected in one process, i.e. in the full suite."""

from __future__ import annotations

import os
from collections import defaultdict

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _top_package_less_modules() -> dict[str, list[str]]:
    """basename -> paths of test modules whose directory is not a package."""
    seen: dict[str, list[str]] = defaultdict(list)
    for dirpath, _dirs, files in os.walk(TESTS):
        if "__init__.py" in files:
            continue
        for name in files:
            if name.startswith("test_") and name.endswith(".py"):
                seen[name].append(os.path.relpath(os.path.join(dirpath, name), TESTS))
    return seen


def test_no_two_test_modules_share_a_basename():
    """A clash is reported with both paths, before the full suite trips on it."""
    clashes = {n: p for n, p in _top_package_less_modules().items() if len(p) > 1}
    assert not clashes, f"rename one of each: {clashes}"
