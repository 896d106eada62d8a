"""PySpark's worker daemon (`spark.python.daemon.module`) with the `pylog` data source imported once, before it forks.

Every Python worker Spark starts on an executor for a task (the source's reader, the UDFs, the sink's writer) would
import kafka-python and pylog.spark itself: about a second each on a loaded two-core machine, and a restarted query
starts a dozen of them. Forked from this daemon they inherit both. Only modules that start no thread are imported
here: PySpark imports pandas and pyarrow after the fork for that reason. (The driver's planner processes start from
PySpark's own daemon: Spark does not apply the setting to them.)

Spark puts its `pyspark.zip` first on the workers' path, and Python compiles a zip's modules from source in every
process that imports them (nothing caches the bytecode): 0.45 s more to start this daemon at load 4, and each
worker pays again for what it imports after the fork. When the same pyspark is installed (pip's pyspark ships the
zip beside itself), the installed one, whose bytecode is cached, is imported instead.
"""
from __future__ import annotations

import sys
import zipfile
from importlib.machinery import PathFinder
from pathlib import Path


def prefer_installed_pyspark(path: list[str]) -> list[str]:
    """`path` with Spark's pyspark.zip moved behind an installed pyspark of the same version, if there is one."""
    zips = [entry for entry in path if Path(entry).name == "pyspark.zip"]
    rest = [entry for entry in path if entry not in zips]
    installed = PathFinder.find_spec("pyspark", rest) if zips else None
    if installed is None or installed.origin is None:
        return path
    try:
        version = (Path(installed.origin).parent / "version.py").read_bytes()
        same = all(zipfile.ZipFile(z).read("pyspark/version.py") == version for z in zips)
    except (OSError, KeyError, zipfile.BadZipFile):
        return path
    return rest + zips if same else path


sys.path[:] = prefer_installed_pyspark(sys.path)

import kafka  # noqa: E402,F401  (preloaded for the forked workers)
from pyspark import daemon  # noqa: E402

import pylog.spark.datasource  # noqa: E402,F401  (preloaded for the forked workers)

if __name__ == "__main__":
    daemon.manager()
