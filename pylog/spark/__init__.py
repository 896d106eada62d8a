"""The PySpark reassignment pipeline and the `pylog` data source for Spark."""
