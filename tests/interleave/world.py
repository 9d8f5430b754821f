"""A small database driven message by message through the test scheduler.

``World`` holds an engine whose dataflow runs on ``TestScheduler``: writes go to base storage at
once and their deltas wait on per-edge channels; reads that miss start upqueries whose requests and
responses also wait; the test delivers messages and evicts keys in whatever order it likes. After
``drain`` every filled reader key must equal SQLite's answer on the same base data, every read
must have completed, and every partial state must equal a fully materialized twin (``audit``).
"""

from __future__ import annotations

import random
import sqlite3
from collections import Counter
from decimal import Decimal

import noria_py
from noria_py.dataflow.audit import audit
from noria_py.dataflow.scheduler import filled_keys
from noria_py.sql.functions import AGGREGATES

from .scheduling import TestScheduler

TABLES = [
    "CREATE TABLE users (id INT PRIMARY KEY, grp INT)",
    "CREATE TABLE stories (id INT PRIMARY KEY, author INT, score INT)",
    "CREATE TABLE votes (id INT PRIMARY KEY, story INT, voter INT)",
]
VIEWS = [
    # three chained unions, each fed twice by the one above: eight paths (thesis figure 4.1)
    "CREATE VIEW v1 AS SELECT id, author, score FROM stories WHERE score > 3 "
    "UNION ALL SELECT id, author, score FROM stories WHERE score < 6",
    "CREATE VIEW v2 AS SELECT id, author, score FROM v1 WHERE id > 1 "
    "UNION ALL SELECT id, author, score FROM v1 WHERE author < 2",
    "CREATE VIEW v3 AS SELECT id, author, score FROM v2 WHERE score <> 5 "
    "UNION ALL SELECT id, author, score FROM v2 WHERE id <> 3",
]
QUERIES = {
    "join": "SELECT s.id, s.score, u.grp FROM stories s JOIN users u ON s.author = u.id "
    "WHERE s.id = ?",
    "join_by_key": "SELECT s.id, u.grp FROM stories s JOIN users u ON s.author = u.id "
    "WHERE s.author = ?",
    "left_join": "SELECT s.id, v.voter FROM stories s LEFT JOIN votes v ON v.story = s.id "
    "WHERE s.id = ?",
    "left_join_count": "SELECT s.id, COUNT(v.voter) FROM stories s LEFT JOIN votes v "
    "ON v.story = s.id WHERE s.id = ? GROUP BY s.id",
    "agg_over_join": "SELECT u.grp, SUM(s.score) FROM stories s JOIN users u "
    "ON s.author = u.id WHERE u.grp = ? GROUP BY u.grp",
    "self_join": "SELECT a.id, b.id FROM stories a JOIN stories b ON a.author = b.author "
    "WHERE a.id = ?",
    "diamond": "SELECT x.id, y.score FROM (SELECT id, author FROM stories WHERE score > 2) x "
    "JOIN (SELECT id, score FROM stories WHERE score < 8) y ON x.id = y.id WHERE x.author = ?",
    "union": "SELECT id, score FROM v1 WHERE author = ?",
    "chained_unions": "SELECT id, score FROM v3 WHERE author = ?",
    "count": "SELECT author, COUNT(*) FROM stories WHERE author = ? GROUP BY author",
    "distinct": "SELECT DISTINCT author, score FROM stories WHERE author = ?",
    # registered aggregates maintained by the dataflow; SQLite gets the same accumulators
    "stats": "SELECT author, VAR_SAMP(score), STD(score), BIT_AND(score), BIT_XOR(id) "
    "FROM stories WHERE author = ? GROUP BY author",
    "stats_over_join": "SELECT u.grp, VARIANCE(s.score), BIT_OR(s.score) FROM stories s "
    "JOIN users u ON s.author = u.id WHERE u.grp = ? GROUP BY u.grp",
}
KEYS = range(5)  # parameter values (ids, authors, groups)

WRITES = [
    ("INSERT INTO users VALUES (?, ?)", 2),
    ("UPDATE users SET grp = ? WHERE id = ?", 2),
    ("DELETE FROM users WHERE id = ?", 1),
    ("INSERT INTO stories VALUES (?, ?, ?)", 3),
    ("UPDATE stories SET author = ? WHERE id = ?", 2),
    ("UPDATE stories SET score = ? WHERE id = ?", 2),
    ("DELETE FROM stories WHERE id = ?", 1),
    ("INSERT INTO votes VALUES (?, ?, ?)", 3),
    ("DELETE FROM votes WHERE id = ?", 1),
]


def _norm(v):
    if isinstance(v, Decimal):
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def _bag(rows) -> Counter:
    return Counter(tuple(_norm(v) for v in r) for r in rows)


def _from_scratch(factory):
    """A SQLite aggregate running a registered accumulator over all rows (no retraction)."""

    class Agg:
        def __init__(self):
            self.acc = factory()

        def step(self, *args):
            self.acc.step(*args)

        def finalize(self):
            return self.acc.value()

    return Agg


def initial_rows(rng: random.Random) -> list[tuple[str, tuple]]:
    out = []
    for i in range(4):
        out.append(("INSERT INTO users VALUES (?, ?)", (i, rng.randrange(3))))
    for i in range(6):
        out.append(
            ("INSERT INTO stories VALUES (?, ?, ?)", (i, rng.randrange(4), rng.randrange(10)))
        )
    for i in range(6):
        out.append(("INSERT INTO votes VALUES (?, ?, ?)", (i, rng.randrange(6), rng.randrange(4))))
    return out


class World:
    def __init__(self, names, initial, mechanisms=None, split="nodes", queries=None, **options):
        self.names = list(names)
        self.queries = QUERIES if queries is None else queries
        # the message protocol's race mechanisms guard joins that keep copies of their inputs
        self.conn = noria_py.connect(**{"lookup_joins": False, **options})
        self.engine = self.conn._engine
        self.cur = self.conn.cursor()
        for sql in TABLES + VIEWS:
            self.cur.execute(sql)
        for sql, params in initial:
            self.cur.execute(sql, params)
        self.readers = {}
        for name in self.names:
            prep = self.engine.prepare(self.queries[name])
            self.readers[name] = prep.reader
        self.sched = TestScheduler(self.engine.graph, split).attach()
        for m, on in (mechanisms or {}).items():
            self.sched.dataflow.mechanisms[m] = on
        if mechanisms and not mechanisms.get("incongruent_eviction", True):
            for node in self.engine.graph.nodes.values():
                node.probe_on_drop = False
        self.reads: list[tuple[str, tuple]] = []
        self.errors = 0

    # --- actions -------------------------------------------------------------------------
    def write(self, sql: str, params: tuple) -> None:
        try:
            self.cur.execute(sql, params)
        except noria_py.IntegrityError:
            self.errors += 1

    def transaction(self, writes) -> None:
        """Several writes in one transaction: their deltas enter together at COMMIT."""
        self.cur.execute("BEGIN")
        for sql, params in writes:
            self.write(sql, params)
        self.cur.execute("COMMIT")

    def read(self, name: str, value) -> None:
        key = (value,)
        self.reads.append((name, key))
        self.sched.read(self.readers[name], key)

    def step(self, index: int) -> bool:
        if not self.sched.ready():
            return False
        self.sched.step(index)
        return True

    def deliver_where(self, pred) -> bool:
        """Deliver the oldest message at the head of a channel for which ``pred(msg)`` holds."""
        for ch in self.sched.ready():
            msg = self.sched.channels[ch][0]
            if pred(msg):
                self.sched.channels[ch].popleft()
                self.sched._deliver(msg)
                return True
        return False

    def deliver_while(self, pred) -> None:
        """Deliver channel heads for which ``pred(msg)`` holds until none is left."""
        while self.deliver_where(pred):
            pass

    def drain_watching(self, node) -> list:
        """Drain first-in-first-out, returning the upquery requests that reached ``node``."""
        seen = []
        while self.sched.ready():
            msg = self.sched.channels[self.sched.ready()[0]][0]
            if msg[3] == "req" and msg[1] is node:
                seen.append(msg)
            self.step(0)
        return seen

    def evictable(self) -> list:
        out = []
        for nid in sorted(self.engine.graph.nodes):
            node = self.engine.graph.nodes[nid]
            for key in sorted(filled_keys(node), key=repr):
                out.append((node, key))
        return out

    def evict(self, index: int) -> bool:
        choices = self.evictable()
        if not choices:
            return False
        node, key = choices[index % len(choices)]
        return self.sched.evict(node, key)

    def drain(self, choose=None) -> None:
        self.sched.run(choose)

    # --- checks --------------------------------------------------------------------------
    def _copy_into(self, cur) -> None:
        """Create the schema through ``cur`` and copy the base tables' current rows."""
        for sql in TABLES + VIEWS:
            cur.execute(sql)
        for table in ("users", "stories", "votes"):
            rows = self.engine.storage.scan(table)
            if rows:
                marks = ",".join("?" * len(rows[0]))
                cur.executemany(f"INSERT INTO {table} VALUES ({marks})", rows)

    def oracle(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:")
        for name, agg in AGGREGATES.items():
            db.create_aggregate(name, -1, _from_scratch(agg.factory))
        self._copy_into(db)
        return db

    def twin(self):
        conn = noria_py.connect(partial=False, lookup_joins=False)
        self._copy_into(conn.cursor())
        for name in self.names:
            conn._engine.prepare(self.queries[name])
        return conn

    def problems(self) -> list[str]:
        """After ``drain``: everything that disagrees with SQLite or with the full twin."""
        out = []
        db = self.oracle()
        for name, reader in self.readers.items():
            for key, rows in list(reader.published.items()):
                want = db.execute(self.queries[name], key).fetchall()
                if _bag(rows) != _bag(want):
                    out.append(f"{name} {key}: got {sorted(rows)} want {sorted(want)}")
        for name, key in self.reads:
            if (self.readers[name].id, key) not in self.sched.answers:
                out.append(f"read {name} {key} never completed")
        twin = self.twin()
        out += audit(self.engine.graph, twin._engine.graph)
        twin.close()
        return out

    def close(self) -> None:
        self.sched.detach()
        self.conn.close()
