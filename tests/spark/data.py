"""Data and statements shared by the Spark tests."""

from __future__ import annotations

import random

VOTES_DDL = (
    "CREATE TABLE votes ("
    " user_id INT NOT NULL,"
    " story_id INT NOT NULL,"
    " vote TINYINT NOT NULL,"
    " PRIMARY KEY (user_id, story_id))"
)
COUNT_VIEW = "SELECT story_id, COUNT(*) FROM votes WHERE story_id = ? GROUP BY story_id"
SUM_VIEW = "SELECT story_id, COUNT(*), SUM(vote) FROM votes WHERE story_id = ? GROUP BY story_id"


def vote_rows(n: int, stories: int = 40, seed: int = 7) -> list[tuple[int, int, int]]:
    """``n`` votes (user_id, story_id, vote) with distinct (user_id, story_id), in random order."""
    rng = random.Random(seed)
    users = n // stories + 1
    pairs = rng.sample(range(users * stories), n)
    return [(p // stories + 1, p % stories + 1, rng.choice((1, 1, 1, -1))) for p in pairs]


def votes_arrow(rows: list[tuple[int, int, int]]):
    import pyarrow as pa

    return pa.table(
        {
            "user_id": pa.array([r[0] for r in rows], pa.int64()),
            "story_id": pa.array([r[1] for r in rows], pa.int64()),
            "vote": pa.array([r[2] for r in rows], pa.int8()),
        }
    )


def sqlite_votes():
    """An in-memory SQLite database with the votes table, to compare the engine against."""
    import sqlite3

    db = sqlite3.connect(":memory:")
    db.execute(
        "CREATE TABLE votes (user_id INTEGER NOT NULL, story_id INTEGER NOT NULL,"
        " vote INTEGER NOT NULL, PRIMARY KEY (user_id, story_id))"
    )
    return db


def assert_matches_sqlite(conn, db, stories) -> None:
    """The engine's base table and its SUM_VIEW for every story equal SQLite's."""
    got = sorted(conn.execute("SELECT user_id, story_id, vote FROM votes").fetchall())
    want = sorted(db.execute("SELECT user_id, story_id, vote FROM votes").fetchall())
    assert got == want
    for s in stories:
        view = [tuple(int(v) for v in r) for r in conn.execute(SUM_VIEW, (s,)).fetchall()]
        expect = db.execute(
            "SELECT story_id, COUNT(*), SUM(vote) FROM votes WHERE story_id = ? GROUP BY story_id",
            (s,),
        ).fetchall()
        assert view == expect, f"story {s}"
