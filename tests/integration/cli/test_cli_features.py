"""pylog-features (kafka-features.sh, KIP-584) against a broker: /feature as ZK-mode Kafka keeps it,
ApiVersions' finalized features, UpdateFeatures on the controller, and transaction.version 1 taking effect
(the transaction coordinator's records become TransactionLogValue v1)."""

import glob
import json
import os

import pytest

from pylog.cli.features import features_command

from pylog.protocol.records import iter_batches, read_records
from support.clients import create_topic, wait_for
from support.txn import kafka_python_commit

from cli_helpers import cli, script

pytestmark = pytest.mark.integration


def features(bootstrap, *args):
    return script("pylog-features.sh", "--bootstrap-server", bootstrap, *args)


def txn_value_versions(broker) -> set[int]:
    """The versions of every TransactionLogValue in the broker's __transaction_state segments."""
    versions = set()
    for path in glob.glob(os.path.join(broker.data_dir, "logs", "__transaction_state-*", "*.log")):
        data = open(path, "rb").read()
        for h in iter_batches(data):
            for r in read_records(data[h.position:h.position + h.size]):
                if r.value:
                    versions.add(int.from_bytes(r.value[:2], "big"))
    return versions


def test_describe_upgrade_and_the_feature_znode(cluster, zk):
    b = cluster.bootstrap
    assert json.loads(zk.get("/feature")[0]) == {"version": 2, "status": 1, "features": {}}
    line = "Feature: transaction.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 2\tFinalizedVersionLevel: {}\t" \
           "Epoch: {}\n"
    p = features(b, "describe")
    assert (p.returncode, p.stdout) == (0, line.format(0, 0)), p.stderr
    p = features(b, "upgrade", "--feature", "transaction.version=1", "--dry-run")
    assert (p.returncode, p.stdout) == (0, "transaction.version can be upgraded to 1.\n"), p.stderr
    assert json.loads(zk.get("/feature")[0])["features"] == {}
    p = features(b, "upgrade", "--feature", "transaction.version=1")
    assert (p.returncode, p.stdout) == (0, "transaction.version was upgraded to 1.\n"), p.stderr
    assert json.loads(zk.get("/feature")[0]) == {"version": 2, "status": 1,
                                                 "features": {"transaction.version": {"max_version_level": 1}}}
    wait_for(lambda: features(b, "describe").stdout == line.format(1, 1), 30, "the finalized level in ApiVersions")
    p = features(b, "upgrade", "--feature", "transaction.version=3")
    assert p.returncode == 1 and p.stdout == (
        "Could not upgrade transaction.version to 3. Could not apply finalized feature update because brokers were "
        "found to have incompatible versions for the feature.\n")
    assert p.stderr.strip() == "1 out of 1 operation(s) failed."

    # TV_1: the coordinator writes flexible values from now on
    create_topic(b, "tv1")
    kafka_python_commit(b, "tv1", "tv1", b"x")
    assert txn_value_versions(cluster.brokers[0]) == {1}

    p = features(b, "downgrade", "--feature", "transaction.version=0")
    assert (p.returncode, p.stdout) == (0, "transaction.version was downgraded to 0.\n"), p.stderr
    assert json.loads(zk.get("/feature")[0])["features"] == {}

    # FeatureCommand prints its results from a TreeMap (by name), each failure with its exception's message
    # (metadata.version is no feature of a ZooKeeper-mode broker, as in Kafka 3.9, whose ZK brokers support none)
    p = features(b, "upgrade", "--metadata", "3.9", "--feature", "zz.unknown=1", "--feature", "aa.unknown=2",
                 "--dry-run")
    incompatible = "Could not apply finalized feature update because brokers were found to have incompatible " \
                   "versions for the feature."
    assert (p.returncode, p.stdout, p.stderr) == (
        1, f"Can not upgrade aa.unknown to 2. {incompatible}\nCan not upgrade metadata.version to 21. {incompatible}\n"
           f"Can not upgrade zz.unknown to 1. {incompatible}\n", "3 out of 3 operation(s) failed.\n")


@pytest.mark.parametrize("args, error", [
    (("upgrade", "--feature", "transaction.version"),
     "Can't parse feature=level string transaction.version: equals sign not found."),
    (("upgrade", "--feature", "transaction.version=x"),
     "Can't parse feature=level string transaction.version=x: unable to parse x as a short."),
    (("downgrade", "--feature", "transaction.version=40000"),
     "Can't parse feature=level string transaction.version=40000: unable to parse 40000 as a short."),
    (("upgrade", "--feature", "a=1", "--feature", "a=2"), "Feature a was specified more than once."),
    (("disable", "--feature", "a", "--feature", "a"), "Feature a was specified more than once."),
    (("upgrade",), "You must specify at least one feature to upgrade"),
    (("upgrade", "--feature", " =1"), "Provided feature can not be empty."),
    (("upgrade", "--unsafe", "--feature", "a=1"),
     "Command line error: unrecognized arguments: '--unsafe'. Type --help for help."),
    (("disable", "--metadata", "3.9", "--feature", "a"),
     "Command line error: unrecognized arguments: '--metadata'. Type --help for help."),
    (("upgrade", "--feature", "a=0"), "The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when "
                                      "the provided maxVersionLevel:0 is < 1."),
    (("downgrade", "--feature", "a=-1"), "Cannot specify a negative version level."),
    (("upgrade", "--metadata", "3.9-IV0", "--feature", "metadata.version=21"),
     "Feature metadata.version was specified more than once."),
    (("downgrade", "--metadata", "2.8"), "Cannot specify a negative version level."),  # no KRaft level before 3.0-IV1
    (("upgrade", "--metadata", "4.0"), "Unsupported metadata.version 4.0. Supported metadata.version are 3.3-IV0, "
     "3.3-IV1, 3.3-IV2, 3.3-IV3, 3.4-IV0, 3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, "
     "3.7-IV2, 3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0"),
])
def test_bad_arguments_get_feature_commands_line(args, error):
    # refused before any connection (the port is closed): one line on stderr, exit 1, as FeatureCommand's
    r = cli(features_command, "--bootstrap-server", "127.0.0.1:1", *args)
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", error + "\n")
