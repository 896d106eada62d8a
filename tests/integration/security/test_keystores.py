"""PKCS12 keystores and truststores made by keytool, as Kafka operators have them; JKS refused clearly.

The broker's SSL listener (client certificates required) and a tool's --command-config both read
PKCS12 stores; kcat, with its own PEM files, talks to that listener as a user would.
"""

import os
import subprocess

import pytest

from pylog.common.config import BrokerConfig
from pylog.common.configdef import ConfigError
from pylog.localcluster import ClusterError
from pylog.security.settings import build_listener_security

pytestmark = pytest.mark.integration

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def run(*args, cwd):
    r = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{args[0]} {args[1]} failed: {r.stdout}{r.stderr}"


def keytool_stores(ca, name, directory, password):
    """name.p12 (key + chain) and name.jks converted by keytool; truststore.p12 with the CA imported by keytool."""
    d = str(directory)
    run("openssl", "pkcs12", "-export", "-in", str(ca.dir / f"{name}.crt"), "-inkey", str(ca.dir / f"{name}.key"),
        "-certfile", str(ca.cert), "-name", name, "-out", f"{name}.openssl.p12", "-passout", f"pass:{password}", cwd=d)
    for store_type, out in (("PKCS12", f"{name}.p12"), ("JKS", f"{name}.jks")):
        run("keytool", "-importkeystore", "-noprompt", "-srckeystore", f"{name}.openssl.p12", "-srcstoretype", "PKCS12",
            "-srcstorepass", password, "-destkeystore", out, "-deststoretype", store_type, "-deststorepass", password,
            "-destkeypass", password, cwd=d)
    if not (directory / "truststore.p12").exists():
        run("keytool", "-importcert", "-noprompt", "-alias", "pylog-ca", "-file", str(ca.cert), "-keystore",
            "truststore.p12", "-storetype", "PKCS12", "-storepass", "trust-pw", cwd=d)
    return directory / f"{name}.p12", directory / f"{name}.jks", directory / "truststore.p12"


def ssl_overrides(keystore, truststore, store_type="PKCS12"):
    return {"ssl.keystore.type": store_type, "ssl.keystore.location": str(keystore),
            "ssl.keystore.password": "broker-pw", "ssl.key.password": "broker-pw",
            "ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(truststore),
            "ssl.truststore.password": "trust-pw", "listener.name.ssl.ssl.client.auth": "required"}


def test_pkcs12_stores_for_the_broker_and_the_tools(cluster_factory, ca, tmp_path):
    keystore, _, truststore = keytool_stores(ca, "broker", tmp_path, "broker-pw")
    alice_store, _, _ = keytool_stores(ca, "alice", tmp_path, "alice-pw")
    c = cluster_factory(1, overrides=ssl_overrides(keystore, truststore), extra_listeners={"SSL": "SSL"})
    bs = c.bootstrap_on("SSL")
    tls = ["-X", "security.protocol=SSL", "-X", f"ssl.ca.location={ca.cert}",
           "-X", f"ssl.certificate.location={ca.dir / 'alice.crt'}", "-X", f"ssl.key.location={ca.dir / 'alice.key'}"]
    produced = subprocess.run(["kcat", "-b", bs, *tls, "-P", "-t", "p12"], input="over-pkcs12\n", capture_output=True,
                              text=True, timeout=60)
    assert produced.returncode == 0, produced.stderr
    consumed = subprocess.run(["kcat", "-b", bs, *tls, "-C", "-t", "p12", "-o", "beginning", "-e", "-q"],
                              capture_output=True, text=True, timeout=60)
    assert consumed.stdout.split() == ["over-pkcs12"], consumed.stderr
    # Without a client certificate the listener refuses (ssl.client.auth=required against the PKCS12 truststore).
    anonymous = subprocess.run(["kcat", "-b", bs, *tls[:4], "-L", "-m", "5"], capture_output=True, text=True,
                               timeout=60)
    assert anonymous.returncode != 0

    props = tmp_path / "client.properties"
    props.write_text(f"security.protocol=SSL\nssl.truststore.type=PKCS12\nssl.truststore.location={truststore}\n"
                     f"ssl.truststore.password=trust-pw\nssl.keystore.type=PKCS12\nssl.keystore.location={alice_store}\n"
                     "ssl.keystore.password=alice-pw\nssl.key.password=alice-pw\n")
    r = subprocess.run([os.path.join(REPO, "bin", "pylog-topics.sh"), "--bootstrap-server", bs, "--command-config",
                        str(props), "--list"], capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": REPO})
    assert r.returncode == 0 and r.stdout.split() == ["p12"], r.stderr


def test_jks_is_refused_with_the_keytool_conversion_and_bad_passwords_are_named(cluster_factory, ca, tmp_path):
    keystore, jks, truststore = keytool_stores(ca, "broker", tmp_path, "broker-pw")
    with pytest.raises(ClusterError) as refused:
        cluster_factory(1, overrides=ssl_overrides(jks, truststore, "JKS"), extra_listeners={"SSL": "SSL"})
    assert "ssl.keystore.type=JKS is not supported by pylog" in str(refused.value)
    assert f"keytool -importkeystore -srckeystore {jks} -destkeystore {jks}.p12 -deststoretype PKCS12" in \
        str(refused.value)

    base = {"zookeeper.connect": "127.0.0.1:1", "listeners": "PLAINTEXT://:1,SSL://:2",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL"}
    wrong = {**base, **ssl_overrides(keystore, truststore), "ssl.keystore.password": "nope"}
    with pytest.raises(ConfigError, match="Cannot open the PKCS12 store .*broker.p12.*wrong ssl.keystore.password"):
        build_listener_security(BrokerConfig.from_props(wrong))
    wrong = {**base, **ssl_overrides(keystore, truststore), "ssl.truststore.password": "nope"}
    with pytest.raises(ConfigError, match="wrong ssl.truststore.password"):
        build_listener_security(BrokerConfig.from_props(wrong))
