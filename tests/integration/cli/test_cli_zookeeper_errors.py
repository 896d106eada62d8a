"""--zookeeper mistakes an operator makes (a wrong chroot, a ZooKeeper that is down) give one line on
stderr, not the ZooKeeper library's warnings and reconnect chatter."""

import subprocess
import sys

import pytest

from pylog.zk.testing import free_port

from cli_helpers import REPO, script

pytestmark = pytest.mark.integration


def test_a_chroot_that_does_not_exist_gets_one_warning_line(zk_server, zk, zk_connect):
    missing = f"{zk_server.connect_string}/no-such-chroot-{free_port()}"
    p = script("pylog-topics.sh", "--zookeeper", missing, "--list")
    assert (p.returncode, p.stdout) == (0, "")
    assert p.stderr == (f"WARNING: the chroot /{missing.split('/', 1)[1]} does not exist in ZooKeeper at "
                        f"{zk_server.connect_string}; no pylog cluster uses it (check --zookeeper)\n")
    p = script("pylog-leader-election.sh", "--zookeeper", missing, "--election-type", "preferred",
               "--all-topic-partitions")
    assert (p.returncode, p.stdout, len(p.stderr.splitlines())) == (0, "", 1)
    # A chroot that exists (the zk fixture created it): no warning.
    p = script("pylog-topics.sh", "--zookeeper", zk_connect, "--create", "--topic", "x", "--partitions", "1",
               "--replication-factor", "1")
    assert p.stderr == "Error while executing topic command : Replication factor: 1 larger than available brokers: " \
                       "0.\n"


def test_an_unreachable_zookeeper_is_one_error_line():
    port = free_port()  # nothing listens there
    code = ("import sys; from pylog.cli import common; common.open_zk.__defaults__ = (1500,); "
            "from pylog.cli.topics import main; main()")
    p = subprocess.run([sys.executable, "-c", code, "--zookeeper", f"127.0.0.1:{port}", "--list"],
                       capture_output=True, text=True, timeout=60, cwd=REPO)
    assert (p.returncode, p.stdout) == (1, "")
    assert p.stderr == ("Error while executing topic command : Timed out after 1.5s connecting to ZooKeeper at "
                        f"127.0.0.1:{port}\n")
