"""pylog.spark.daemon preloads the data source before PySpark's daemon forks its workers: that is safe only while
the import starts no thread (PySpark imports pandas and pyarrow after the fork because they do)."""
from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys, threading
import pylog.spark.daemon
print(threading.active_count(), sorted(m for m in ("pandas", "pyarrow", "numpy") if m in sys.modules),
      "pylog.spark.datasource" in sys.modules, "kafka" in sys.modules)
"""


def test_the_daemon_preloads_the_data_source_and_starts_no_thread():
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "1 [] True True"

