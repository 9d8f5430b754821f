"""`python -m noria_py.spark.backfill` end to end, on local Spark and on a standalone cluster
(where a bulk replay runs too).

Each test runs the command in a subprocess, so it gets its own Spark session (a process holds one)
and the shared local session of the other tests is left alone.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import noria_py

from .data import VOTES_DDL, vote_rows, votes_arrow

pytestmark = pytest.mark.spark

MODULE = [sys.executable, "-m", "noria_py.spark.backfill"]


def make_db(path: Path) -> str:
    conn = noria_py.connect(str(path))
    conn.execute(VOTES_DDL)
    conn.close()
    return str(path)


def stored_votes(db: str) -> list[tuple]:
    conn = noria_py.connect(db)
    try:
        return sorted(conn.execute("SELECT user_id, story_id, vote FROM votes").fetchall())
    finally:
        conn.close()


def run(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(MODULE + args, capture_output=True, text=True, timeout=timeout)


def test_help_lists_every_source():
    out = run(["--help"], timeout=60)
    assert out.returncode == 0
    for flag in ("--parquet", "--csv", "--jdbc", "--dbtable", "--spark-master", "--on-duplicate"):
        assert flag in out.stdout
    for flag in ("--sep", "--quote", "--escape", "--null-value", "--no-header", "--ignore-column"):
        assert flag in out.stdout
    assert "RFC 4180" in out.stdout and "unterminated quote" in out.stdout


def test_unknown_table_exits_with_an_error(tmp_path):
    db = make_db(tmp_path / "app.db")
    out = run(["nope", "--data", db, "--parquet", str(tmp_path / "x.parquet")], timeout=60)
    assert out.returncode == 1
    assert "Table 'nope' doesn't exist" in out.stderr


def test_csv_load_on_local_spark(tmp_path):
    rows = vote_rows(500)
    csv = tmp_path / "votes.csv"
    csv.write_text("user_id,story_id,vote\n" + "".join(f"{u},{s},{v}\n" for u, s, v in rows))
    db = make_db(tmp_path / "app.db")
    out = run(
        ["votes", "--data", db, "--csv", str(csv), "--spark-master", "local[1]", "--no-progress"]
        + ["--batch-rows", "100"]
    )
    assert out.returncode == 0, out.stderr
    assert re.search(r"loaded 500 rows into votes .* with Spark master local\[1\]", out.stdout)
    assert stored_votes(db) == sorted(rows)


def test_csv_dialect_flags_and_a_clean_error_for_a_malformed_row(spark, tmp_path, capsys):
    import argparse

    from noria_py.spark import backfill as bf

    db = make_db(tmp_path / "app.db")
    parser = argparse.ArgumentParser()
    bf.add_arguments(parser)
    bad = tmp_path / "bad.csv"
    bad.write_text("user_id,story_id,vote\n1,2,1\n2,3\n")
    args = ["votes", "--data", db, "--csv", str(bad), "--no-progress", "--no-validate"]
    assert bf.run_from_args(parser.parse_args(args)) == 1
    err = capsys.readouterr().err
    assert "row 2: '2,3' is malformed" in err and "Traceback" not in err and "at org." not in err
    good = tmp_path / "votes.txt"
    good.write_text("user_id;story_id;vote;note\n1;'2';-1;x\n3;'4';\\N;y\n")
    flags = ["--sep", ";", "--quote", "'", "--null-value", "\\N", "--ignore-column", "note"]
    args = ["votes", "--data", db, "--csv", str(good), "--no-progress", *flags]
    assert bf.run_from_args(parser.parse_args(args)) == 1  # vote is NOT NULL
    assert "row 2: column 'vote' value NULL" in capsys.readouterr().err
    good.write_text("user_id;story_id;vote;note\n1;'2';-1;x\n3;'4';1;y\n")
    assert bf.run_from_args(parser.parse_args(args)) == 0
    assert stored_votes(db) == [(1, 2, -1), (3, 4, 1)]


def test_run_from_args_reports_errors_and_options(spark, tmp_path, capsys):
    # In this process (the shared session), the way `noria-py load` calls the module.
    import argparse

    from noria_py.spark import backfill as bf

    rows = vote_rows(300)
    source = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(rows), source)
    db = make_db(tmp_path / "app.db")
    parser = argparse.ArgumentParser()
    bf.add_arguments(parser)
    base = ["votes", "--data", db, "--parquet", str(source), "--no-progress"]
    assert bf.run_from_args(parser.parse_args(base)) == 0
    assert "loaded 300 rows" in capsys.readouterr().out
    assert bf.run_from_args(parser.parse_args(base)) == 1
    assert "error 1062: Duplicate entry" in capsys.readouterr().err
    assert bf.run_from_args(parser.parse_args(base + ["--on-duplicate", "ignore"])) == 0
    assert stored_votes(db) == sorted(rows)
    assert bf.run_from_args(parser.parse_args(base + ["--option", "oops"])) == 2
    assert "KEY=VALUE" in capsys.readouterr().err


# --- a standalone cluster on loopback --------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


def start_daemon(args: list[str], log: Path, env: dict) -> subprocess.Popen:
    cmd = [os.path.join(spark_home(), "bin", "spark-class"), *args]
    with open(log, "wb") as out:
        return subprocess.Popen(
            cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def wait_for(log: Path, text: str, procs: list[subprocess.Popen], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text(errors="replace"):
            return
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"{p.args[1]} exited early:\n{log.read_text()[-3000:]}")
        time.sleep(0.5)
    raise AssertionError(f"no {text!r} after {timeout} s:\n{log.read_text()[-3000:]}")


# A bulk replay on the cluster, in a process of its own (its Spark session uses the cluster): the
# engine opens the backfilled database fully materialized, with every input going to Spark.
REPLAY_SCRIPT = """
import sys
import noria_py

db, url, scratch = sys.argv[1:4]
sql = "SELECT story_id, COUNT(*), SUM(vote) FROM votes WHERE vote > 0 GROUP BY story_id"
bulk = noria_py.connect(
    db, partial=False, bulk_replay_rows=0, spark_master=url, bulk_replay_dir=scratch
)
got = sorted(bulk.execute(sql).fetchall())
paths = [r.path for r in bulk.engine.graph.bulk_replay.records]
plain = noria_py.connect(db, partial=False, bulk_replay_rows=None)
want = sorted(plain.execute(sql).fetchall())
assert got == want, (got[:5], want[:5])
from noria_py.spark.session import current_master
print(f"replayed {len(got)} groups via {paths} on {current_master()}")
"""


def test_backfill_through_a_standalone_cluster(tmp_path):
    rows = vote_rows(2000, seed=9)
    source = tmp_path / "votes.parquet"
    pq.write_table(votes_arrow(rows), source, row_group_size=500)
    db = make_db(tmp_path / "app.db")
    work = tmp_path / "work"
    work.mkdir()
    env = dict(
        os.environ,
        SPARK_HOME=spark_home(),
        SPARK_LOCAL_IP="127.0.0.1",
        SPARK_LOG_DIR=str(tmp_path),
        SPARK_WORKER_DIR=str(work),
    )
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    master_args = ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1"]
    master_args += ["--port", str(port), "--webui-port", str(free_port())]
    worker_args = ["org.apache.spark.deploy.worker.Worker", url, "--host", "127.0.0.1"]
    worker_args += ["--cores", "1", "--memory", "1g", "--webui-port", str(free_port())]
    worker_args += ["--work-dir", str(work)]
    # Both start at once; the worker retries until the master is up.
    master = start_daemon(master_args, tmp_path / "master.log", env)
    worker = start_daemon(worker_args, tmp_path / "worker.log", env)
    try:
        wait_for(
            tmp_path / "worker.log", "Successfully registered with master", [master, worker], 180
        )
        out = run(
            ["votes", "--data", db, "--parquet", str(source), "--spark-master", url]
            + ["--no-progress", "--batch-rows", "400"]
        )
        assert out.returncode == 0, out.stderr[-3000:]
        assert "loaded 2000 rows into votes" in out.stdout and url in out.stdout
        assert stored_votes(db) == sorted(rows)
        # The work ran on the cluster: the worker launched an executor for the application.
        apps = [p for p in work.iterdir() if p.name.startswith("app-")]
        assert apps and any((a / "0" / "stderr").exists() for a in apps)

        # A bulk replay through the cluster: the view's aggregate is computed there.
        replay = subprocess.run(
            [sys.executable, "-c", REPLAY_SCRIPT, db, url, str(tmp_path / "snapshots")],
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert replay.returncode == 0, replay.stderr[-3000:]
        assert "via ['spark', 'in-process']" in replay.stdout and url in replay.stdout
        later = [p for p in work.iterdir() if p.name.startswith("app-") and p not in apps]
        assert later, "the bulk replay did not run on the cluster"
    finally:
        stop(worker)
        stop(master)
