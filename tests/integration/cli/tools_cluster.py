"""One module-scoped cluster for the tool tests (Kafka 3.9's operator tools), so each file pays one start."""

from __future__ import annotations

from typing import Iterator

import pytest

from pylog.localcluster import LocalCluster
from pylog.zk.testing import unique_chroot


def module_cluster(zk_server, _zk_root, tmp_path_factory: pytest.TempPathFactory, label: str, n_brokers: int = 2,
                   broker_overrides: dict[int, dict[str, str]] | None = None) -> Iterator[LocalCluster]:
    """Start n brokers in a fresh chroot of the session's ZooKeeper; stop them (and drop the chroot) after."""
    chroot = unique_chroot(label)
    base = tmp_path_factory.mktemp(label)
    cluster = LocalCluster(base, n_brokers, zk_connect=f"{zk_server.connect_string}{chroot}",
                           broker_overrides=broker_overrides)
    try:
        yield cluster.start()
    finally:
        try:
            cluster.stop()
        except Exception:
            cluster.kill_all()
        try:
            _zk_root.delete_recursive(chroot)
        except Exception:
            pass
