"""Helpers for the CLI integration tests: registered brokers and controller-written state, without a broker."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Iterable, Sequence

from click.testing import CliRunner, Result

from pylog.zk.client import ZkClient
from pylog.zk.codecs import BrokerRegistration, EndPoint, PartitionState, TopicPartition

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def register_brokers(zk: ZkClient, ids: Iterable[int], racks: dict[int, str] | None = None) -> None:
    """Ephemeral /brokers/ids/<id> registrations owned by the test's session (gone when it closes)."""
    zk.create_top_level_paths()
    for b in ids:
        zk.register_broker(BrokerRegistration(b, (EndPoint("PLAINTEXT", "127.0.0.1", 9092 + b),),
                                              rack=(racks or {}).get(b)))


def write_states(zk: ZkClient, topic: str, states: dict[int, tuple[int, Sequence[int]]]) -> None:
    """What a controller writes: partition -> (leader, isr)."""
    zk.create_partition_states({TopicPartition(topic, p): PartitionState(leader, 0, tuple(isr), 1)
                                for p, (leader, isr) in states.items()}, None)


def cli(command, *args: str) -> Result:
    """Run a click command in-process (stdout and stderr kept apart)."""
    return CliRunner().invoke(command, list(args))


def as_json(result: Result) -> dict:
    """The JSON document a --output json run printed."""
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def script(name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run bin/<name> as an operator would (a fresh process through the wrapper)."""
    return subprocess.run([os.path.join(REPO, "bin", name), *args], capture_output=True, text=True,
                          timeout=timeout, cwd="/")

