"""``noria-py shell --connect``: the shell on a running server."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.wire


def test_shell_connects_to_the_server(server):
    url = f"mysql://tester@{server.host}:{server.port}/noria"
    script = (
        "DROP TABLE IF EXISTS sh_t;\n"
        "CREATE TABLE sh_t (id INT PRIMARY KEY, name VARCHAR(10));\n"
        "INSERT INTO sh_t VALUES (1, 'x');\n"
        "EXPLAIN SELECT name FROM sh_t WHERE id = 1;\n"
        "SELECT name FROM sh_t WHERE id = 1;\n"
        "SHOW CACHES\\G\n"
        "DROP TABLE sh_t;\n"
    )
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    p = subprocess.run(
        [sys.executable, "-m", "noria_py.cli", "shell", "--connect", url],
        input=script,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert p.returncode == 0, p.stderr
    assert "reader key (id)" in p.stdout
    assert "| name |\n+------+\n| x    |" in p.stdout
    assert "query: SELECT name FROM sh_t WHERE id = ?" in p.stdout
