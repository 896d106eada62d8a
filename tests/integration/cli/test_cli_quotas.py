"""pylog-configs --entity-type users|clients with quota keys: through ZooKeeper (the znodes and
notifications ZK-mode Kafka writes, 2.8 texts) and through a broker (Describe/AlterClientQuotas, 3.x texts)."""

import json

import pytest

from pylog.cli.configs import configs_command

from cli_helpers import cli, script

pytestmark = pytest.mark.integration


def test_quotas_through_zookeeper(zk, zk_connect):
    r = cli(configs_command, "--zookeeper", zk_connect, "--entity-type", "users", "--entity-name", "alice",
            "--alter", "--add-config", "producer_byte_rate=1024,consumer_byte_rate=2048")
    assert (r.exit_code, r.stdout) == (0, "Completed updating config for entity: user-principal 'alice'.\n")
    assert json.loads(zk.get("/config/users/alice")[0]) == {
        "version": 1, "config": {"producer_byte_rate": "1024", "consumer_byte_rate": "2048"}}
    r = cli(configs_command, "--zookeeper", zk_connect, "--entity-type", "clients", "--entity-default", "--alter",
            "--add-config", "request_percentage=150")
    assert (r.exit_code, r.stdout) == (0, "Completed updating config for entity: default client-id.\n")
    assert json.loads(zk.get("/config/clients/<default>")[0])["config"] == {"request_percentage": "150.0"}
    notes = [json.loads(zk.get(f"/config/changes/{n}")[0])["entity_path"] for n in zk.get_children("/config/changes")]
    assert sorted(notes) == ["clients/<default>", "users/alice"]
    r = cli(configs_command, "--zookeeper", zk_connect, "--entity-type", "users", "--entity-name", "alice",
            "--describe")
    assert r.stdout == "Configs for user-principal 'alice' are consumer_byte_rate=2048,producer_byte_rate=1024\n"
    r = cli(configs_command, "--zookeeper", zk_connect, "--entity-type", "users", "--entity-name", "alice",
            "--alter", "--add-config", "producer_byte_rate=1.5")
    assert r.exit_code != 0 and "producer_byte_rate" in r.stderr
    assert json.loads(zk.get("/config/users/alice")[0])["config"]["producer_byte_rate"] == "1024"  # nothing lost


def test_quotas_through_a_broker(cluster):
    b = cluster.bootstrap
    p = script("pylog-configs.sh", "--bootstrap-server", b, "--entity-type", "clients", "--entity-name", "app",
               "--alter", "--add-config", "producer_byte_rate=4096")
    assert (p.returncode, p.stdout) == (0, "Completed updating config for client app.\n"), p.stderr
    p = script("pylog-configs.sh", "--bootstrap-server", b, "--entity-type", "users", "--entity-default",
               "--alter", "--add-config", "consumer_byte_rate=8192")
    assert (p.returncode, p.stdout) == (0, "Completed updating default config for users in the cluster.\n"), p.stderr
    p = script("pylog-configs.sh", "--bootstrap-server", b, "--entity-type", "clients", "--describe")
    assert p.stdout == "Quota configs for client-id 'app' are producer_byte_rate=4096.0\n", p.stderr
    p = script("pylog-configs.sh", "--bootstrap-server", b, "--entity-type", "users", "--entity-default", "--describe")
    assert p.stdout == "Quota configs for the default user-principal are consumer_byte_rate=8192.0\n", p.stderr
    p = script("pylog-configs.sh", "--bootstrap-server", b, "--entity-type", "clients", "--entity-name", "app",
               "--alter", "--delete-config", "producer_byte_rate")
    assert p.returncode == 0, p.stderr
    p = script("pylog-configs.sh", "--bootstrap-server", b, "--entity-type", "clients", "--describe")
    assert p.stdout == ""


    # ConfigCommand 3.9's texts: values as Double.toString, keys in the admin client's HashMap order; its
    # refusals as one line, exit 1, with nothing stored changed
    def configs(*args):  # in-process: cheaper than a script per line
        return cli(configs_command, "--bootstrap-server", b, "--entity-type", "clients", *args)
    p = configs("--entity-name", "big", "--alter", "--add-config",
                "producer_byte_rate=20000000,consumer_byte_rate=2,request_percentage=3,controller_mutation_rate=0.0005")
    assert p.exit_code == 0, p.stderr
    line = "Quota configs for client-id 'big' are {}\n"
    p = configs("--entity-name", "big", "--describe")
    assert p.stdout == line.format("producer_byte_rate=2.0E7, consumer_byte_rate=2.0, controller_mutation_rate=5.0E-4, "
                                   "request_percentage=3.0"), p.stderr
    refusals = [
        (("--add-config", "producer_byte_rate=abc"),
         "Cannot parse quota configuration value for producer_byte_rate: abc"),
        (("--add-config", "producer_byte_rate=1.5"), "Configuration producer_byte_rate must be a LONG value"),
        (("--add-config", "producer_byte_rate=-5"), "Configuration producer_byte_rate must be a LONG value"),
        (("--delete-config", "consumer_byte_rate,nope_rate"), "Invalid config(s): nope_rate"),
        (("--entity-type", "clients", "--add-config", "producer_byte_rate=5"), "Duplicate entity type(s) specified: "
                                                                              "clients"),
        (("--entity-type", "topics", "--add-config", "producer_byte_rate=5"),
         "Only 'users' and 'clients' entity types may be specified together"),
        (("--entity-type", "users", "--add-config", "producer_byte_rate=5"),
         "An entity name must be specified for every entity type"),
    ]
    for args, error in refusals:
        p = configs("--entity-name", "big", "--alter", *args)
        assert (p.exit_code, p.stdout, p.stderr) == (1, "", error + "\n"), args
    p = configs("--entity-name", "big", "--describe")
    assert p.stdout == line.format("producer_byte_rate=2.0E7, consumer_byte_rate=2.0, controller_mutation_rate=5.0E-4, "
                                   "request_percentage=3.0"), p.stderr


def test_user_client_pair_quotas_through_a_broker(cluster, zk):
    """--entity-type users --entity-name U --entity-type clients --entity-name C (either order, --entity-default
    for either name) as ConfigCommand 3.9 sends and prints it, stored as ZK-mode Kafka stores it."""
    def configs(*args):
        return cli(configs_command, "--bootstrap-server", cluster.bootstrap, *args)
    p = configs("--entity-type", "users", "--entity-name", "u", "--entity-type", "clients", "--entity-name", "c",
                "--alter", "--add-config", "producer_byte_rate=5000,request_percentage=50")
    assert (p.exit_code, p.stdout) == (0, "Completed updating config for user u.\n"), p.stderr
    p = configs("--entity-type", "clients", "--entity-default", "--entity-type", "users", "--entity-name", "u",
                "--alter", "--add-config", "consumer_byte_rate=7000")
    assert (p.exit_code, p.stdout) == (0, "Completed updating default config for clients in the cluster.\n"), p.stderr
    p = configs("--entity-type", "users", "--entity-default", "--entity-type", "clients", "--entity-name", "c",
                "--alter", "--add-config", "producer_byte_rate=6000")
    assert p.exit_code == 0, p.stderr
    assert json.loads(zk.get("/config/users/u/clients/c")[0]) == {
        "version": 1, "config": {"producer_byte_rate": "5000", "request_percentage": "50.0"}}
    assert zk.get_entity_config("users", "u/clients/<default>") == {"consumer_byte_rate": "7000"}
    assert zk.get_entity_config("users", "<default>/clients/c") == {"producer_byte_rate": "6000"}
    notes = [json.loads(zk.get(f"/config/changes/{n}")[0])["entity_path"] for n in zk.get_children("/config/changes")]
    assert {"users/u/clients/c", "users/u/clients/<default>", "users/<default>/clients/c"} <= set(notes)

    p = configs("--entity-type", "users", "--entity-name", "u", "--entity-type", "clients", "--entity-name", "c",
                "--describe")
    assert p.stdout == "Quota configs for user-principal 'u', client-id 'c' are producer_byte_rate=5000.0, " \
                       "request_percentage=50.0\n", p.stderr
    p = configs("--entity-type", "clients", "--entity-name", "c", "--entity-type", "users", "--entity-default",
                "--describe")
    assert p.stdout == "Quota configs for the default user-principal, client-id 'c' are producer_byte_rate=6000.0\n"
    p = configs("--entity-type", "users", "--entity-name", "u", "--entity-type", "clients", "--describe")
    assert sorted(p.stdout.splitlines()) == [
        "Quota configs for user-principal 'u', client-id 'c' are producer_byte_rate=5000.0, request_percentage=50.0",
        "Quota configs for user-principal 'u', the default client-id are consumer_byte_rate=7000.0"], p.stderr
    # a pair is neither its user nor its client: neither alone lists it
    assert configs("--entity-type", "users", "--describe").stdout == ""
    assert configs("--entity-type", "clients", "--describe").stdout == ""

    pair = ("--entity-type", "users", "--entity-name", "u", "--entity-type", "clients", "--entity-name", "c", "--alter")
    p = configs(*pair, "--delete-config", "producer_byte_rate,consumer_byte_rate")
    assert (p.exit_code, p.stdout, p.stderr) == (1, "", "Invalid config(s): consumer_byte_rate\n")
    p = configs(*pair, "--add-config", "SCRAM-SHA-256=[password=x]")
    assert (p.exit_code, p.stderr) == (1, "Invalid config(s): SCRAM-SHA-256\n")
    p = configs(*pair, "--delete-config", "producer_byte_rate")
    assert (p.exit_code, p.stdout) == (0, "Completed updating config for user u.\n"), p.stderr
    assert zk.get_entity_config("users", "u/clients/c") == {"request_percentage": "50.0"}


def test_user_client_pair_quotas_through_zookeeper(zk, zk_connect):
    def configs(*args):
        return cli(configs_command, "--zookeeper", zk_connect, *args)
    p = configs("--entity-type", "users", "--entity-name", "al ice", "--entity-type", "clients", "--entity-name",
                "app", "--alter", "--add-config", "producer_byte_rate=512")
    assert (p.exit_code, p.stdout) == (0, "Completed updating config for entity: user-principal 'al ice', "
                                          "client-id 'app'.\n"), p.stderr
    assert json.loads(zk.get("/config/users/al%20ice/clients/app")[0]) == {
        "version": 1, "config": {"producer_byte_rate": "512"}}
    p = configs("--entity-type", "clients", "--entity-default", "--entity-type", "users", "--entity-name", "bob",
                "--alter", "--add-config", "consumer_byte_rate=1024")
    assert (p.exit_code, p.stdout) == (0, "Completed updating config for entity: user-principal 'bob', "
                                          "default client-id.\n"), p.stderr
    assert zk.get_entity_config("users", "bob/clients/<default>") == {"consumer_byte_rate": "1024"}
    notes = [json.loads(zk.get(f"/config/changes/{n}")[0])["entity_path"] for n in zk.get_children("/config/changes")]
    assert sorted(notes) == ["users/al%20ice/clients/app", "users/bob/clients/<default>"]
    p = configs("--entity-type", "users", "--entity-name", "al ice", "--entity-type", "clients", "--entity-name",
                "app", "--describe")
    assert p.stdout == "Configs for user-principal 'al ice', client-id 'app' are producer_byte_rate=512\n", p.stderr
    p = configs("--entity-type", "users", "--entity-type", "clients", "--describe")
    assert p.stdout == "Configs for user-principal 'al ice', client-id 'app' are producer_byte_rate=512\n" \
                       "Configs for user-principal 'bob', default client-id are consumer_byte_rate=1024\n", p.stderr
    p = configs("--entity-type", "users", "--entity-name", "bob", "--entity-type", "clients", "--alter",
                "--add-config", "producer_byte_rate=1")
    assert (p.exit_code, p.stdout, p.stderr) == (
        1, "", "--entity-name or --entity-default must be specified with each --entity-type for --alter\n")
