"""pylog-configs against real ZooKeeper (the znodes and notifications it writes, 2.8 texts) and against
LocalCluster brokers (3.x describe texts; a change made through ZooKeeper is seen by the brokers)."""

import json

import pytest

from pylog.cli.configs import configs_command
from pylog.cli.topics import topics_command
from pylog.zk import paths

from cli_helpers import as_json, cli, register_brokers, script
from support.clients import wait_for

pytestmark = pytest.mark.integration


def configs(connect_opt, connect, *args):
    return cli(configs_command, connect_opt, connect, *args)


def notifications(zk):
    names = zk.get_children(paths.config_changes())
    return [zk.get(f"{paths.config_changes()}/{n}")[0] for n in sorted(names)]


def test_topic_configs_through_zookeeper(zk, zk_connect):
    register_brokers(zk, [0])
    assert cli(topics_command, "--zookeeper", zk_connect, "--create", "--topic", "foo", "--partitions", "1",
               "--replication-factor", "1").exit_code == 0
    before = len(notifications(zk))
    r = configs("--zookeeper", zk_connect, "--entity-type", "topics", "--entity-name", "foo", "--alter",
                "--add-config", "retention.ms=1000,cleanup.policy=[compact,delete]")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "Completed updating config for entity: topic 'foo'.\n", "")
    assert json.loads(zk.get(paths.config_entity("topics", "foo"))[0]) == {
        "version": 1, "config": {"retention.ms": "1000", "cleanup.policy": "compact,delete"}}
    # The entity first, then the notification brokers watch (AdminZkClient.changeEntityConfig).
    assert notifications(zk)[before:] == [b'{"version":2,"entity_path":"topics/foo"}']
    r = configs("--zookeeper", zk_connect, "--topic", "foo", "--describe")
    assert r.stdout == "Configs for topic 'foo' are cleanup.policy=compact,delete,retention.ms=1000\n"

    for args, message in [
        (["--delete-config", "retention.ms,nope"], "Invalid config(s): nope"),
        (["--add-config", "nope=1"], "Unknown topic config name: nope"),
        (["--add-config", "retention.ms=soon"], "Invalid value soon for configuration retention.ms: Not a number "
                                                "of type LONG"),
    ]:
        r = configs("--zookeeper", zk_connect, "--topic", "foo", "--alter", *args)
        assert (r.exit_code, r.stderr) == (1, message + "\n"), args
    r = configs("--zookeeper", zk_connect, "--topic", "bar", "--alter", "--add-config", "retention.ms=1")
    assert (r.exit_code, r.stderr) == (1, "Topic 'bar' does not exist.\n")
    assert zk.get_entity_config("topics", "foo") == {"retention.ms": "1000", "cleanup.policy": "compact,delete"}

    r = configs("--zookeeper", zk_connect, "--topic", "foo", "--alter", "--delete-config", "cleanup.policy")
    assert r.exit_code == 0
    assert zk.get_entity_config("topics", "foo") == {"retention.ms": "1000"}


def test_broker_configs_through_zookeeper(zk, zk_connect, tmp_path):
    zk.create_top_level_paths()
    f = tmp_path / "dyn.properties"
    f.write_text("# per-broker overrides\nlog.retention.ms=5000\n")
    r = configs("--zookeeper", zk_connect, "--broker", "1", "--alter", "--add-config-file", str(f))
    assert (r.exit_code, r.stdout) == (0, "Completed updating config for entity: brokers '1'.\n")
    r = configs("--zookeeper", zk_connect, "--broker-defaults", "--alter", "--add-config", "min.insync.replicas=2")
    assert (r.exit_code, r.stdout) == (0, "Completed updating config for entity: default brokers.\n")
    assert zk.get_entity_config("brokers", "<default>") == {"min.insync.replicas": "2"}
    assert notifications(zk)[-2:] == [b'{"version":2,"entity_path":"brokers/1"}',
                                      b'{"version":2,"entity_path":"brokers/<default>"}']
    r = configs("--zookeeper", zk_connect, "--entity-type", "brokers", "--describe")
    assert r.stdout == "Configs for brokers '1' are log.retention.ms=5000\nConfigs for default brokers are " \
                       "min.insync.replicas=2\n"
    doc = as_json(configs("--zookeeper", zk_connect, "--entity-type", "brokers", "--entity-default", "--describe",
                          "--output", "json"))
    assert doc["entities"] == [{"entity_type": "brokers", "name": "", "configs": [
        {"name": "min.insync.replicas", "value": "2", "sensitive": False, "source": None, "synonyms": []}]}]
    r = configs("--zookeeper", zk_connect, "--broker-defaults", "--alter", "--add-config", "broker.id=3")
    assert (r.exit_code, r.stderr) == (1, "Cannot update these configs dynamically: Set(broker.id)\n")
    p = script("pylog-configs.sh", "--zookeeper", zk_connect, "--broker", "1", "--describe")
    assert (p.returncode, p.stdout) == (0, "Configs for brokers '1' are log.retention.ms=5000\n")


def test_describe_through_a_broker_sees_changes_made_through_zookeeper(cluster_factory):
    c = cluster_factory(1)
    assert cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "foo",
               "--config", "retention.ms=1000").exit_code == 0
    r = configs("--bootstrap-server", c.bootstrap, "--topic", "foo", "--describe")
    # Kafka's ConfigHelper drops synonyms before the primary broker name (log.retention.ms), so the
    # log.retention.hours default is not listed (kafka-formats.md's example shows it; the code does not).
    assert (r.exit_code, r.stdout) == (0, "Dynamic configs for topic foo are:\n"
                                          "  retention.ms=1000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:"
                                          "retention.ms=1000}\n")
    r = configs("--bootstrap-server", c.bootstrap, "--topic", "foo", "--describe", "--all")
    lines = r.stdout.splitlines()
    assert lines[0] == "All configs for topic foo are:"
    assert "  segment.bytes=1073741824 sensitive=false synonyms={DEFAULT_CONFIG:log.segment.bytes=1073741824}" \
        in lines
    assert lines[1:] == sorted(lines[1:])

    r = configs("--zookeeper", c.zk_connect, "--broker", "0", "--alter", "--add-config", "log.retention.ms=5000")
    assert r.exit_code == 0, r.output

    def dynamic_broker_lines():
        res = configs("--bootstrap-server", c.bootstrap, "--broker", "0", "--describe")
        return res.stdout if "log.retention.ms" in res.stdout else None
    out = wait_for(dynamic_broker_lines, what="the broker applied the ZooKeeper change")
    assert out == ("Dynamic configs for broker 0 are:\n"
                   "  log.retention.ms=5000 sensitive=false synonyms={DYNAMIC_BROKER_CONFIG:log.retention.ms=5000, "
                   "DEFAULT_CONFIG:log.retention.hours=168}\n")
    r = configs("--bootstrap-server", c.bootstrap, "--entity-type", "brokers", "--describe")
    assert r.stdout.splitlines()[-1] == "Default configs for brokers in the cluster are:"
    r = configs("--bootstrap-server", c.bootstrap, "--topic", "nope", "--describe")
    assert (r.exit_code, r.stderr) == (1, "Topic nope does not exist.\n")


def test_alter_through_a_broker(cluster_factory):
    c = cluster_factory(1)
    assert cli(topics_command, "--bootstrap-server", c.bootstrap, "--create", "--topic", "foo").exit_code == 0
    r = configs("--bootstrap-server", c.bootstrap, "--topic", "foo", "--alter", "--add-config", "retention.ms=7")
    assert (r.exit_code, r.stdout) == (0, "Completed updating config for topic foo.\n")
    r = configs("--bootstrap-server", c.bootstrap, "--topic", "foo", "--alter", "--delete-config", "segment.ms")
    assert (r.exit_code, r.stderr) == (1, "Invalid config(s): segment.ms\n")
    r = configs("--bootstrap-server", c.bootstrap, "--broker-defaults", "--alter", "--add-config",
                "min.insync.replicas=1")
    assert (r.exit_code, r.stdout) == (0, "Completed updating default config for brokers in the cluster.\n")
    r = configs("--bootstrap-server", c.bootstrap, "--broker", "0", "--alter", "--add-config", "log.retention.ms=9")
    assert (r.exit_code, r.stdout) == (0, "Completed updating config for broker 0.\n")
    r = configs("--bootstrap-server", c.bootstrap, "--topic", "foo", "--describe")
    assert "  retention.ms=7 " in r.stdout
