"""A class-data-sharing archive of Spark's JVM classes, so drivers and executors start in half the time.

A Spark JVM spends most of its first seconds loading and verifying the same ~20,000 classes (Scala, Spark core,
Catalyst, streaming). JDK 17's dynamic AppCDS maps them from an archive made once instead: in the restart bench
(BENCHMARKS.md, issue 26) the driver's part up to its SQL session fell from 6.4 to 3.5 s (load 6) and from 17.8
to 8.1 s (load 14) on the shared two-core machine. `python -m pylog.spark.cds` (scripts/setup runs it) makes the
archive from a short local streaming query through a Python data source and UDF; when it exists, `spark_session`
gives it to the driver's JVM (SPARK_SUBMIT_OPTS, read when the session starts the JVM) and appends it to the
executors' `spark.executor.extraJavaOptions` when the caller sets those (never replacing spark-defaults'). It
belongs to one JDK and one Spark: the file is named by Spark's version, and a JVM that cannot use it says so in
one warning line and starts without it. PYLOG_SPARK_CDS names another file; set to "" it turns the archive off.
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

__all__ = ["archive_path", "java_options", "with_archive", "archive_for_driver", "build"]

_EXECUTOR_OPTIONS = "spark.executor.extraJavaOptions"


def archive_path() -> Path | None:
    """Where the archive is (PYLOG_SPARK_CDS, else the venv's share/pylog); None when turned off."""
    chosen = os.environ.get("PYLOG_SPARK_CDS")
    if chosen is not None:
        return Path(chosen) if chosen else None
    import pyspark
    return Path(sys.prefix) / "share" / "pylog" / f"spark-{pyspark.__version__}.jsa"


def java_options() -> str:
    """The JVM option that maps the archive, or "" when there is none."""
    path = archive_path()
    return f"-XX:SharedArchiveFile={path}" if path is not None and path.is_file() else ""


def with_archive(conf: Mapping[str, str]) -> dict[str, str]:
    """`conf` with the archive's option after the executors' extra Java options, when `conf` sets them.

    Only then: a value set here would replace the one spark-defaults.conf or spark-submit gave."""
    option = java_options()
    merged = dict(conf)
    if option and merged.get(_EXECUTOR_OPTIONS):
        merged[_EXECUTOR_OPTIONS] = f"{merged[_EXECUTOR_OPTIONS]} {option}"
    return merged


def archive_for_driver() -> None:
    """Add the archive's option to SPARK_SUBMIT_OPTS, the options of the driver's JVM when this process starts it."""
    option = java_options()
    current = os.environ.get("SPARK_SUBMIT_OPTS", "")
    if option and option not in current.split():
        os.environ["SPARK_SUBMIT_OPTS"] = f"{current} {option}".strip()


def build(path: Path, timeout: float = 900) -> None:
    """Make the archive at `path`: a warm-up query in a JVM that dumps its classes at exit."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".tmp")
    partial.unlink(missing_ok=True)
    # Classes the JVM cannot archive (signed jars, generated accessors) would each be a warning line.
    dump = f"-XX:ArchiveClassesAtExit={partial} -Xlog:cds=off -Xlog:cds+dynamic=off"
    # A JVM that maps a dynamic archive cannot dump another.
    kept = [o for o in os.environ.get("SPARK_SUBMIT_OPTS", "").split() if not o.startswith("-XX:SharedArchiveFile=")]
    opts = " ".join([*kept, dump])
    env = {**os.environ, "PYLOG_SPARK_CDS": "", "SPARK_SUBMIT_OPTS": opts}
    warm_up = subprocess.Popen([sys.executable, "-m", "pylog.spark.cds", "--warm-up"], env=env,
                               start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        code = warm_up.wait(timeout)
        # The JVM writes the archive as it exits, after the Python driver that started it: wait for its session.
        while _session_alive(warm_up.pid):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the warm-up's JVM did not exit within {timeout:.0f} s")
            time.sleep(0.2)
    finally:
        if warm_up.poll() is None:
            os.killpg(warm_up.pid, signal.SIGKILL)
    if code != 0 or not partial.is_file():
        raise RuntimeError(f"the warm-up query failed (exit {code}); no archive made")
    partial.replace(path)


def _session_alive(sid: int) -> bool:
    """Whether a process of session `sid` is still running (Linux /proc)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z" and int(fields[3]) == sid:
                return True
    return False


def _warm_up() -> None:
    """A local streaming query, Python data source to Python data source through a Python UDF (availableNow)."""
    from pyspark.sql.functions import udf

    from pylog.spark.job import spark_session
    spark = spark_session("local[2]", app_name="pylog-cds-warm-up")
    try:
        spark.dataSource.register(_data_source())
        identity = udf(lambda v: v, "binary")
        with tempfile.TemporaryDirectory() as checkpoint:
            q = (spark.readStream.format("pylog_cds_warm_up").load().select(identity("value").alias("value"))
                 .writeStream.format("pylog_cds_warm_up").option("checkpointLocation", checkpoint)
                 .trigger(availableNow=True).start())
            q.awaitTermination(600)
    finally:
        spark.stop()


def _data_source():
    from pyspark.sql.datasource import (DataSource, DataSourceStreamReader, DataSourceStreamWriter, InputPartition,
                                        WriterCommitMessage)

    class Reader(DataSourceStreamReader):
        def initialOffset(self) -> dict:
            return {"n": 0}

        def latestOffset(self, start: dict, limit) -> dict:
            return {"n": 2}

        def partitions(self, start: dict, end: dict) -> list:
            return [InputPartition(i) for i in range(start["n"], end["n"])]

        def read(self, partition) -> Iterator[tuple]:
            yield (b"%d" % partition.value,)

    class Writer(DataSourceStreamWriter):
        def write(self, iterator) -> WriterCommitMessage:
            for _ in iterator:
                pass
            return WriterCommitMessage()

    class WarmUp(DataSource):
        @classmethod
        def name(cls) -> str:
            return "pylog_cds_warm_up"

        def schema(self) -> str:
            return "value binary"

        def streamReader(self, schema) -> Reader:
            return Reader()

        def streamWriter(self, schema, overwrite: bool) -> Writer:
            return Writer()
    return WarmUp


def main(argv: list[str]) -> int:
    """`python -m pylog.spark.cds [PATH]`: make the archive (at PATH, else where spark_session looks)."""
    if argv == ["--warm-up"]:
        _warm_up()
        return 0
    path = Path(argv[0]) if argv else archive_path()
    if path is None:
        print("pylog-spark-cds: PYLOG_SPARK_CDS is empty (archive turned off): nothing to build", file=sys.stderr)
        return 2
    build(path)
    print(f"pylog-spark-cds: {path} ({path.stat().st_size >> 20} MiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
