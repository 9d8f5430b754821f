"""Quickstart: a tiny news site on noria_py.

Creates stories, users and votes; asks parameterized questions (each SELECT becomes a view that is
kept up to date as rows change); writes; and reads again to show the views follow the writes.
Finally prints what the engine cached and how it runs one query.

    python examples/quickstart.py
"""

from __future__ import annotations

import noria_py

STORY_WITH_VOTES = (
    "SELECT s.id, s.title, COUNT(v.user_id) AS votes"
    " FROM stories s LEFT JOIN votes v ON v.story_id = s.id"
    " WHERE s.id = ? GROUP BY s.id, s.title"
)
VOTERS_OF_STORY = (
    "SELECT u.name FROM votes v JOIN users u ON u.id = v.user_id"
    " WHERE v.story_id = ? ORDER BY u.name"
)
STORIES_BY_AUTHOR = (
    "SELECT s.id, s.title FROM stories s JOIN users u ON u.id = s.author_id"
    " WHERE u.name = ? ORDER BY s.id"
)


def show_table(title: str, cur) -> None:
    names = [col[0] for col in cur.description]
    rows = cur.fetchall()
    print(f"{title}:")
    print("  " + " | ".join(names))
    for row in rows:
        print("  " + " | ".join("NULL" if v is None else str(v) for v in row))


def story_line(conn, story_id: int) -> str:
    row = conn.execute(STORY_WITH_VOTES, (story_id,)).fetchone()
    if row is None:
        return f"story {story_id}: (none)"
    return f"story {row[0]} {row[1]!r}: {row[2]} votes"


def main() -> None:
    with noria_py.connect() as conn:
        cur = conn.cursor()
        cur.execute(
            "CREATE TABLE users ("
            " id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            " name VARCHAR(50) NOT NULL,"
            " UNIQUE KEY name_unique (name))"
        )
        cur.execute(
            "CREATE TABLE stories ("
            " id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,"
            " author_id INT NOT NULL,"
            " title VARCHAR(200) NOT NULL,"
            " KEY author_idx (author_id))"
        )
        cur.execute(
            "CREATE TABLE votes ("
            " user_id INT NOT NULL,"
            " story_id INT NOT NULL,"
            " PRIMARY KEY (user_id, story_id),"
            " KEY story_idx (story_id))"
        )

        cur.executemany(
            "INSERT INTO users (name) VALUES (?)", [("alice",), ("bob",), ("carol",), ("dave",)]
        )
        cur.execute(
            "INSERT INTO stories (author_id, title) VALUES (?, ?)", (1, "Dataflow all the things")
        )
        first = cur.lastrowid
        cur.execute(
            "INSERT INTO stories (author_id, title) VALUES (1, 'Partial state'), (2, 'Upqueries')"
        )
        print(f"inserted stories {first}, {cur.lastrowid} and {cur.lastrowid + 1}")
        cur.executemany(
            "INSERT INTO votes (user_id, story_id) VALUES (?, ?)",
            [(1, 1), (2, 1), (3, 1), (1, 2), (4, 3)],
        )
        print(f"inserted {cur.rowcount} votes")

        print()
        print("before:")
        for story_id in (1, 2, 3):
            print("  " + story_line(conn, story_id))
        voters = [r[0] for r in conn.execute(VOTERS_OF_STORY, (1,))]
        print(f"  voters of story 1: {', '.join(voters)}")
        by_alice = conn.execute(STORIES_BY_AUTHOR, ("alice",)).fetchall()
        print(f"  stories by alice: {[title for _, title in by_alice]}")

        # Writes: each statement commits when execute() returns and updates every view above.
        conn.execute("INSERT INTO votes (user_id, story_id) VALUES (?, ?)", (4, 1))
        conn.execute("DELETE FROM votes WHERE user_id = ? AND story_id = ?", (1, 2))
        conn.execute("INSERT INTO votes (user_id, story_id) VALUES (2, 3), (3, 3)")
        cur.execute("UPDATE stories SET title = ? WHERE id = ?", ("Dataflow, revisited", 1))
        print(f"\nupdated {cur.rowcount} story title")
        cur.execute("UPDATE stories SET author_id = 1 WHERE id = 3")
        cur.execute("DELETE FROM stories WHERE id = ?", (2,))
        print(f"deleted {cur.rowcount} story")

        print()
        print("after:")
        for story_id in (1, 2, 3):
            print("  " + story_line(conn, story_id))
        voters = [r[0] for r in conn.execute(VOTERS_OF_STORY, (1,))]
        print(f"  voters of story 1: {', '.join(voters)}")
        by_alice = conn.execute(STORIES_BY_AUTHOR, ("alice",)).fetchall()
        print(f"  stories by alice: {[title for _, title in by_alice]}")

        # A named view, queried like a table.
        conn.execute(
            "CREATE VIEW leaderboard AS"
            " SELECT u.name, COUNT(*) AS votes_cast FROM votes v JOIN users u ON u.id = v.user_id"
            " GROUP BY u.name"
        )
        print()
        show_table(
            "leaderboard", conn.execute("SELECT name, votes_cast FROM leaderboard ORDER BY name")
        )
        conn.execute("INSERT INTO votes (user_id, story_id) VALUES (1, 3)")
        (cast,) = conn.execute(
            "SELECT votes_cast FROM leaderboard WHERE name = ?", ("alice",)
        ).fetchone()
        print(f"alice after one more vote: {cast}")

        print()
        show_table("SHOW CACHES", conn.execute("SHOW CACHES"))
        print()
        show_table("EXPLAIN story with votes", conn.execute("EXPLAIN " + STORY_WITH_VOTES))


if __name__ == "__main__":
    main()
