"""``noria-py shell``: statements from stdin, a pseudo-terminal session with prompts and
history, ``-e``, a MySQL server through ``--connect``, and the mysql client's table layout."""

from __future__ import annotations

import datetime
import decimal
import os
import pty
import select
import subprocess
import sys
import time

import pytest

from noria_py import shell as S

ENV = dict(os.environ, PYTHONPATH=os.getcwd() + os.pathsep + os.environ.get("PYTHONPATH", ""))


def run_shell(*args: str, stdin: str = "", env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "noria_py.cli", "shell", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        env=env or ENV,
    )


SCRIPT = """\
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(10), score DECIMAL(5,2));
INSERT INTO t VALUES (1, 'alice', 3.5),
  (2, 'bob; jr', NULL);
SELECT * FROM t ORDER BY id;
SELECT name FROM t WHERE id = 2\\G
SELECT * FROM t WHERE id = 9; SELECT COUNT(*) AS n FROM t;
"""


def test_statements_from_stdin_print_like_the_mysql_client():
    p = run_shell(stdin=SCRIPT)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert "noria>" not in p.stdout  # no prompts without a terminal
    expected = """\
Query OK, 0 rows affected (#)
Query OK, 2 rows affected (#)
+----+---------+-------+
| id | name    | score |
+----+---------+-------+
|  1 | alice   |  3.50 |
|  2 | bob; jr |  NULL |
+----+---------+-------+
2 rows in set (#)
*************************** 1. row ***************************
name: bob; jr
1 row in set (#)
Empty set (#)
+---+
| n |
+---+
| 2 |
+---+
1 row in set (#)
"""
    import re

    assert re.sub(r"\(\d+\.\d\d sec\)", "(#)", p.stdout) == expected


def test_stdin_stops_at_the_first_error_unless_force():
    script = "SELECT nope;\nCREATE TABLE u (id INT PRIMARY KEY);\nSELECT COUNT(*) FROM u;\n"
    p = run_shell(stdin=script)
    assert p.returncode == 1
    assert p.stderr.strip() == "ERROR 1054 (42S22): Unknown column 'nope' in 'field list'"
    assert p.stdout == ""
    p = run_shell("--force", stdin=script)
    assert p.returncode == 1
    assert "1 row in set" in p.stdout and p.stderr.count("ERROR") == 1


def test_execute_option_and_a_database_file(tmp_path):
    db = str(tmp_path / "app.db")
    p = run_shell("--data", db, "-e", "SELECT 1")
    assert p.returncode == 1 and "no database file" in p.stderr and not os.path.exists(db)
    p = run_shell("--data", db, "--create", "-e", "CREATE TABLE t (id INT PRIMARY KEY)")
    assert p.returncode == 0, p.stderr
    p = run_shell("--data", db, "-e", "INSERT INTO t VALUES (4); SELECT id FROM t")
    assert p.returncode == 0, p.stderr
    assert "|  4 |" in p.stdout and "1 row in set" in p.stdout


def test_explain_and_show_caches_in_the_shell_install_nothing():
    script = (
        "CREATE TABLE t (id INT PRIMARY KEY, a INT);\n"
        "EXPLAIN SELECT a FROM t WHERE id = 1;\n"
        "SHOW CACHES;\n"
        "SELECT a FROM t WHERE id = 1;\n"
        "SHOW CACHES\\G\n"
    )
    p = run_shell(stdin=script)
    assert p.returncode == 0, p.stderr
    assert "reader key (id)" in p.stdout and "project a,id" in p.stdout
    out = p.stdout.split("Empty set")
    assert len(out) == 3  # the first SHOW CACHES (and the SELECT on an empty table) are empty
    assert "query: SELECT a FROM t WHERE id = ?" in p.stdout


# --- a pseudo-terminal -----------------------------------------------------------------------


class Terminal:
    def __init__(self, *args: str, env: dict) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "noria_py.cli", "shell", *args],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
        )
        os.close(slave)
        self.seen = b""

    def expect(self, token: str, timeout: float = 60) -> str:
        want = token.encode()
        end = time.monotonic() + timeout
        while want not in self.seen:
            left = end - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{token!r} not seen; got {self.seen.decode()!r}")
            ready, _, _ = select.select([self.master], [], [], min(left, 0.5))
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                self.seen += chunk
        if want not in self.seen:
            raise AssertionError(f"{token!r} not seen; got {self.seen.decode()!r}")
        before, _, self.seen = self.seen.partition(want)
        return before.decode().replace("\r\n", "\n")

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=30)
        finally:
            os.close(self.master)


@pytest.fixture
def terminal_env(tmp_path):
    return dict(ENV, NORIA_PY_HISTFILE=str(tmp_path / "history"), TERM="dumb"), tmp_path


def test_terminal_session_with_prompts_and_multi_line_statements(terminal_env):
    env, tmp = terminal_env
    t = Terminal(env=env)
    banner = t.expect("noria> ")
    assert "shell on a new in-memory database" in banner
    t.send("CREATE TABLE t (id INT PRIMARY KEY,\n")
    t.expect("    -> ")
    t.send("v INT);\n")
    assert "Query OK, 0 rows affected" in t.expect("noria> ")
    t.send("INSERT INTO t VALUES (1, 20), (2, NULL);\n")
    t.expect("noria> ")
    t.send("SELECT * FROM t ORDER BY id;\n")
    out = t.expect("noria> ")
    assert "+----+------+\n| id | v    |\n+----+------+\n|  1 |   20 |\n|  2 | NULL |" in out
    assert "2 rows in set (" in out
    t.send("SELECT nope FROM t;\n")  # an error does not end an interactive session
    assert "ERROR 1054 (42S22)" in t.expect("noria> ")
    t.send("help\n")
    assert "SHOW CACHES" in t.expect("noria> ")
    t.send("SELECT 1 +\n1 \\c\n")  # \c drops the statement
    assert "row" not in t.expect("noria> ")
    t.send("quit\n")
    t.expect("Bye")
    assert t.close() == 0
    history = (tmp / "history").read_text().splitlines()
    assert "CREATE TABLE t (id INT PRIMARY KEY, v INT);" in history  # one entry per statement
    assert "SELECT * FROM t ORDER BY id;" in history


def test_terminal_history_is_read_back_and_ctrl_d_leaves(terminal_env):
    env, tmp = terminal_env
    (tmp / "history").write_text("SELECT 40 + 2 AS answer;\n")
    t = Terminal(env=env)
    t.expect("noria> ")
    t.send("\x1b[A\n")  # up arrow: the last history entry
    out = t.expect("noria> ")
    assert "| answer |" in out and "|     42 |" in out
    t.send("\x04")  # Ctrl-D
    t.expect("Bye")
    assert t.close() == 0


# --- over the wire ---------------------------------------------------------------------------


def test_connect_errors_are_one_line():
    p = run_shell("--connect", "mysql://root@127.0.0.1:1/x", "-e", "SELECT 1")
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and "cannot connect to 127.0.0.1:1" in p.stderr
    p = run_shell("--connect", "postgres://x", "-e", "SELECT 1")
    assert p.returncode == 1 and "not a mysql:// URL" in p.stderr
    p = run_shell("--connect", "mysql://h:port/x", "-e", "SELECT 1")
    assert p.returncode == 1 and "bad port" in p.stderr


# --- pieces ----------------------------------------------------------------------------------


def test_splitter_respects_quotes_and_comments():
    sp = S.Splitter()
    assert sp.feed("SELECT 'a;b', `c;d` -- x;") == []
    assert sp.pending
    assert sp.feed("FROM t; SELECT 2\\G SELECT /* ; */ 3") == [
        ("SELECT 'a;b', `c;d` -- x;\nFROM t", False),
        ("SELECT 2", True),
    ]
    assert sp.feed(";") == [("SELECT /* ; */ 3", False)]
    assert not sp.pending
    assert sp.feed("SELECT 'it\\'s;' ;") == [("SELECT 'it\\'s;'", False)]


def test_delimiter_lines_change_what_ends_a_statement():
    """As the mysql client: a dump's triggers and routines come between DELIMITER lines."""
    sp = S.Splitter()
    out = []
    for line in [
        "SELECT 1;",
        "DELIMITER ;;",
        "CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END ;;",
        "delimiter ;",
        "SELECT 2; SELECT 3\\G",
        "DELIMITER //",
        "SELECT 'a//b' //",
    ]:
        out += sp.feed(line)
    assert out == [
        ("SELECT 1", False),
        ("CREATE TRIGGER x BEFORE INSERT ON t FOR EACH ROW BEGIN SET NEW.a = 1; END", False),
        ("SELECT 2", False),
        ("SELECT 3", True),
        ("SELECT 'a//b'", False),
    ]


def test_a_script_with_executable_comments_and_trailing_comments():
    """A dump's shape: executable comments, `--` alone on a line, comments after the last
    statement (not run as one); a trigger is refused by name (1235), the rest runs."""
    script = (
        "/*M!999999\\- enable the sandbox mode */\n--\n-- a dump\n--\n"
        "/*!40101 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;\n"
        "/*!40101 CREATE TABLE t (id INT PRIMARY KEY, d DOUBLE) */;\n"
        "INSERT INTO t VALUES (1, 1e300);\n"
        "DELIMITER ;;\n"
        "/*!50003 CREATE*/ /*!50003 TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.d = 1 */;;\n"
        "DELIMITER ;\n"
        "/*!40101 SET SQL_NOTES=@OLD_SQL_NOTES */;\n"
        "SELECT d FROM t;\n-- Dump completed\n"
    )
    p = run_shell("--force", stdin=script)
    assert p.returncode == 1
    assert p.stderr.strip() == (
        "ERROR 1235 (42000): This version of noria_py doesn't yet support 'CREATE TRIGGER'"
    )
    assert "| 1e300 |" in p.stdout and "1 row in set" in p.stdout
    assert p.stdout.count("Query OK") == 4  # (the comments up to the first ; are its SET)


def test_values_are_shown_as_the_mysql_client_shows_them():
    assert S.show(None) == "NULL"
    assert S.show(decimal.Decimal("3.50")) == "3.50"
    assert S.show(datetime.timedelta(hours=-1, minutes=-2)) == "-01:02:00"
    assert S.show(datetime.timedelta(hours=30, seconds=5)) == "30:00:05"
    assert S.show(datetime.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    assert S.show(b"abc") == "abc"
    assert S.show(b"\x00\xff") == "0x00FF"
    assert S.show(2.0) == "2" and S.show(0.5) == "0.5"
    assert S.show(1e300) == "1e300" and S.show(1e15) == "1e15" and S.show(-2.5e-7) == "-0.00000025"


LAYOUT_SCRIPT = """\
DROP TABLE IF EXISTS shell_layout;
CREATE TABLE shell_layout (id INT PRIMARY KEY, name VARCHAR(20), d DECIMAL(6,2), f DOUBLE,
  day DATE, tm TIME, note TEXT);
INSERT INTO shell_layout VALUES (1, 'a', NULL, 1.5, '2024-02-29', '-01:02:03', NULL),
  (22, 'longer text', 1.50, -2, NULL, '100:00:00', 'x');
SELECT * FROM shell_layout ORDER BY id;
SELECT id, name FROM shell_layout WHERE id = 22\\G
SELECT COUNT(*), SUM(d), MAX(name) FROM shell_layout;
DROP TABLE shell_layout;
"""


def _tables(text: str) -> list[str]:
    """The lines of the tables and vertical rows in a client's output."""
    keep = []
    for line in text.splitlines():
        if line[:1] in "+|*" or (": " in line and not line.startswith(("Query", "ERROR"))):
            keep.append(line)
    return keep


def test_table_layout_matches_the_mariadb_client(mariadb_oracle):
    """The same statements on the same MariaDB, printed by the mariadb client (-t) and by
    the shell over --connect: the same tables, borders, alignment and NULLs."""
    port = mariadb_oracle.port
    theirs = subprocess.run(
        ["/usr/bin/mariadb", "-t", "--protocol=TCP", "-h", "127.0.0.1", "-P", str(port)]
        + ["-u", "root", "oracle"],
        input=LAYOUT_SCRIPT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert theirs.returncode == 0, theirs.stderr
    ours = run_shell("--connect", f"mysql://root@127.0.0.1:{port}/oracle", stdin=LAYOUT_SCRIPT)
    assert ours.returncode == 0, ours.stderr
    assert _tables(ours.stdout) == _tables(theirs.stdout)
    assert len(_tables(ours.stdout)) == 14  # two tables and one vertical row


def test_summaries():
    assert S.summary(2, -1, 0.004) == "2 rows in set (0.00 sec)"
    assert S.summary(None, 1, 0.0) == "Query OK, 1 row affected (0.00 sec)"
    assert S.summary(0, -1, 0.0) == "Empty set (0.00 sec)"


def test_completion_offers_keywords_and_tables():
    import noria_py

    conn = noria_py.connect()
    conn.execute("CREATE TABLE stories (id INT PRIMARY KEY)")
    conn.execute("CREATE TABLE stats (id INT PRIMARY KEY)")
    c = S.Completer(conn)

    def all_of(text):
        out, i = [], 0
        while (m := c.complete(text, i)) is not None:
            out.append(m)
            i += 1
        return out

    assert all_of("st") == ["stats", "stories"]
    assert all_of("SEL") == ["SELECT"]
    assert all_of("sel") == ["select"]
    assert all_of("EXPL") == ["EXPLAIN"]
    conn.close()


def test_terminal_tab_completes_a_table_name(terminal_env):
    env, _ = terminal_env
    t = Terminal(env=env)
    t.expect("noria> ")
    t.send("CREATE TABLE stories_long_name (id INT PRIMARY KEY);\n")
    t.expect("noria> ")
    t.send("SELECT COUNT(*) AS n FROM stories_l\t;\n")
    out = t.expect("noria> ")
    assert "| n |" in out and "1 row in set" in out
    t.send("quit\n")
    t.expect("Bye")
    assert t.close() == 0
