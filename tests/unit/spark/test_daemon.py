"""pylog.spark.daemon preloads the data source before PySpark's daemon forks its workers: that is safe only while
the import starts no thread (PySpark imports pandas and pyarrow after the fork because they do). On Spark's worker
path it imports the installed pyspark, whose bytecode is cached, rather than the zip Spark puts first."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

CHECK = """
import sys, threading
import pylog.spark.daemon, pyspark
print(threading.active_count(), sorted(m for m in ("pandas", "pyarrow", "numpy") if m in sys.modules),
      "pylog.spark.datasource" in sys.modules, "kafka" in sys.modules)
print(pyspark.__file__)
"""


def test_the_daemon_preloads_the_data_source_starts_no_thread_and_imports_the_installed_pyspark():
    # On the path Spark gives its Python workers: pyspark.zip and py4j's zip first (PythonWorkerFactory).
    import pyspark
    lib = Path(pyspark.__file__).parent / "python" / "lib"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*map(str, sorted(lib.glob("*.zip"))),
                                                         os.environ.get("PYTHONPATH", os.getcwd())])}
    done = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["1 [] True True", pyspark.__file__]


def _pyspark(where: Path, version: str) -> None:
    (where / "pyspark").mkdir(parents=True)
    (where / "pyspark" / "__init__.py").write_text("")
    (where / "pyspark" / "version.py").write_text(f'__version__ = "{version}"\n')


def test_the_zip_stays_first_unless_the_installed_pyspark_has_its_version(tmp_path):
    from pylog.spark.daemon import prefer_installed_pyspark
    zipped = tmp_path / "lib" / "pyspark.zip"
    zipped.parent.mkdir()
    with zipfile.ZipFile(zipped, "w") as z:
        z.writestr("pyspark/version.py", '__version__ = "4.3.0"\n')
    same, other = tmp_path / "same", tmp_path / "other"
    _pyspark(same, "4.3.0")
    _pyspark(other, "4.2.0")
    assert prefer_installed_pyspark([str(zipped), "x", str(same)]) == ["x", str(same), str(zipped)]
    assert prefer_installed_pyspark([str(zipped), str(other)]) == [str(zipped), str(other)]
    assert prefer_installed_pyspark([str(zipped), str(tmp_path / "none")]) == [str(zipped), str(tmp_path / "none")]
