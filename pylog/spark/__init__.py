"""The PySpark reassignment pipeline and the `pylog` data source for Spark (`pylog.spark.register(spark)`)."""


def register(spark) -> None:
    """Make `format("pylog")` available to a SparkSession: read, readStream, write, writeStream."""
    from pylog.spark.datasource import register as _register  # pyspark is imported only when asked for
    _register(spark)
