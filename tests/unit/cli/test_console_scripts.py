"""Every tool in bin/ and scripts/ that runs a Python module is also a console script of the package."""

import configparser
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _console_scripts() -> dict[str, str]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    lines = cfg["options.entry_points"]["console_scripts"].strip().splitlines()
    return dict(tuple(part.strip() for part in line.split("=", 1)) for line in lines)


def _tool_modules() -> set[str]:
    """The modules the shell tools run (`-m module` or through pylog-run-class.sh)."""
    found = set()
    for script in [*ROOT.glob("bin/*.sh"), ROOT / "scripts" / "spark-plan"]:
        if script.name == "pylog-run-class.sh":
            continue
        found |= set(re.findall(r"(?:-m|pylog-run-class\.sh\"(?: \"\$\{extra\[@\]\}\")?) (pylog(?:\.\w+)+)",
                                script.read_text()))
    return found


def test_every_tool_module_has_a_console_script():
    modules = {target.split(":")[0] for target in _console_scripts().values()}
    tools = _tool_modules()
    assert len(tools) >= 9
    assert tools - modules == set()


@pytest.mark.parametrize("name,target", sorted(_console_scripts().items()))
def test_console_script_targets_exist(name, target):
    module, _, func = target.partition(":")
    assert callable(getattr(importlib.import_module(module), func))
