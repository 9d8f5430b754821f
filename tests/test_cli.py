"""The `noria-py` command line: explain (table and --dot) and the subcommands' help."""

from __future__ import annotations

import subprocess
import sys


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "noria_py.cli", *args], capture_output=True, text=True, timeout=120
    )


SETUP = ["--setup", "CREATE TABLE t (id INT PRIMARY KEY, a INT)"]
Q = "SELECT a, COUNT(*) FROM t WHERE id = ? GROUP BY a"


def test_explain_prints_the_dataflow():
    p = run("explain", *SETUP, Q)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split()[:5] == ["node", "operator", "description", "parents", "materialization"]
    kinds = [line.split()[1] for line in lines[1:]]
    assert kinds == ["base", "project", "aggregate", "project", "reader"]
    assert "partial" in p.stdout


def test_explain_dot_renders_the_graph():
    p = run("explain", "--dot", *SETUP, Q)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("digraph noria {")
    assert p.stdout.count("->") == 4


def test_explain_reports_errors():
    p = run("explain", *SETUP, "SELECT nope FROM t")
    assert p.returncode == 1
    assert "1054" in p.stderr


def test_every_subcommand_has_help():
    for sub in ("serve", "load", "lobsters", "explain"):
        p = run(sub, "--help")
        assert p.returncode == 0, (sub, p.stderr)
        assert "usage:" in p.stdout
