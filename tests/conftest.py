"""Shared pytest configuration for the test suite."""

from __future__ import annotations

from hypothesis import HealthCheck, settings

# ---------------------------------------------------------------------------
# Hypothesis profiles
#
#   ci       the default: hypothesis' usual 100 examples per test, derandomized (each test's
#            examples follow from its name), so a run of the suite that passes here passes in
#            CI, and a failure there replays here.
#   explore  the same count from fresh random seeds: new examples on every run, for hunting
#            bugs locally (`pytest --hypothesis-profile=explore`, with `--hypothesis-seed=N` to replay a seed).
#   long     20 times as many random examples (lift pytest-timeout's 600 s limit):
#                pytest tests/differential --hypothesis-profile=long --timeout=0
#
# A test that needs more examples than others scales the profile's count (the differential
# tests run 4 times max_examples per query family) instead of fixing a number.
# ---------------------------------------------------------------------------
_COMMON = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "print_blob": True,
}
settings.register_profile("ci", max_examples=100, derandomize=True, **_COMMON)
settings.register_profile("explore", max_examples=100, **_COMMON)
settings.register_profile("long", max_examples=2000, **_COMMON)
settings.load_profile("ci")
# ---------------------------------------------------------------------------


# ---------------------------------------------------------------------------
# The oracle: a real MariaDB with its default collation (utf8mb4_general_ci).
#
# Started once per test session on a free loopback port with a throw-away datadir. Set
# NORIA_TEST_MARIADB_PORT to use a server that is already running (root, no password).
# ---------------------------------------------------------------------------
import os  # noqa: E402

import pytest  # noqa: E402


class MariaDBOracle:
    """A connection factory for the oracle, with one shared autocommit connection."""

    def __init__(self, port: int):
        self.port = port
        self._conn = None

    def connect(self, database: str | None = "oracle", **kw):
        import pymysql

        return pymysql.connect(
            host="127.0.0.1", port=self.port, user="root", database=database, autocommit=True, **kw
        )

    def database(self, name: str, options: str = "", **kw):
        """A new connection to database ``name``, created first when missing (``options``:
        its CREATE DATABASE options, e.g. ``CHARACTER SET utf8mb4``): a test module's own."""
        c = self.connect(database=None)
        with c.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS {name} {options}".rstrip())
        c.close()
        return self.connect(database=name, **kw)

    @property
    def conn(self):
        if self._conn is None:
            self._conn = self.connect()
        return self._conn

    def query(self, sql: str, params=None):
        """(rows, description) of one statement on the shared connection."""
        with self.conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall(), cur.description

    def scalar(self, sql: str, params=None):
        rows, _ = self.query(sql, params)
        return rows[0][0]


@pytest.fixture(scope="session")
def mariadb_oracle():
    port = os.environ.get("NORIA_TEST_MARIADB_PORT")
    server = None
    if not port:
        from noria_py.workloads.lobsters import backends

        if not backends.mariadb_available():
            pytest.fail("mariadbd not installed (apt-get install -y mariadb-server mariadb-client)")
        server = backends.MariaDBServer(buffer_pool="64M", collation="utf8mb4_general_ci").start()
        port = server.port
    oracle = MariaDBOracle(int(port))
    c = oracle.connect(database=None)
    with c.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS oracle")
    c.close()
    try:
        yield oracle
    finally:
        if oracle._conn is not None:
            oracle._conn.close()
        if server is not None:
            server.stop()


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    """A child process still running when every test and fixture is done (a server or worker a
    failed test never stopped) would keep this interpreter from exiting: multiprocessing joins
    its children at exit. End each one (they are this run's own) and say which they were."""
    import psutil

    left = []
    for child in psutil.Process().children(recursive=True):
        try:
            line = " ".join(child.cmdline())
            if "multiprocessing.resource_tracker" in line or "pyspark" in line:
                continue  # multiprocessing's helper and Spark's JVM end with this interpreter
            left.append(child)
            print(f"\nending a process a test left running: {child.pid} {child.cmdline()[:4]}")
            child.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(left, timeout=10)
