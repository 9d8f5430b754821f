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
    for sub in ("serve", "load", "lobsters", "explain", "shell"):
        p = run(sub, "--help")
        assert p.returncode == 0, (sub, p.stderr)
        assert "usage:" in p.stdout


def test_version():
    from noria_py import __version__

    p = run("--version")
    assert p.returncode == 0
    assert p.stdout.strip() == f"noria-py {__version__}"


SUBCOMMANDS = ("shell", "explain", "serve", "load", "lobsters")


def test_subcommand_help_is_one_capitalized_sentence():
    from noria_py.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert set(helps) == set(SUBCOMMANDS)
    for name, text in helps.items():
        assert text[0].isupper() and text.endswith(".") and text.count(". ") == 0, (name, text)
        assert sub.choices[name].description == text, name
    shown = " ".join(run("--help").stdout.split())
    for name, text in helps.items():
        assert f"{name} {text}" in shown


def one_error_line(p: subprocess.CompletedProcess, code: int | None = None) -> str:
    assert p.returncode != 0
    if code is not None:
        assert p.returncode == code
    assert "Traceback" not in p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1, p.stderr
    return lines[0]


def test_a_missing_database_file_is_an_error_without_create(tmp_path):
    typo = str(tmp_path / "typo.db")
    for argv in (
        ("explain", "--data", typo, "SELECT 1"),
        ("shell", "--data", typo, "-e", "SELECT 1"),
        ("serve", "--data", typo, "--port", "0"),
        ("load", "t", "--data", typo, "--csv", str(tmp_path / "x.csv")),
    ):
        line = one_error_line(run(*argv), 1 if argv[0] != "load" else None)
        assert "no database file" in line and typo in line, argv
    assert list(tmp_path.iterdir()) == []
    line = one_error_line(run("explain", "--data", str(tmp_path), "SELECT 1"))
    assert "is a directory" in line


def test_create_makes_the_database_file(tmp_path):
    path = tmp_path / "new.db"
    p = run("explain", "--data", str(path), "--create", *SETUP, Q)
    assert p.returncode == 0, p.stderr
    assert path.exists()
    p = run("explain", "--data", str(path), Q)  # it exists now, with its table
    assert p.returncode == 0, p.stderr


def test_bad_options_are_one_line():
    line = one_error_line(run("explain"), 2)
    assert line.startswith("noria-py explain: error:") and "--help" in line
    line = one_error_line(run("shell", "--nope"), 2)
    assert "unrecognized arguments: --nope" in line
    line = one_error_line(run("serve", "--port", "x"), 2)
    assert "invalid int value" in line
    line = one_error_line(run("frobnicate"), 2)
    assert "invalid choice" in line


def test_unreachable_server_and_bad_url_are_one_line():
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"mysql://root@127.0.0.1:{port}/noria"
    line = one_error_line(run("lobsters", "--backend", url, "--duration", "1"))
    assert f"cannot connect to 127.0.0.1:{port}" in line
    line = one_error_line(run("lobsters", "--backend", "postgres://x/y"))
    assert "unknown backend" in line
    line = one_error_line(run("shell", "--connect", url, "-e", "SELECT 1"))
    assert f"cannot connect to 127.0.0.1:{port}" in line
    line = one_error_line(run("shell", "--connect", "mysql://h:port/x", "-e", "SELECT 1"))
    assert "bad port" in line


def test_sql_errors_are_one_line():
    line = one_error_line(run("explain", *SETUP, "SELECT nope FROM t"), 1)
    assert line == "error 1054 (42S22): Unknown column 'nope' in 'field list'"
    line = one_error_line(run("explain", "--setup", "CREATE TABLE", "SELECT 1"), 1)
    assert line.startswith("error 1064")


def test_explain_names_columns_and_the_proxied_construct():
    p = run("explain", *SETUP, "SELECT a, COUNT(*) FROM t WHERE id = 5 GROUP BY a")
    assert p.returncode == 0, p.stderr
    assert "project a,COUNT(*),id" in p.stdout and "#" not in p.stdout
    p = run("explain", *SETUP, "SELECT a, RANK() OVER (ORDER BY a) FROM t")
    assert p.returncode == 0, p.stderr
    assert "proxied" in p.stdout and "window functions" in p.stdout
