"""cruisecontrol.properties: Cruise Control's names and defaults; unknown keys and bad values refused in one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from pylog.balancer.config import ConfigError, load, parse

REPO = Path(__file__).resolve().parents[3]


def test_the_shipped_file_loads_with_cruise_controls_defaults():
    cfg = load(REPO / "config" / "cruisecontrol.properties")
    assert cfg["webserver.http.port"] == 9090 and cfg.url_prefix == "/kafkacruisecontrol"
    assert cfg["num.concurrent.partition.movements.per.broker"] == 5
    assert cfg["max.num.cluster.movements"] == 1250 and cfg["default.replication.throttle"] is None
    assert cfg["broker.failure.alert.threshold.ms"] == 900000 and cfg.self_healing_for_broker_failure() is False


@pytest.mark.parametrize("props,message", [
    ({"bootstrap.servers": "h:1", "sample.store.class": "x"}, "unknown key 'sample.store.class'"),
    ({"bootstrap.servers": "h:1", "webserver.http.port": "70000"},
     "invalid value '70000' for webserver.http.port: must be between 0 and 65535"),
    ({"bootstrap.servers": "h:1", "self.healing.enabled": "yes"},
     "invalid value 'yes' for self.healing.enabled: must be true or false"),
    ({"bootstrap.servers": "h:1", "replica.count.balance.threshold": "0.9"},
     "replica.count.balance.threshold: must be >= 1.0"),
    ({"bootstrap.servers": "h:1", "default.replication.throttle": "fast"},
     "invalid value 'fast' for default.replication.throttle: not a valid value"),
    ({"webserver.http.port": "9090"}, "bootstrap.servers is required"),
    ({"bootstrap.servers": "h:1", "broker.failure.alert.threshold.ms": "10", "broker.failure.self.healing.threshold.ms": "5"},
     "broker.failure.self.healing.threshold.ms must be >= broker.failure.alert.threshold.ms"),
])
def test_bad_files_are_refused_naming_the_key(props, message):
    with pytest.raises(ConfigError) as exc:
        parse(props)
    assert message in str(exc.value) and "\n" not in str(exc.value)


def test_the_start_script_refuses_a_bad_file_with_one_line(tmp_path):
    bad = tmp_path / "cc.properties"
    bad.write_text("bootstrap.servers=127.0.0.1:1\nwebserver.http.port=http\n")
    r = subprocess.run([str(REPO / "bin" / "pylog-cruise-control-start.sh"), str(bad)], capture_output=True,
                       text=True, timeout=60)
    assert (r.returncode, r.stdout) == (1, "")
    assert r.stderr == ("Error: cc.properties: invalid value 'http' for webserver.http.port: not a valid value\n")


def test_the_shipped_file_lists_every_key():
    from pylog.balancer.config import KEYS
    text = (REPO / "config" / "cruisecontrol.properties").read_text()
    assert [k for k in KEYS if k not in text] == []
