"""Spark for the bulk work: backfilling base tables and computing bulk replays.

``backfill.backfill`` reads Parquet, CSV, JDBC or a DataFrame with Spark and hands the rows to
the engine as Arrow batches (``Connection.backfill`` calls it); ``replay`` computes the initial
state of a big fully materialized node in Spark from a Parquet snapshot of its base tables
(``Graph.install`` calls it); ``session`` owns the process's one SparkSession. pyspark is
optional (``pip install noria_py[spark]``) and is imported only when Spark is used, so importing
this package costs nothing.
"""
