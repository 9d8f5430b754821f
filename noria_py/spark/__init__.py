"""Spark for the bulk work: backfilling base tables from large sources.

``backfill.backfill`` reads Parquet, CSV, JDBC or a DataFrame with Spark and hands the rows to
the engine as Arrow batches (``Connection.backfill`` calls it); ``session`` owns the process's
one SparkSession. pyspark is optional (``pip install noria_py[spark]``) and is imported only
when Spark is used, so importing this package costs nothing.
"""
