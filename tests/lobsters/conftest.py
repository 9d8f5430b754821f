"""Fixtures for the Lobsters workload tests: a private mariadbd when Debian's server is installed."""

from __future__ import annotations

import pytest

from noria_py.workloads.lobsters import backends


@pytest.fixture(scope="session")
def mariadb():
    """A running MariaDBServer (skips when mariadb-server is not installed; CI installs it)."""
    if not backends.mariadb_available():
        pytest.skip("mariadbd not installed (apt-get install -y mariadb-server mariadb-client)")
    server = backends.MariaDBServer(buffer_pool="128M").start()
    try:
        yield server
    finally:
        server.stop()
