"""Fixtures of the Spark tests: one SparkSession on local[2] for the whole run, and vote data.

Starting a session costs several seconds, so every Spark test in this process shares the one
``spark`` fixture; tests that need another master (the standalone cluster) run in a subprocess.
"""

from __future__ import annotations

import pytest

from .data import VOTES_DDL


@pytest.fixture(scope="session")
def spark():
    from noria_py.spark import session

    s = session.get_session("local[2]")
    yield s
    session.stop_session()


@pytest.fixture
def conn():
    import noria_py

    c = noria_py.connect()
    c.execute(VOTES_DDL)
    yield c
    c.close()
