"""The process's one SparkSession, started on first use.

The master URL is configuration: the ``master`` argument, else the ``NORIA_SPARK_MASTER``
environment variable, else ``local[*]`` (every core of this machine). ``spark://host:port`` runs
the work on a standalone cluster. The session binds to the loopback address unless
``SPARK_LOCAL_IP`` says otherwise, has no web UI, uses Arrow for Python <-> JVM transfers, runs
in UTC, and logs only errors.

    from noria_py.spark.session import get_session, stop_session
    spark = get_session()            # starts the JVM the first time (a few seconds)
    ...
    stop_session()                   # a later get_session() may then use another master
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import threading
from typing import TYPE_CHECKING

from ..errors import OperationalError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pyspark.sql import SparkSession

DEFAULT_MASTER = "local[*]"
MASTER_ENV = "NORIA_SPARK_MASTER"
INSTALL_HINT = (
    "the Spark features of noria_py need pyspark, pyarrow and pandas;"
    " install them with: pip install noria_py[spark]  (Java 17 or newer must be on PATH)"
)

# Only ERROR and above reach the console; the JVM reads this before it logs anything.
_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = error
"""

_lock = threading.Lock()
_session: SparkSession | None = None
_master: str | None = None


def require_pyspark():
    """Import and return the ``pyspark`` module, or raise ImportError saying how to install it."""
    try:
        import pyarrow  # noqa: F401
        import pyspark
    except ImportError as e:
        raise ImportError(f"{INSTALL_HINT} ({e})") from e
    return pyspark


def resolve_master(master: str | None = None) -> str:
    """The master URL to use: the argument, else $NORIA_SPARK_MASTER, else ``local[*]``."""
    return master or os.environ.get(MASTER_ENV) or DEFAULT_MASTER


def _log_config_path() -> str:
    digest = hashlib.sha1(_LOG4J2.encode()).hexdigest()[:12]
    path = os.path.join(tempfile.gettempdir(), f"noria_py-log4j2-{os.getuid()}-{digest}.properties")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(_LOG4J2)
        os.replace(tmp, path)
    return path


def get_session(master: str | None = None, config: dict[str, str] | None = None) -> SparkSession:
    """Return the process's SparkSession, starting it on ``master`` if none is running.

    ``config`` adds Spark settings (``{"spark.jars": "/path/driver.jar"}``) to a session started
    here; it has no effect on a session that is already running.

    A session that is already running is reused when ``master`` is None or names the same
    master; asking for a different master is an error (call ``stop_session()`` first), since a
    process can hold only one SparkContext.
    """
    global _session, _master
    require_pyspark()
    from pyspark.sql import SparkSession

    with _lock:
        if _session is not None and _session_alive(_session):
            if master is not None and master != _master:
                raise OperationalError(
                    f"a Spark session on {_master} is already running in this process;"
                    f" stop it (noria_py.spark.session.stop_session()) before using {master}"
                )
            return _session
        active = SparkSession.getActiveSession()
        if active is not None:
            # Someone else (an application, a notebook) started Spark in this process: use it.
            running = active.sparkContext.master
            if master is not None and master != running:
                raise OperationalError(
                    f"a Spark session on {running} is already running in this process;"
                    f" stop it before using {master}"
                )
            _session, _master = active, running
            return active
        url = resolve_master(master)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        # Executors (local or on a cluster sharing this machine) run Python workers with this
        # interpreter, so they find the same pyarrow.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        log_opt = f"-Dlog4j2.configurationFile=file:{_log_config_path()}"
        host = os.environ["SPARK_LOCAL_IP"]
        builder = (
            SparkSession.builder.master(url)
            .appName("noria_py")
            .config("spark.ui.enabled", "false")
            .config("spark.ui.showConsoleProgress", "false")
            .config("spark.driver.host", host)
            .config("spark.driver.bindAddress", host)
            .config("spark.driver.extraJavaOptions", log_opt)
            .config("spark.executor.extraJavaOptions", log_opt)
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.shuffle.partitions", "8")
            .config("spark.sql.files.maxPartitionBytes", "32m")
            .config("spark.pyspark.python", sys.executable)
        )
        for key, value in (config or {}).items():
            builder = builder.config(key, value)
        session = builder.getOrCreate()
        session.sparkContext.setLogLevel("ERROR")
        _session, _master = session, url
        return session


def _session_alive(session) -> bool:
    sc = session.sparkContext
    return getattr(sc, "_jsc", None) is not None


def stop_session() -> None:
    """Stop the process's SparkSession (if one was started or adopted here)."""
    global _session, _master
    with _lock:
        if _session is not None:
            _session.stop()
        _session, _master = None, None


def current_master() -> str | None:
    """The master URL of the running session, or None when no session is running."""
    with _lock:
        if _session is not None and _session_alive(_session):
            return _master
        return None
