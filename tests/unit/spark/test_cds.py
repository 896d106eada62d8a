"""pylog.spark.cds: the class-data-sharing archive reaches the driver's and executors' JVM options only when it
exists, after whatever options the caller set, and PYLOG_SPARK_CDS="" turns it off."""
from __future__ import annotations

from pylog.spark.cds import java_options, with_archive

DRIVER, EXECUTOR = "spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions"


def test_an_existing_archive_is_appended_to_both_jvms_options(tmp_path, monkeypatch):
    archive = tmp_path / "spark.jsa"
    archive.write_bytes(b"archive")
    monkeypatch.setenv("PYLOG_SPARK_CDS", str(archive))
    conf = with_archive({EXECUTOR: "-XX:+UseSerialGC", "spark.cores.max": "2"})
    assert conf == {EXECUTOR: f"-XX:+UseSerialGC -XX:SharedArchiveFile={archive}",
                    DRIVER: f"-XX:SharedArchiveFile={archive}", "spark.cores.max": "2"}


def test_no_archive_file_or_turned_off_leaves_the_options_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("PYLOG_SPARK_CDS", str(tmp_path / "missing.jsa"))
    assert java_options() == "" and with_archive({EXECUTOR: "-Xss4m"}) == {EXECUTOR: "-Xss4m"}
    (tmp_path / "missing.jsa").write_bytes(b"archive")
    monkeypatch.setenv("PYLOG_SPARK_CDS", "")
    assert java_options() == "" and with_archive({}) == {}
