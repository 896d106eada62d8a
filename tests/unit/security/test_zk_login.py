"""The ZooKeeper login from KAFKA_OPTS' JAAS file, and Kafka's default znode ACLs."""

import pytest
from kazoo.security import CREATOR_ALL_ACL, OPEN_ACL_UNSAFE, READ_ACL_UNSAFE

from pylog.common.configdef import ConfigError
from pylog.security.zk_login import jvm_properties, zk_login, zk_security
from pylog.zk.acls import default_acls, secure_policy

JAAS = """
KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required username="b" password="x"; };
/* ZooKeeper */
Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    username="kafka"
    password="s3cret;pw//x"; // a comment
};
"""


def env_for(tmp_path, text=JAAS, extra=""):
    path = tmp_path / "jaas.conf"
    path.write_text(text)
    return {"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={path} {extra}"}


def test_jvm_properties_reads_only_system_properties():
    assert jvm_properties("-Xmx1G -Da=1 -Db=x=y '-Dc=with space'") == {"a": "1", "b": "x=y", "c": "with space"}


def test_client_section_becomes_digest_auth(tmp_path):
    login = zk_login(env_for(tmp_path))
    assert login.auth_data == [("digest", "kafka:s3cret;pw//x")]
    assert "s3cret" not in repr(login)


def test_no_login_without_kafka_opts_or_section_or_when_switched_off(tmp_path):
    assert zk_login({}) is None
    assert zk_login(env_for(tmp_path, "KafkaServer { x required; };")) is None
    assert zk_login(env_for(tmp_path, extra="-Dzookeeper.sasl.client=false")) is None


def test_other_section_name_and_bad_files_are_clear_errors(tmp_path):
    text = JAAS.replace("Client {", "ZkLogin {")
    assert zk_login(env_for(tmp_path, text, "-Dzookeeper.sasl.clientconfig=ZkLogin")).username == "kafka"
    with pytest.raises(ConfigError, match="Unsupported ZooKeeper login module com.sun.security.auth.module.Krb5"):
        zk_login(env_for(tmp_path, "Client { com.sun.security.auth.module.Krb5LoginModule required; };"))
    with pytest.raises(ConfigError, match="needs username and password"):
        zk_login(env_for(tmp_path, "Client { org.apache.zookeeper.server.auth.DigestLoginModule required "
                                   "username=\"k\"; };"))
    with pytest.raises(ConfigError, match="Could not read the JAAS file /nonexistent"):
        zk_login({"KAFKA_OPTS": "-Djava.security.auth.login.config=/nonexistent"})


def test_broker_refuses_set_acl_without_login_and_tools_follow_the_login(tmp_path):
    with pytest.raises(ConfigError, match="zookeeper.set.acl is true, but the verification of the JAAS login"):
        zk_security(True, {})
    assert zk_security(False, {}) == {"auth_data": (), "acl_policy": None}
    assert zk_security(None, {}) == {"auth_data": (), "acl_policy": None}
    broker = zk_security(False, env_for(tmp_path))  # logs in, but creates open znodes (set.acl=false)
    assert broker["auth_data"] and broker["acl_policy"] is None
    assert zk_security(None, env_for(tmp_path))["acl_policy"] is secure_policy


@pytest.mark.parametrize("path, acl", [
    ("/brokers/ids/0", CREATOR_ALL_ACL + READ_ACL_UNSAFE),
    ("/config/topics/t", CREATOR_ALL_ACL + READ_ACL_UNSAFE),
    ("/config", CREATOR_ALL_ACL + READ_ACL_UNSAFE),
    ("/config/users", CREATOR_ALL_ACL),
    ("/config/users/alice", CREATOR_ALL_ACL),
    ("/config/brokers/0", CREATOR_ALL_ACL),
    ("/delegation_token/tokens/t1", CREATOR_ALL_ACL),
    ("/consumers", OPEN_ACL_UNSAFE),
])
def test_kafkas_default_acls(path, acl):
    assert default_acls(True, path) == list(acl)
    assert default_acls(False, path) == list(OPEN_ACL_UNSAFE)
