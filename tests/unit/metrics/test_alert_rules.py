"""config/prometheus/pylog-alerts.yml: Debian's promtool accepts it and its unit tests pass; it names only
documented series (docs/metrics.md) and the alerts the issue asks for."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from support.metrics import documented

DIR = Path(__file__).resolve().parents[3] / "config" / "prometheus"
RULES = DIR / "pylog-alerts.yml"
PROMTOOL = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool missing: ./scripts/setup installs prometheus")


@needs_promtool
def test_promtool_check_rules():
    r = subprocess.run([PROMTOOL, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS: 11 rules found" in r.stdout


@needs_promtool
def test_promtool_unit_tests():
    r = subprocess.run([PROMTOOL, "test", "rules", "pylog-alerts.test.yml"], cwd=DIR, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


def test_rules_name_only_documented_series():
    names = {d.name for d in documented()} | {"up"}
    used = set(re.findall(r"\b((?:kafka|pylog)_[a-z_]+|up)\b", RULES.read_text().split("groups:", 1)[1]))
    assert used - names == set()


def test_every_alert_of_the_issue_is_there():
    alerts = set(re.findall(r"- alert: (\w+)", RULES.read_text()))
    assert {"KafkaUnderReplicatedPartitions", "KafkaUnderMinIsrPartitions", "KafkaOfflinePartitions",
            "KafkaActiveControllerCountNotOne", "KafkaIsrShrinking", "KafkaUncleanLeaderElection",
            "KafkaLogDirOffline", "KafkaDiskUsageHigh", "KafkaConsumerGroupLagGrowing"} <= alerts
