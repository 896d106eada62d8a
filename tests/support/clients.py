"""Small helpers shared by integration tests that drive real Kafka clients."""

from __future__ import annotations

import subprocess
import time

from pylog.client.sync import KafkaClient
from pylog.protocol.api import ApiKey


def create_topic(bootstrap: str, name: str, partitions: int = 1, rf: int = 1,
                 configs: dict[str, str] | None = None, timeout_ms: int = 30000) -> None:
    """CreateTopics through the broker; raises if the broker reports an error."""
    with KafkaClient(bootstrap) as k:
        resp = k.call(ApiKey.CreateTopics, lambda cls, v: cls(
            topics=[cls.CreatableTopic(name=name, num_partitions=partitions, replication_factor=rf, assignments=[],
                                       configs=[cls.CreatableTopic.CreatableTopicConfig(name=n, value=val)
                                                for n, val in (configs or {}).items()])],
            timeout_ms=timeout_ms, validate_only=False))
    err = resp.topics[0].error_code
    if err != 0:
        raise AssertionError(f"creating {name} failed with error {err}: {resp.topics[0].error_message}")


def kcat(bootstrap: str, *args: str, input: str | bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Run kcat against the cluster; raises on a non-zero exit."""
    text = not isinstance(input, bytes)
    r = subprocess.run(["kcat", "-b", bootstrap, *args], input=input, capture_output=True, text=text, timeout=timeout)
    if r.returncode != 0:
        raise AssertionError(f"kcat {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r


def wait_for(cond, timeout: float = 30, what: str = "condition", interval: float = 0.1):
    """Poll until cond() is truthy; AssertionError after timeout, naming (and chained to) the last exception
    cond() raised, so a wait that failed for a reason says which."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            got = cond()
            if got:
                return got
            last = None
        except Exception as exc:
            last = exc
        time.sleep(interval)
    detail = f"; last attempt raised {type(last).__name__}: {last}" if last is not None else ""
    raise AssertionError(f"timed out waiting for {what}{detail}") from last
