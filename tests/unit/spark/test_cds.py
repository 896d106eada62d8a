"""pylog.spark.cds: the class-data-sharing archive reaches the driver's JVM (SPARK_SUBMIT_OPTS, once) and the
executors' Java options the caller set, only when the archive exists; PYLOG_SPARK_CDS="" turns it off."""
from __future__ import annotations

import os

from pylog.spark.cds import archive_for_driver, java_options, with_archive

EXECUTOR = "spark.executor.extraJavaOptions"


def test_an_existing_archive_follows_the_callers_executor_options_and_joins_the_drivers_once(tmp_path, monkeypatch):
    archive = tmp_path / "spark.jsa"
    archive.write_bytes(b"archive")
    monkeypatch.setenv("PYLOG_SPARK_CDS", str(archive))
    conf = with_archive({EXECUTOR: "-XX:+UseSerialGC", "spark.cores.max": "2"})
    assert conf == {EXECUTOR: f"-XX:+UseSerialGC -XX:SharedArchiveFile={archive}", "spark.cores.max": "2"}
    # No executor options of the caller's: none set here, so spark-defaults.conf's stay in force.
    assert with_archive({"spark.cores.max": "2"}) == {"spark.cores.max": "2"}
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1")
    archive_for_driver()
    archive_for_driver()
    assert os.environ["SPARK_SUBMIT_OPTS"] == f"-XX:TieredStopAtLevel=1 -XX:SharedArchiveFile={archive}"


def test_no_archive_file_or_turned_off_leaves_the_options_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("PYLOG_SPARK_CDS", str(tmp_path / "missing.jsa"))
    monkeypatch.delenv("SPARK_SUBMIT_OPTS", raising=False)
    assert java_options() == "" and with_archive({EXECUTOR: "-Xss4m"}) == {EXECUTOR: "-Xss4m"}
    (tmp_path / "missing.jsa").write_bytes(b"archive")
    monkeypatch.setenv("PYLOG_SPARK_CDS", "")
    archive_for_driver()
    assert java_options() == "" and with_archive({EXECUTOR: "-Xss4m"}) == {EXECUTOR: "-Xss4m"}
    assert "SPARK_SUBMIT_OPTS" not in os.environ
