"""Fixtures for integration tests: real broker processes on loopback, one ZooKeeper chroot per test.

    cluster_factory  start(n_brokers, **overrides) -> LocalCluster; every broker it started is
                     stopped (SIGTERM, then SIGKILL) when the test ends, pass or fail.
    cluster          a one-broker cluster (the common case).
"""

from __future__ import annotations

from typing import Callable, Iterator

import pytest

from pylog.localcluster import LocalCluster


@pytest.fixture
def cluster_factory(zk_connect: str, tmp_path) -> Iterator[Callable[..., LocalCluster]]:
    """Start clusters of real brokers inside this test's ZooKeeper chroot."""
    started: list[LocalCluster] = []

    def start(n_brokers: int = 1, overrides: dict[str, str] | None = None,
              broker_overrides: dict[int, dict[str, str]] | None = None,
              extra_listeners: dict[str, str] | None = None, env: dict[str, str] | None = None,
              prometheus: bool = False) -> LocalCluster:
        c = LocalCluster(tmp_path / f"cluster-{len(started)}", n_brokers, zk_connect=zk_connect,
                         overrides=overrides, broker_overrides=broker_overrides, extra_listeners=extra_listeners,
                         env=env, prometheus=prometheus)
        started.append(c)
        return c.start()

    try:
        yield start
    finally:
        for c in started:
            try:
                c.stop()
            except Exception:
                c.kill_all()


@pytest.fixture
def cluster(cluster_factory) -> LocalCluster:
    """One broker, controller of its own cluster."""
    return cluster_factory(1)
