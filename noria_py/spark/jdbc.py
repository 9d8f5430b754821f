"""JDBC sources on MySQL and MariaDB: the driver, the URL and how their values are read.

    conn.backfill("votes", "jdbc:mariadb://127.0.0.1:3306/app",
                  options={"dbtable": "votes", "user": "app", "password": "secret"})

What happens to a ``jdbc:mysql:`` or ``jdbc:mariadb:`` source before Spark reads it:

1. The driver. Unless the ``driver`` option names one, a jar the user gave (``spark.jars``) that
   holds MariaDB's or MySQL's driver is used; otherwise MariaDB Connector/J from the system
   (Debian's ``libmariadb-java``: /usr/share/java/mariadb-java-client.jar) is added to the
   session, and the ``driver`` option names its class. A session started here gets the jar in
   ``spark.jars``; a session already running gets it with ``ADD JAR`` when its classes cannot
   see the driver (that makes it visible to the calling thread, which is the one that reads).
2. The dialect. Spark quotes column names with its MySQL dialect (backticks) only for URLs that
   begin ``jdbc:mysql``; any other URL gets ANSI double quotes, which MySQL and MariaDB read as
   strings (``SELECT "id" FROM t`` selects the text 'id'). So a ``jdbc:mariadb:`` URL is read as
   ``jdbc:mysql:`` and MariaDB's driver is told to accept that scheme (``permitMysqlScheme``,
   which Connector/J 3 requires and 2.x ignores). The URL travels with the job, so executors on
   a cluster pick the same dialect, which registering one in the driver's JVM would not do.
3. Exact values. TINYINT(1) is read as a number (``tinyInt1isBit=false``), not a boolean, and
   YEAR as a number (``yearIsDateType=false``). DATE, DATETIME, TIMESTAMP and TIME columns are
   read as the server's text (the source becomes ``SELECT ..., CAST(d AS CHAR) AS d FROM
   <dbtable or (query)>``) and cast by the loader like CSV text: read as Java dates, even with
   getString, they pass through the JVM's time zone, which moves a DATETIME that falls in a
   daylight-saving gap, and TIME beyond 24 hours does not fit at all.
"""

from __future__ import annotations

import contextlib
import glob
import os
import zipfile
from typing import Any

from .. import errors as E
from ..mysql_client import SourceColumn, columns_query, source_column
from .session import get_session

MARIADB_DRIVER = "org.mariadb.jdbc.Driver"
MYSQL_DRIVERS = ("com.mysql.cj.jdbc.Driver", "com.mysql.jdbc.Driver")
# Where distributions put MariaDB Connector/J (Debian and Ubuntu: libmariadb-java).
SYSTEM_JARS = (
    "/usr/share/java/mariadb-java-client.jar",
    "/usr/share/java/mariadb-java-client-*.jar",
    "/usr/local/share/java/mariadb-java-client*.jar",
)
PASSWORD_ENV = "NORIA_JDBC_PASSWORD"
# Connection properties both Connector/Js know, set unless the user sets them.
DEFAULT_PROPERTIES = {"tinyInt1isBit": "false", "yearIsDateType": "false"}
_SCHEMES = ("jdbc:mysql:", "jdbc:mariadb:")
_INSTALL = (
    "install MariaDB Connector/J (apt-get install libmariadb-java) or give the driver's jar"
    " with --jar PATH (spark_config={'spark.jars': PATH} in Python)"
)


def is_mysql(url: str) -> bool:
    """Whether ``url`` is a MySQL or MariaDB JDBC URL."""
    return url.lower().startswith(_SCHEMES)


def _key(opts: dict[str, str], name: str) -> str | None:
    """The key of option ``name`` in ``opts`` (Spark's option names are case-insensitive)."""
    return next((k for k in opts if k.lower() == name.lower()), None)


def _split_jars(value: str | None) -> list[str]:
    return [j.strip() for j in (value or "").split(",") if j.strip()]


def jar_drivers(jar: str) -> set[str] | None:
    """The JDBC driver classes a local jar declares (META-INF/services), None if unreadable."""
    if "://" in jar and not jar.startswith("file:"):
        return None  # on a cluster's file system: Spark fetches it, we cannot look inside
    path = jar.removeprefix("file://").removeprefix("file:")
    try:
        with zipfile.ZipFile(path) as z:
            try:
                text = z.read("META-INF/services/java.sql.Driver").decode()
            except KeyError:
                return set()
    except (OSError, zipfile.BadZipFile):
        return None
    return {ln.split("#")[0].strip() for ln in text.splitlines()} - {""}


def system_jar() -> str | None:
    """MariaDB Connector/J installed on this machine, if any."""
    for pattern in SYSTEM_JARS:
        for path in sorted(glob.glob(pattern)):
            if jar_drivers(path):
                return path
    return None


def _pick_driver(jars: list[str]) -> tuple[str | None, bool]:
    """(driver class found in ``jars``, whether some jar could not be inspected)."""
    found: set[str] = set()
    unknown = False
    for jar in jars:
        drivers = jar_drivers(jar)
        if drivers is None:
            unknown = True
        else:
            found |= drivers
    for name in (MARIADB_DRIVER, *MYSQL_DRIVERS):
        if name in found:
            return name, unknown
    return None, unknown


def _mysql_url(url: str, driver: str | None) -> str:
    """``url`` with the scheme Spark's MySQL dialect answers to (see the module docs)."""
    if url.lower().startswith("jdbc:mariadb:"):
        url = "jdbc:mysql:" + url[len("jdbc:mariadb:") :]
    if driver in (None, MARIADB_DRIVER) and "permitmysqlscheme" not in url.lower():
        url += ("&" if "?" in url else "?") + "permitMysqlScheme"
    return url


def session_for(opts: dict[str, str], master: str | None, config: dict[str, str] | None) -> Any:
    """The Spark session to read JDBC source ``opts`` with; a MySQL or MariaDB source gets its
    driver (on the session and in ``opts``), URL and properties as the module docs say."""
    url = opts["url"]
    if not is_mysql(url):
        return get_session(master, config)
    from pyspark import SparkContext

    config = dict(config or {})
    running = SparkContext._active_spark_context is not None
    given = _split_jars(config.get("spark.jars"))
    driver_key = _key(opts, "driver")
    driver = opts[driver_key] if driver_key else None
    found, unknown = _pick_driver(given + (_session_jars() if running else []))
    if driver is None:
        driver = found if found or unknown else MARIADB_DRIVER
        if driver is not None:
            opts["driver"] = driver
    spark = get_session(master, config) if running else None
    ours = None
    if (
        driver == MARIADB_DRIVER
        and found != MARIADB_DRIVER
        and not unknown
        and not (spark is not None and _visible(spark, driver))
    ):
        # No jar given holds it (the driver option may name it all the same): the system's.
        ours = system_jar()
        if ours is None:
            raise E.OperationalError(f"no JDBC driver for {url.split('?')[0]}: {_INSTALL}")
    wanted = given + ([ours] if ours else [])
    if ours and not running:
        config["spark.jars"] = ",".join(wanted)
    if spark is None:
        spark = get_session(master, config)
    if running and driver is not None and not _visible(spark, driver):
        for jar in wanted:
            spark.sql(f"ADD JAR '{jar}'")
        if not _visible(spark, driver):
            raise E.OperationalError(
                f"the running Spark session cannot load the JDBC driver {driver}: start it with"
                " the driver's jar in spark.jars, or " + _INSTALL
            )
    opts["url"] = _mysql_url(url, driver)
    for name, value in DEFAULT_PROPERTIES.items():
        if _key(opts, name) is None and name.lower() not in url.lower():
            opts[name] = value
    return spark


def _session_jars() -> list[str]:
    from pyspark import SparkContext

    sc = SparkContext._active_spark_context
    if sc is None:
        return []
    return _split_jars(sc.getConf().get("spark.jars", ""))


def _visible(spark, driver: str) -> bool:
    """Whether the calling thread's JVM classes (those Spark loads JDBC drivers with) see ``driver``."""
    jvm = spark.sparkContext._jvm
    thread = jvm.java.lang.Thread.currentThread()
    loader = thread.getContextClassLoader()
    try:
        jvm.java.lang.Class.forName(driver, False, loader)
    except Exception:  # py4j's Py4JJavaError: ClassNotFoundException
        return False
    return True


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def read(spark, opts: dict[str, str]):
    """The DataFrame over JDBC source ``opts``; a MySQL source's date and time columns as text."""
    from pyspark.sql import types as T

    if is_mysql(opts["url"]):
        opts = dict(opts)
        opts.update(partitioning(spark, opts))
    df = spark.read.format("jdbc").options(**opts).load()
    if not is_mysql(opts["url"]):
        return df
    temporal = (T.DateType, T.TimestampType, T.TimestampNTZType)
    as_text = {f.name for f in df.schema.fields if isinstance(f.dataType, temporal)}
    if not as_text:
        return df
    # The server writes the text: Connector/J's getString on a DATETIME still goes through a
    # java.sql.Timestamp in the JVM's zone, so the conversion must happen in the SELECT.
    items = ", ".join(
        f"CAST({_quote(n)} AS CHAR) AS {_quote(n)}" if n in as_text else _quote(n)
        for n in df.columns
    )
    opts = dict(opts)
    query_key = _key(opts, "query")
    if query_key is not None:
        inner = f"({opts.pop(query_key)}) AS __noria_query"
    else:
        inner = opts.pop(_key(opts, "dbtable"))
    opts["dbtable"] = f"(SELECT {items} FROM {inner}) AS __noria_source"
    return spark.read.format("jdbc").options(**opts).load()


def table_columns(spark, opts: dict[str, str]) -> dict[str, SourceColumn]:
    """The columns of the MySQL or MariaDB table a JDBC source's ``dbtable`` names, by name
    (empty for another database, a ``query`` or a subquery)."""
    key = _key(opts, "dbtable")
    if not is_mysql(opts["url"]) or key is None:
        return {}
    query = columns_query(opts[key])
    if query is None:
        return {}
    asked = {k: v for k, v in opts.items() if k.lower() not in ("dbtable", "query")}
    asked["query"] = query
    out = {}
    for row in spark.read.format("jdbc").options(**asked).load().collect():
        out[row["name"]] = source_column(row["kind"], row["type"], row["nullable"], row["pk"])
    return out


# The partitioning options of Spark's JDBC reader (lower case)
_PARTITION_OPTIONS = ("partitioncolumn", "lowerbound", "upperbound", "numpartitions")


def partitioning(spark, opts: dict[str, str]) -> dict[str, str]:
    """Spark's options to read a MySQL or MariaDB table in ``numPartitions`` parallel ranges
    of its integer primary key (one query and one connection each), when the user asked for
    that many partitions without naming a column or bounds: the key and its MIN and MAX are
    found here. Without ``numPartitions`` (or with 1) the table is read by one query, which
    sees one consistent snapshot; each range query sees its own, so a table written during a
    partitioned read may be seen at different moments by different ranges (a row moved
    between ranges read twice or not at all), which is why it is asked for, never chosen.
    Empty when it does not apply."""
    given = {k.lower(): v for k, v in opts.items() if k.lower() in _PARTITION_OPTIONS}
    if set(given) != {"numpartitions"}:
        return {}  # none asked for, or the user's own column and bounds
    try:
        parts = int(given["numpartitions"])
    except ValueError:
        raise E.ProgrammingError(
            f"numPartitions must be a number, not {given['numpartitions']!r}", 1210, "HY000"
        ) from None
    if parts <= 1:
        return {}
    columns = table_columns(spark, opts)
    keyed = [(name, c) for name, c in columns.items() if c.key]
    if len(keyed) != 1:
        return {}
    name, column = keyed[0]
    if column.kind not in ("tinyint", "smallint", "mediumint", "int", "integer", "bigint"):
        return {}
    table = opts[_key(opts, "dbtable")]
    asked = {k: v for k, v in opts.items() if k.lower() not in ("dbtable", "query")}
    k = _quote(name)
    # CAST: an unsigned key's MIN and MAX as numbers Spark reads back exactly
    asked["query"] = (
        f"SELECT CAST(MIN({k}) AS CHAR) AS lo, CAST(MAX({k}) AS CHAR) AS hi, COUNT(*) AS n"
        f" FROM {table}"
    )
    row = spark.read.format("jdbc").options(**asked).load().collect()[0]
    if row["lo"] is None:
        return {}
    lo, hi = int(row["lo"]), int(row["hi"])
    if hi - lo < parts or hi - lo >= 2**62:  # Spark's bounds and strides are 64-bit
        return {}
    return {
        "partitionColumn": name,
        "lowerBound": str(lo),
        "upperBound": str(hi + 1),
        "numPartitions": str(parts),
    }


def row_count(spark, opts: dict[str, str]) -> int | None:
    """How many rows the source ``opts`` names, counted by the database (``SELECT COUNT(*)``
    over its ``dbtable`` or ``query``), or None when it cannot tell. A query of its own, so a
    table written meanwhile may hold another number by the time the rows are read: it only
    sizes the transfer, never decides what is loaded."""
    query_key = _key(opts, "query")
    table_key = _key(opts, "dbtable")
    if query_key is not None:
        inner = f"({opts[query_key]}) AS __noria_query"
    elif table_key is not None:
        inner = opts[table_key]
    else:
        return None
    asked = {
        k: v
        for k, v in opts.items()
        if k.lower() not in ("dbtable", "query", "customschema", *_PARTITION_OPTIONS)
    }
    asked["query"] = f"SELECT COUNT(*) AS n FROM {inner}"
    with contextlib.suppress(Exception):
        rows = spark.read.format("jdbc").options(**asked).load().collect()
        return int(rows[0][0])
    return None


def explain(error: BaseException) -> str | None:
    """The database's own words for a failed JDBC read (the innermost java.sql.SQLException's
    message, "Access denied for user ..."), or None when the failure is not the database's."""
    java = getattr(error, "java_exception", None) or getattr(error, "_origin", None)
    message = None
    with contextlib.suppress(Exception):
        seen = 0
        while java is not None and seen < 20:
            name = java.getClass().getName()
            if name.startswith("java.sql.") or ".jdbc." in name:
                message = java.getMessage() or message
            java = java.getCause()
            seen += 1
    if not message:
        return None
    line = message.strip().splitlines()[0]
    if line.startswith("(conn="):  # MariaDB Connector/J prefixes its connection id
        line = line.partition(")")[2].strip() or line
    return line


def password_from_env() -> str | None:
    """The password in $NORIA_JDBC_PASSWORD (for ``noria-py load --jdbc`` without --password)."""
    return os.environ.get(PASSWORD_ENV)
