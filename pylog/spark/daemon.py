"""PySpark's worker daemon (`spark.python.daemon.module`) with the `pylog` data source imported once, before it forks.

Every Python worker Spark starts for the data source (the driver's planning and stream runners, each task's reader
and writer) would import kafka-python and pylog.spark itself: about a second each on a loaded two-core machine, and
a restarted query starts a dozen of them. Forked from this daemon they inherit both. Only modules that start no
thread are imported here: PySpark imports pandas and pyarrow after the fork for that reason.
"""
from __future__ import annotations

import kafka  # noqa: F401  (preloaded for the forked workers)
from pyspark import daemon

import pylog.spark.datasource  # noqa: F401  (preloaded for the forked workers)

if __name__ == "__main__":
    daemon.manager()
