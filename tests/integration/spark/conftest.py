"""Spark JVMs of these tests start with the quick JIT: they live for seconds of small jobs, not hours.

C1 alone (TieredStopAtLevel=1) skips the C2 compilations a short run never pays back, and the serial
collector skips GC threads: together about a third off the first jobs of a session on two cores. The
driver JVM is started once per pytest process, by the first session, so the options are set for all
tests here (SPARK_SUBMIT_OPTS, read by spark-submit); the standalone cluster passes them on to its
Master, Worker and executors (support.spark).
"""
from __future__ import annotations

import os
from typing import Iterator

import pytest

from support.spark import TEST_JVM_OPTS


@pytest.fixture(scope="session", autouse=True)
def _quick_jit_spark_driver() -> Iterator[None]:
    """SPARK_SUBMIT_OPTS with TEST_JVM_OPTS while the Spark tests run (restored after the session)."""
    before = os.environ.get("SPARK_SUBMIT_OPTS")
    os.environ["SPARK_SUBMIT_OPTS"] = f"{before} {TEST_JVM_OPTS}" if before else TEST_JVM_OPTS
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SPARK_SUBMIT_OPTS", None)
        else:
            os.environ["SPARK_SUBMIT_OPTS"] = before
