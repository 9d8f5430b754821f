"""A DataFrame from a SparkSession the user started, whose Python workers lack pyarrow.

A user's session runs Python workers with $PYSPARK_PYTHON, or ``python3`` from PATH when that is
unset, which need not be the driver's Python nor have pyarrow. The load pass then moves its
batches without Python workers (Spark's JVM converts partitions to Arrow), and the checking pass
is JVM expressions, so the load works; moving them through ``mapInArrow`` fails in the workers.
Each case runs in a subprocess: a process holds one session, and the shared one of the other
tests is configured by noria_py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.spark

# The user's program: their own session, their own DataFrame, then noria_py's backfill.
PROGRAM = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    import noria_py
    from noria_py.spark import backfill as bf

    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("OFF")
    df = spark.createDataFrame(
        [(u, s, 1 if (u + s) % 3 else -1) for u in range(1, 201) for s in range(1, 51)],
        "user_id long, story_id long, vote int",
    ).repartition(4)
    for transfer in sys.argv[1:]:  # each way of moving the batches, in one session
        bf.TRANSFER = transfer
        conn = noria_py.connect()
        conn.execute(
            "CREATE TABLE votes (user_id INT NOT NULL, story_id INT NOT NULL,"
            " vote TINYINT NOT NULL, PRIMARY KEY (user_id, story_id))"
        )
        try:
            n = conn.backfill("votes", df, progress=False, batch_rows=3000)
        except Exception as e:
            print(transfer, "FAILED", type(e).__name__, str(e).replace("\\n", " "))
            continue
        sql = "SELECT COUNT(*), SUM(vote), SUM(user_id * story_id) FROM votes"
        got = conn.execute(sql).fetchall()
        print(transfer, "LOADED", n, *[int(v) for v in got[0]])
    """
)
WANT = [(10000, sum(1 if (u + s) % 3 else -1 for u in range(1, 201) for s in range(1, 51)))]


def system_python_without_pyarrow() -> str:
    python = shutil.which("python3", path="/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3")
    probe = subprocess.run([python, "-c", "import pyarrow"], capture_output=True)
    if probe.returncode == 0:
        pytest.skip(f"{python} has pyarrow: it cannot stand for a worker Python without it")
    return python


@pytest.fixture(scope="module")
def user_program():
    """The user's program run once (one session costs its start), with each transfer: its
    output lines per transfer."""
    worker_python = system_python_without_pyarrow()
    env = dict(os.environ, PYSPARK_PYTHON=worker_python, SPARK_LOCAL_IP="127.0.0.1")
    env.pop("PYSPARK_DRIVER_PYTHON", None)
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM, "python", "jvm"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert out.returncode == 0, out.stdout + out.stderr[-3000:]
    lines: dict = {}
    for ln in out.stdout.splitlines():
        head, _, rest = ln.partition(" ")
        if head in ("python", "jvm"):
            lines[head] = rest
    assert set(lines) == {"python", "jvm"}, out.stdout + out.stderr[-3000:]
    return lines


def test_a_dataframe_from_the_users_session_loads_without_pyarrow_in_the_workers(user_program):
    line = user_program["jvm"]
    assert line.startswith("LOADED"), line
    n, count, votes, product = map(int, line.split()[1:])
    assert n == 10000
    assert (count, votes) == WANT[0]
    assert product == sum(u * s for u in range(1, 201) for s in range(1, 51))


def test_python_workers_without_pyarrow_fail_as_the_user_saw(user_program):
    """The failure the JVM path avoids: mapInArrow in workers that cannot import pyarrow."""
    failed = user_program["python"]
    assert failed.startswith("FAILED"), failed
    assert "No module named 'pyarrow'" in failed
