"""The quickstart behind ./scripts/quickstart (run with the repo's .venv python).

secure: the same with a SASL_SSL listener (also the inter-broker one, PLAIN as admin), a generated CA, the ACL
authorizer with admin as super user, and a SCRAM user alice granted producer and consumer ACLs.
start: stop a previous quickstart cluster if one runs, start ZooKeeper and three brokers (on
2181 and 9092-9094 when free), create a topic with replication factor 3 and
min.insync.replicas=2, produce and consume with kcat, describe the topic, and leave it running.
stop: stop what `start` started, by the pids it recorded.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pylog.localcluster import LocalCluster, terminate_pids, wait_until  # noqa: E402
from pylog.zk.testing import free_port  # noqa: E402

STATE = ROOT / ".quickstart"
PIDS = STATE / "pids.json"
TOPIC = "quickstart-events"


def _free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _port(preferred: int) -> int:
    return preferred if _free(preferred) else free_port()


def _run(*cmd: str, stdin: str | None = None) -> str:
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"quickstart: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr}{r.stdout}")
    return r.stdout


def stop(quiet: bool = False) -> None:
    """Stop the processes a previous start recorded."""
    if not PIDS.exists():
        if not quiet:
            print("No quickstart cluster is running.")
        return
    pids = json.loads(PIDS.read_text())
    brokers = [p for name, p in pids.items() if name.startswith("broker")]
    terminate_pids(brokers, timeout=60)  # brokers first: a controlled shutdown needs ZooKeeper
    terminate_pids([p for name, p in pids.items() if not name.startswith("broker")], timeout=30)
    PIDS.unlink()
    if not quiet:
        print(f"Stopped the quickstart cluster (pids {', '.join(str(p) for p in pids.values())}).")


def status() -> None:
    """Print what runs."""
    if not PIDS.exists():
        print("No quickstart cluster is running.")
        return
    for name, pid in json.loads(PIDS.read_text()).items():
        alive = os.path.exists(f"/proc/{pid}")
        print(f"{name}: pid {pid} {'running' if alive else 'not running'}")


def _metrics_ports() -> dict[int, int]:
    """prometheus.listener ports: 9404, 9405, 9406 when free (the JMX exporter's customary 9404 and up)."""
    return {i: _port(9404 + i) for i in range(3)}


def _write_prometheus_config(cluster: LocalCluster) -> str:
    """A ready prometheus.yml scraping every broker's /metrics, with the alert rules; returns how to use it."""
    targets = ", ".join(f"'127.0.0.1:{b.metrics_port}'" for b in cluster.brokers.values())
    rules = ROOT / "config" / "prometheus" / "pylog-alerts.yml"
    config = STATE / "prometheus.yml"
    config.write_text(f"# Written by scripts/quickstart: scrape the quickstart cluster's brokers (docs/metrics.md).\n"
                      f"global:\n  scrape_interval: 10s\n  evaluation_interval: 10s\n"
                      f"rule_files:\n  - '{rules}'\n"
                      f"scrape_configs:\n  - job_name: pylog\n    static_configs:\n      - targets: [{targets}]\n")
    first = next(iter(cluster.brokers.values()))
    return (f"Prometheus metrics: http://127.0.0.1:{first.metrics_port}/metrics (one port per broker: "
            f"{', '.join(str(b.metrics_port) for b in cluster.brokers.values())}); scrape them all with\n"
            f"  prometheus --config.file={config} --storage.tsdb.path={STATE / 'prometheus-data'}\n"
            f"or watch them with: bin/pylog-top.sh --bootstrap-server {cluster.bootstrap.split(',')[0]}")


def start() -> None:
    """Start the cluster and run the demo against it."""
    if PIDS.exists():
        print("A quickstart cluster is already running; restarting it from scratch.")
        stop(quiet=True)
    shutil.rmtree(STATE, ignore_errors=True)
    ports = {i: _port(9092 + i) for i in range(3)}
    cluster = LocalCluster(STATE, 3, zk_port=_port(2181), broker_ports=ports, metrics_ports=_metrics_ports(),
                           overrides={"zookeeper.session.timeout.ms": "18000"})
    cluster.start()
    scrape = _write_prometheus_config(cluster)
    pids = {"zookeeper": cluster.zk_process.pid, **{f"broker-{i}": b.pid for i, b in cluster.brokers.items()}}
    PIDS.write_text(json.dumps(pids))
    bootstrap = cluster.bootstrap
    topics = str(ROOT / "bin" / "pylog-topics.sh")
    wait_until(lambda: _run(topics, "--bootstrap-server", bootstrap, "--list") is not None, 60, "brokers to answer")
    print(_run(topics, "--bootstrap-server", bootstrap, "--create", "--topic", TOPIC, "--partitions", "3",
               "--replication-factor", "3", "--config", "min.insync.replicas=2"), end="")
    records = "".join(f"key-{i}:hello pylog {i}\n" for i in range(5))
    _run("kcat", "-b", bootstrap, "-P", "-t", TOPIC, "-K:", "-X", "acks=all", stdin=records)
    print(f"Produced 5 records to {TOPIC} with kcat (acks=all). Consuming them back:")
    print(_run("kcat", "-b", bootstrap, "-C", "-t", TOPIC, "-o", "beginning", "-e", "-q",
               "-f", "  partition %p offset %o: %k = %s\n"), end="")
    print(f"\n$ bin/pylog-topics.sh --bootstrap-server {bootstrap} --describe --topic {TOPIC}")
    print(_run(topics, "--bootstrap-server", bootstrap, "--describe", "--topic", TOPIC), end="")
    print(f"\nThe cluster keeps running: ZooKeeper at {cluster.zk_connect}, brokers at {bootstrap} "
          f"(logs in {STATE}).")
    print(scrape)
    print("Stop it with: ./scripts/quickstart stop")


def secure() -> None:
    """The same three brokers with a SASL_SSL listener (inter-broker too), a generated CA and a SCRAM user."""
    from pylog.security.certs import LocalCA

    if PIDS.exists():
        print("A quickstart cluster is already running; restarting it from scratch.")
        stop(quiet=True)
    shutil.rmtree(STATE, ignore_errors=True)
    ca = LocalCA(STATE / "ca", "pylog-quickstart-ca")
    keystore = ca.issue("broker", "/CN=localhost")
    jaas = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
            'password="admin-secret" user_admin="admin-secret";')
    overrides = {"zookeeper.session.timeout.ms": "18000", "ssl.keystore.type": "PEM",
                 "ssl.keystore.location": str(keystore.path), "ssl.truststore.type": "PEM",
                 "ssl.truststore.location": str(ca.cert), "sasl.enabled.mechanisms": "SCRAM-SHA-512,PLAIN",
                 "inter.broker.listener.name": "SASL_SSL", "sasl.mechanism.inter.broker.protocol": "PLAIN",
                 "listener.name.sasl_ssl.plain.sasl.jaas.config": jaas,
                 # ACLs on, as an operator's secure cluster has them: the brokers and the admin tools log in as
                 # admin (PLAIN), the one super user; alice gets only what pylog-acls.sh grants her below.
                 "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer", "super.users": "User:admin"}
    cluster = LocalCluster(STATE, 3, zk_port=_port(2181), broker_ports={i: _port(9092 + i) for i in range(3)},
                           overrides=overrides, extra_listeners={"SASL_SSL": "SASL_SSL"}, metrics_ports=_metrics_ports())
    cluster.start()
    print(_write_prometheus_config(cluster))
    PIDS.write_text(json.dumps({"zookeeper": cluster.zk_process.pid,
                                **{f"broker-{i}": b.pid for i, b in cluster.brokers.items()}}))
    secure_bs = cluster.bootstrap_on("SASL_SSL")
    admin = STATE / "admin.properties"
    admin.write_text(f"security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nssl.truststore.type=PEM\n"
                     f"ssl.truststore.location={ca.cert}\nsasl.jaas.config={jaas.split(' user_')[0]};\n")
    bin_ = ROOT / "bin"
    print(_run(str(bin_ / "pylog-configs.sh"), "--bootstrap-server", secure_bs, "--command-config", str(admin),
               "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=alice-secret]",
               "--entity-type", "users", "--entity-name", "alice"), end="")
    print(_run(str(bin_ / "pylog-topics.sh"), "--bootstrap-server", secure_bs, "--command-config", str(admin),
               "--create", "--topic", TOPIC, "--partitions", "3", "--replication-factor", "3"), end="")
    acls = [str(bin_ / "pylog-acls.sh"), "--bootstrap-server", secure_bs, "--command-config", str(admin), "--add",
            "--allow-principal", "User:alice", "--topic", TOPIC]
    print(_run(*acls, "--producer"), end="")
    print(_run(*acls, "--consumer", "--group", "quickstart"), end="")
    kcat = ["kcat", "-b", secure_bs, "-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
            "-X", "sasl.username=alice", "-X", "sasl.password=alice-secret", "-X", f"ssl.ca.location={ca.cert}"]
    wait_until(lambda: subprocess.run([*kcat, "-L", "-t", TOPIC], capture_output=True, timeout=60).returncode == 0,
               60, "alice's SCRAM login")
    _run(*kcat, "-P", "-t", TOPIC, "-X", "acks=all", stdin="".join(f"secure hello {i}\n" for i in range(3)))
    print("Produced 3 records over SASL_SSL as alice (SCRAM-SHA-512; ACLs granted with pylog-acls.sh above). "
          "Consume them with:")
    print("  " + " ".join(kcat) + f" -C -t {TOPIC} -o beginning -e")
    print(_run(*kcat, "-C", "-t", TOPIC, "-o", "beginning", "-e", "-q"), end="")
    print(f"\nSASL_SSL listeners: {secure_bs} (brokers talk to each other there too); CA certificate {ca.cert}; "
          f"admin client properties {admin} (the super user: try bin/pylog-acls.sh --list with it).\n"
          f"PLAINTEXT stays on 127.0.0.1 only ({cluster.bootstrap}; ANONYMOUS there has no ACLs). "
          "Stop it with: ./scripts/quickstart stop")


def main() -> None:
    """Dispatch start/secure/stop/status."""
    action = sys.argv[1] if len(sys.argv) > 1 else "start"
    {"start": start, "secure": secure, "stop": stop, "status": status}.get(action, lambda: sys.exit(
        f"usage: scripts/quickstart [start|secure|stop|status] (got {action!r})"))()


if __name__ == "__main__":
    main()
