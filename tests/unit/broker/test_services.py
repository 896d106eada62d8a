"""Handlers reach the broker only through BrokerServices, and the Broker provides all of it."""

import inspect
import re
from pathlib import Path

import pytest

from pylog.broker.broker import Broker
from pylog.broker.services import BrokerServices

HANDLERS = Path(inspect.getfile(Broker)).parent / "handlers"
SERVICES = set(BrokerServices.__annotations__) | {n for n in vars(BrokerServices) if not n.startswith("_")}


def _broker_uses(source: str) -> set[str]:
    source = "\n".join(line for line in source.splitlines() if not line.startswith(("from ", "import ")))
    used = set(re.findall(r"\bctx\.broker\.(\w+)", source)) | set(re.findall(r"\bself\.broker\.(\w+)", source))
    for alias in set(re.findall(r"^\s+(\w+) = ctx\.broker$", source, re.M)):
        used |= set(re.findall(rf"\b{alias}\.(\w+)", source))
    return used


@pytest.mark.parametrize("path", sorted(HANDLERS.glob("*.py")), ids=lambda p: p.name)
def test_handlers_use_only_broker_services(path):
    assert _broker_uses(path.read_text()) - SERVICES == set()


def test_the_broker_provides_every_service():
    init = inspect.getsource(Broker.__init__)
    missing = {name for name in SERVICES if not hasattr(Broker, name) and f"self.{name}" not in init}
    assert missing == set()
