"""The architecture test's code rules find what they promise and nothing else (table tests over snippets)."""

import ast
import textwrap
from pathlib import Path

import pytest
from support.code_rules import literal_codes, private_accesses

PYLOG = Path(__file__).resolve().parents[2] / "pylog"


def _codes(src: str) -> list[str]:
    return [f.text for f in literal_codes(ast.parse(textwrap.dedent(src)))]


def _privates(src: str, path: Path | None = None) -> list[str]:
    return [f.text for f in private_accesses(ast.parse(textwrap.dedent(src)), path)]


@pytest.mark.parametrize("src,found", [
    ("cls(error_code=31, results=[])", ["error_code=31"]),
    ("Result(partition_error_code=-1)", ["partition_error_code=-1"]),
    ("if r.error_code == 91: pass", ["r.error_code == 91"]),
    ("ok = err in (6, 15)", ["err in (6, 15)"]),
    ("INVALID_REQUEST, OTHER = 42, 7", ["INVALID_REQUEST = 42"]),
    ("error = 41", ["error = 41"]),
    ("x = ErrorCode(58)", ["ErrorCode(58)"]),
    ("d = {'error_code': 3}", ["'error_code': 3"]),
    ("def f():\n    return 31, 'Cluster authorization failed.'", ["(31, <message>)"]),
])
def test_literal_codes_are_found(src, found):
    assert _codes(src) == found


@pytest.mark.parametrize("src", [
    "cls(error_code=0, results=[])",  # NONE, the wire's default
    "cls(error_code=int(ErrorCode.NOT_CONTROLLER))",
    "if r.error_code == ErrorCode.NONE: pass",
    "ERROR = 1",  # an exit status, not a registry name
    "throttle_time_ms = 30",
    "class S(enum.Enum):\n    ONGOING = (1, 'Ongoing')",  # an enum member's data
    "cls(error_code=code)",
    "t = (300, 'x')",  # above any error number
])
def test_names_and_other_numbers_pass(src):
    assert _codes(src) == []


@pytest.mark.parametrize("src,found", [
    ("lg._bases.append(1)", ["lg._bases"]),
    ("self.log._hw = 3", ["self.log._hw"]),
    ("from pylog.cli.admin_client import _check", ["from pylog.cli.admin_client import _check"]),
    ("render._console()", ["render._console"]),
])
def test_private_accesses_are_found(src, found):
    assert _privates(src) == found


@pytest.mark.parametrize("src", [
    "self._x = 1\ncls._y = 2",
    "class P:\n    def __init__(self):\n        self._n = 1\n    def __eq__(self, o):\n        return o._n == self._n",
    "p = p._replace(a=1)\nv = e._value_\nn = x.__name__",
    "_cache = {}\ndef f(m):\n    return m._cache",  # defined in this module
])
def test_own_and_public_names_pass(src):
    assert _privates(src) == []


def test_private_module_is_private_to_its_package():
    # `_harness` is a module of pylog/bench: its siblings may import it, other packages may not.
    src = "from pylog.bench import _harness"
    assert _privates(src, PYLOG / "bench" / "consume.py") == []
    assert _privates(src, PYLOG / "cli" / "acls.py") == ["from pylog.bench import _harness"]
