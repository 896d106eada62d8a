"""Shared fixtures: one real ZooKeeper per test session, a fresh chroot per test.

    zk_server   session scope: a running pylog.zk.server.ZooKeeperProcess (free port, tmp data dir);
                stopped by pid at the end of the session, and killed by the kernel if pytest dies.
    zk_connect  "127.0.0.1:<port>/<unique chroot>" for one test (the chroot is deleted afterwards).
    zk          a connected pylog.zk.client.ZkClient on that chroot, closed after the test.

Ports for other servers: pylog.zk.testing.free_port().

Under pytest-xdist (./scripts/test runs `-n 2 --dist loadgroup`) each worker has its own ZooKeeper;
the tests of a directory in SHARED_WORKER stay together on one worker (see pytest_collection_modifyitems).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Iterator

import pytest

from pylog.zk.client import ZkClient
from pylog.zk.server import ZooKeeperProcess
from pylog.zk.testing import start_test_zookeeper, unique_chroot

log = logging.getLogger(__name__)

# Directories whose tests share one worker: the Spark tests share one JVM per process (the first
# session pays its start and JIT warm-up); spread over two workers they would pay it twice and
# starve each other's CPU. loadgroup hands the largest group out first, so it starts at once.
SHARED_WORKER = {"integration/spark": "spark"}
_TESTS_DIR = Path(__file__).parent


# tryfirst: pytest-xdist's own hook turns the marker into the @group suffix it schedules by; after it,
# the marker would be added too late and the Spark tests would land on both workers.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tag the tests of SHARED_WORKER directories with their xdist_group (a no-op without xdist)."""
    for item in items:
        try:
            rel = item.path.relative_to(_TESTS_DIR).as_posix()
        except ValueError:
            continue
        for prefix, group in SHARED_WORKER.items():
            if rel.startswith(prefix + "/"):
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def zk_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperProcess]:
    """A real ZooKeeper for the whole session (tickTime 500 ms: session timeouts from 1 s to 60 s)."""
    server = start_test_zookeeper(str(tmp_path_factory.mktemp("zookeeper")))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def _zk_root(zk_server: ZooKeeperProcess) -> Iterator[ZkClient]:
    """A client without chroot, for cleaning up test chroots."""
    client = ZkClient(zk_server.connect_string, session_timeout_ms=10000).start()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def zk_connect(zk_server: ZooKeeperProcess, _zk_root: ZkClient,
               request: pytest.FixtureRequest) -> Iterator[str]:
    """A connect string with a chroot no other test uses."""
    chroot = unique_chroot(request.node.name)
    yield f"{zk_server.connect_string}{chroot}"
    if zk_server.is_running():
        try:
            _zk_root.delete_recursive(chroot)
        except Exception:  # cleanup must not turn a passing test into an error
            log.exception("Could not delete test chroot %s", chroot)


@pytest.fixture
def zk(zk_connect: str) -> Iterator[ZkClient]:
    """A ZkClient connected to the test's chroot (which it creates)."""
    client = ZkClient(zk_connect, session_timeout_ms=10000, connection_timeout_ms=10000).start()
    try:
        yield client
    finally:
        client.close()
