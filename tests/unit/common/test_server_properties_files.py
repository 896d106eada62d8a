"""The committed server.properties.example is the registry's rendering; config/server.properties works."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pylog.common import properties
from pylog.common.config import BROKER_CONFIGS, NO_EFFECT, BrokerConfig
from pylog.common.example import render_example

ROOT = Path(__file__).resolve().parents[3]


def test_example_file_equals_generated_text() -> None:
    committed = (ROOT / "server.properties.example").read_text()
    assert committed == render_example(), (
        "server.properties.example is stale: run `python -m pylog.common.config --example > server.properties.example`")


def test_cli_prints_the_example() -> None:
    out = subprocess.run([sys.executable, "-m", "pylog.common.config", "--example"], capture_output=True, text=True,
                         check=True, cwd=ROOT, timeout=60)
    assert out.stdout == render_example()


def test_every_key_is_documented_once_commented_out_with_its_default() -> None:
    text = render_example()
    assert properties.loads(text) == {}                 # everything is commented out
    for name, key in BROKER_CONFIGS.items():
        lines = re.findall(rf"^#{re.escape(name)}=(.*)$", text, flags=re.M)
        assert lines == [key.default_string or ""], name
    assert "#num.partitions=1\n" in text
    prose = text.replace("\n# ", " ")                   # undo the line wrapping of comments
    assert prose.count(NO_EFFECT) == sum(1 for k in BROKER_CONFIGS.values() if not k.used)


def test_uncommenting_every_default_line_gives_a_valid_config() -> None:
    text = "\n".join(line[1:] for line in render_example().splitlines()
                     if re.match(r"^#[a-z][\w.]*=.+$", line))
    cfg = BrokerConfig.from_props({**properties.loads(text), "zookeeper.connect": "127.0.0.1:2181"})
    assert cfg.warnings == []
    for name, key in BROKER_CONFIGS.items():
        if name != "zookeeper.connect":
            assert cfg.get(name) == key.default, name


def test_shipped_single_broker_config() -> None:
    props = properties.load(ROOT / "config" / "server.properties")
    cfg = BrokerConfig.from_props(props)
    assert cfg.warnings == [] and cfg.ignored == []
    assert props == {
        "broker.id": "0", "listeners": "PLAINTEXT://127.0.0.1:9092", "num.network.threads": "3",
        "num.io.threads": "8", "socket.send.buffer.bytes": "102400", "socket.receive.buffer.bytes": "102400",
        "socket.request.max.bytes": "104857600", "log.dirs": "/tmp/pylog-logs", "num.partitions": "1",
        "num.recovery.threads.per.data.dir": "1", "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1", "transaction.state.log.min.isr": "1",
        "log.retention.hours": "168", "log.retention.check.interval.ms": "300000",
        "zookeeper.connect": "127.0.0.1:2181", "zookeeper.connection.timeout.ms": "18000",
        "group.initial.rebalance.delay.ms": "0",
    }
    assert cfg.broker_id == 0 and cfg.log_dirs == ["/tmp/pylog-logs"]
