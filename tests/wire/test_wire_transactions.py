"""Transactions over the MySQL wire: an ORM's flows (autoincrement keys inside a transaction,
autoflush, nested savepoints, rollback, merge), a second writer that waits and times out with
1205, a disconnect that rolls back, affected rows, and a hypothesis test with several
connections compared with SQLite connections on one WAL file."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import threading
import time
from decimal import Decimal

import pymysql
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.wire


# --- an ORM over the server ------------------------------------------------------------------


def _orm_models():
    from sqlalchemy import Column, ForeignKey, Integer, String
    from sqlalchemy.orm import declarative_base, relationship

    Base = declarative_base()

    class Author(Base):
        __tablename__ = "orm_authors"
        id = Column(Integer, primary_key=True, autoincrement=True)
        name = Column(String(50), nullable=False)
        books = relationship("Book", back_populates="author", cascade="all, delete-orphan")

    class Book(Base):
        __tablename__ = "orm_books"
        id = Column(Integer, primary_key=True, autoincrement=True)
        author_id = Column(Integer, ForeignKey("orm_authors.id"), nullable=False)
        title = Column(String(50), nullable=False)
        author = relationship("Author", back_populates="books")

    return Base, Author, Book


def test_sqlalchemy_orm_parent_and_children_with_autoincrement_keys(server):
    import warnings

    from sqlalchemy import create_engine, func, select
    from sqlalchemy.exc import SAWarning
    from sqlalchemy.orm import Session

    Base, Author, Book = _orm_models()
    engine = create_engine(server.url(), future=True)
    Base.metadata.create_all(engine)
    other = server.pymysql()
    oc = other.cursor()

    def other_count(author_id):
        oc.execute("SELECT COUNT(*) FROM orm_books WHERE author_id = %s", (author_id,))
        return oc.fetchone()[0]

    with warnings.catch_warnings():
        warnings.simplefilter("error", SAWarning)  # "identity map already had..." fails
        with Session(engine) as s:
            ann = Author(name="ann", books=[Book(title="one"), Book(title="two")])
            bob = Author(name="bob", books=[Book(title="three")])
            s.add_all([ann, bob])
            s.flush()  # INSERTs inside the transaction: every key known now
            assert ann.id and bob.id and ann.id != bob.id
            assert {b.author_id for b in ann.books} == {ann.id}
            assert len({b.id for b in ann.books + bob.books}) == 3
            assert other_count(ann.id) == 0  # not committed yet
            s.commit()
            ann_id, bob_id = ann.id, bob.id
        assert other_count(ann_id) == 2 and other_count(bob_id) == 1
        oc.execute(
            "SELECT a.name, b.title FROM orm_books b JOIN orm_authors a ON a.id = b.author_id "
            "WHERE a.id = %s ORDER BY b.title",
            (ann_id,),
        )
        assert oc.fetchall() == (("ann", "one"), ("ann", "two"))

        # autoflush: a query after add() sees the pending row; rollback drops it
        with Session(engine) as s:
            s.add(Book(title="four", author_id=ann_id))
            n = s.scalar(select(func.count()).select_from(Book).where(Book.author_id == ann_id))
            assert n == 3
            assert other_count(ann_id) == 2
            s.rollback()
            n = s.scalar(select(func.count()).select_from(Book).where(Book.author_id == ann_id))
            assert n == 2

        # nested savepoints: the inner one rolls back, the outer one is kept
        with Session(engine) as s:
            with s.begin_nested():
                s.add(Book(title="five", author_id=bob_id))
                try:
                    with s.begin_nested():
                        s.add(Book(title="six", author_id=bob_id))
                        s.flush()
                        assert (
                            s.scalar(
                                select(func.count())
                                .select_from(Book)
                                .where(Book.author_id == bob_id)
                            )
                            == 3
                        )
                        raise RuntimeError("undo the inner savepoint")
                except RuntimeError:
                    pass
            s.commit()
        oc.execute("SELECT title FROM orm_books WHERE author_id = %s ORDER BY title", (bob_id,))
        assert oc.fetchall() == (("five",), ("three",))

        # merge: a detached object's state becomes an UPDATE
        with Session(engine) as s:
            s.merge(Author(id=ann_id, name="ann2"))
            s.commit()
        oc.execute("SELECT name FROM orm_authors WHERE id = %s", (ann_id,))
        assert oc.fetchall() == (("ann2",),)

        # delete with cascade, in one transaction
        with Session(engine) as s:
            s.delete(s.get(Author, bob_id))
            s.commit()
        assert other_count(bob_id) == 0
    other.close()
    engine.dispose()


# --- writers, lock waits, disconnects ------------------------------------------------------


def test_second_writer_waits_for_the_first_and_times_out_with_1205(server):
    a, b = server.pymysql(), server.pymysql()
    ca, cb = a.cursor(), b.cursor()
    ca.execute("CREATE TABLE lw (id INT PRIMARY KEY, v INT)")
    ca.execute("INSERT INTO lw VALUES (1, 0)")
    a.begin()
    ca.execute("UPDATE lw SET v = 1 WHERE id = 1")
    # reads never wait: the other connection reads the committed row
    cb.execute("SELECT v FROM lw WHERE id = %s", (1,))
    assert cb.fetchall() == ((0,),)
    cb.execute("SELECT SUM(v) FROM lw")
    assert cb.fetchall() == ((Decimal(0),),)
    cb.execute("SET innodb_lock_wait_timeout = 1")
    t0 = time.monotonic()
    with pytest.raises(pymysql.err.OperationalError) as info:
        cb.execute("UPDATE lw SET v = 2 WHERE id = 1")
    assert info.value.args[0] == 1205
    assert time.monotonic() - t0 >= 0.9
    # the waiting writer proceeds as soon as the first commits
    cb.execute("SET innodb_lock_wait_timeout = 30")
    done = threading.Timer(0.3, a.commit)
    done.start()
    t0 = time.monotonic()
    assert cb.execute("UPDATE lw SET v = v + 10 WHERE id = 1") == 1
    waited = time.monotonic() - t0
    done.join()
    assert 0.2 < waited < 10
    cb.execute("SELECT v FROM lw WHERE id = %s", (1,))
    assert cb.fetchall() == ((11,),)
    a.close()
    b.close()


def test_a_disconnect_rolls_back_and_releases_the_writer(server):
    a, b = server.pymysql(), server.pymysql()
    ca, cb = a.cursor(), b.cursor()
    ca.execute("CREATE TABLE dc (id INT PRIMARY KEY)")
    a.begin()
    ca.execute("INSERT INTO dc VALUES (1)")
    a.close()  # gone with its transaction open
    cb.execute("SET innodb_lock_wait_timeout = 5")
    cb.execute("INSERT INTO dc VALUES (2)")  # not blocked for long
    cb.execute("SELECT id FROM dc ORDER BY id")
    assert cb.fetchall() == ((2,),)
    b.close()


def test_insert_ids_and_affected_rows_inside_a_transaction(server):
    from pymysql.constants import CLIENT

    a = server.pymysql()
    found = server.pymysql(client_flag=CLIENT.FOUND_ROWS)
    ca, cf = a.cursor(), found.cursor()
    ca.execute("CREATE TABLE ids (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
    a.begin()
    ca.execute("INSERT INTO ids (v) VALUES (5)")
    first = ca.lastrowid
    ca.execute("INSERT INTO ids (v) VALUES (6), (7)")
    assert ca.lastrowid == first + 1  # MySQL: the first id of a multi-row INSERT
    ca.execute("SELECT LAST_INSERT_ID()")
    assert ca.fetchone()[0] == first + 1
    assert ca.execute("UPDATE ids SET v = 5 WHERE v = 5") == 0  # found 1, changed 0
    assert ca.execute("UPDATE ids SET v = 8 WHERE v >= 6") == 2
    a.commit()
    assert cf.execute("UPDATE ids SET v = 5 WHERE v = 5") == 1  # CLIENT_FOUND_ROWS: found
    assert cf.execute("UPDATE ids SET v = 8 WHERE v = 8") == 2
    a.close()
    found.close()


def test_read_only_transaction_and_savepoints_over_the_wire(server):
    conn = server.connector(autocommit=True)
    cur = conn.cursor(prepared=True)
    cur.execute("CREATE TABLE ro (id INT PRIMARY KEY, v INT)")
    cur.execute("INSERT INTO ro VALUES (1, 1)")
    conn.start_transaction(readonly=True)
    cur.execute("SELECT v FROM ro WHERE id = %s", (1,))
    assert cur.fetchall() == [(1,)]
    with pytest.raises(Exception) as info:
        cur.execute("UPDATE ro SET v = 2 WHERE id = %s", (1,))
    assert getattr(info.value, "errno", None) == 1792
    conn.rollback()
    conn.start_transaction()
    cur.execute("INSERT INTO ro VALUES (%s, %s)", (2, 2))
    cur.execute("SAVEPOINT s")
    cur.execute("INSERT INTO ro VALUES (%s, %s)", (3, 3))
    cur.execute("ROLLBACK TO SAVEPOINT s")
    cur.execute("SELECT COUNT(*) FROM ro")
    assert cur.fetchall() == [(2,)]
    conn.commit()
    cur.execute("SELECT id FROM ro WHERE id = %s", (3,))
    assert cur.fetchall() == []
    conn.close()


# --- hypothesis: several connections against SQLite connections on one file ---------------

_READS = [
    "SELECT id, v FROM hx WHERE g = %s ORDER BY id",
    "SELECT g, COUNT(*), SUM(v) FROM hx WHERE g = %s GROUP BY g",
    "SELECT COUNT(*) FROM hx WHERE g = %s",
]

_step = st.tuples(
    st.integers(0, 2),  # which connection
    st.sampled_from(
        [
            "insert",
            "insert",
            "update",
            "delete",
            "read",
            "read",
            "begin",
            "commit",
            "rollback",
            "savepoint",
            "rollback_to",
        ]
    ),
    st.integers(1, 3),
    st.integers(0, 2),
)


def _norm(rows):
    return [tuple(int(v) if isinstance(v, Decimal) else v for v in r) for r in rows]


class _Model:
    """SQLite on one WAL file: a connection's reads see its own writes while it writes, every
    other read sees the last commit (READ COMMITTED), one writer at a time."""

    def __init__(self, path: str, n: int) -> None:
        self.path = path
        self.conns = [sqlite3.connect(path, isolation_level=None) for _ in range(n)]
        self.reader = sqlite3.connect(path, isolation_level=None)
        self.writer: int | None = None
        self.active = [False] * n
        self.savepoints: list[list[str]] = [[] for _ in range(n)]

    def read(self, i: int, sql: str, params) -> list:
        conn = self.conns[i] if self.writer == i else self.reader
        return _norm(conn.execute(sql.replace("%s", "?"), params).fetchall())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(_step, max_size=40))
def test_connections_match_sqlite_read_committed(server, steps):
    d = tempfile.mkdtemp()
    model = _Model(os.path.join(d, "m.db"), 3)
    model.conns[0].execute("PRAGMA journal_mode=WAL")
    clients = [server.pymysql(autocommit=True) for _ in range(3)]
    curs = [c.cursor() for c in clients]
    curs[0].execute("DROP TABLE IF EXISTS hx")
    curs[0].execute("CREATE TABLE hx (id INT PRIMARY KEY, g INT, v INT)")
    model.conns[0].execute("CREATE TABLE hx (id INTEGER PRIMARY KEY, g INT, v INT)")
    next_id = 0
    try:
        for i, kind, g, x in steps:
            cur, mc = curs[i], model.conns[i]
            if kind in ("insert", "update", "delete"):
                if model.writer is not None and model.writer != i:
                    kind = "read"  # it would wait for the other writer: read instead
                else:
                    if kind == "insert":
                        next_id += 1
                        sql, params = "INSERT INTO hx VALUES (%s, %s, %s)", (next_id, g, x)
                    elif kind == "update":
                        sql, params = "UPDATE hx SET v = v + %s WHERE g = %s", (x + 1, g)
                    else:
                        sql, params = "DELETE FROM hx WHERE g = %s AND v <= %s", (g, x)
                    cur.execute(sql, params)
                    if model.active[i] and model.writer is None:
                        mc.execute("BEGIN IMMEDIATE")
                        for sp in model.savepoints[i]:
                            mc.execute(f"SAVEPOINT {sp}")
                        model.writer = i
                    mc.execute(sql.replace("%s", "?"), params)
                    continue
            if kind == "read":
                sql = _READS[x]
                cur.execute(sql, (g,))
                assert _norm(cur.fetchall()) == model.read(i, sql, (g,)), (i, sql, g)
            elif kind == "begin":
                clients[i].begin()
                if model.writer == i:
                    mc.execute("COMMIT")
                    model.writer = None
                model.active[i] = True
                model.savepoints[i] = []
            elif kind in ("commit", "rollback"):
                getattr(clients[i], kind)()
                if model.writer == i:
                    mc.execute(kind.upper())
                    model.writer = None
                model.active[i] = False
                model.savepoints[i] = []
            elif kind == "savepoint":
                name = f"p{g}"
                cur.execute(f"SAVEPOINT {name}")
                if model.active[i]:
                    sps = model.savepoints[i]
                    if name in sps:
                        sps.remove(name)
                    sps.append(name)
                    if model.writer == i:
                        mc.execute(f"SAVEPOINT {name}")
            else:
                name = f"p{g}"
                sps = model.savepoints[i]
                if name not in sps:
                    with pytest.raises(pymysql.err.OperationalError) as info:
                        cur.execute(f"ROLLBACK TO SAVEPOINT {name}")
                    assert info.value.args[0] == 1305
                    continue
                cur.execute(f"ROLLBACK TO SAVEPOINT {name}")
                del sps[sps.index(name) + 1 :]
                if model.writer == i:
                    mc.execute(f"ROLLBACK TO {name}")
        for i in range(3):
            clients[i].commit()
            if model.writer == i:
                model.conns[i].execute("COMMIT")
                model.writer = None
        for sql in _READS:
            for g in (1, 2, 3):
                for cur in curs:
                    cur.execute(sql, (g,))
                    assert _norm(cur.fetchall()) == model.read(0, sql, (g,))
    finally:
        for c in clients:
            c.close()
        for c in model.conns + [model.reader]:
            c.close()


# --- Alembic ------------------------------------------------------------------------------

_ENV = """
from alembic import context
from sqlalchemy import create_engine

engine = create_engine(context.config.get_main_option("sqlalchemy.url"))
with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=None)
    with context.begin_transaction():
        context.run_migrations()
"""

_REV1 = """
import sqlalchemy as sa
from alembic import op

revision, down_revision, branch_labels, depends_on = "0001", None, None, None


def upgrade():
    op.create_table(
        "mig_accounts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(50), nullable=False),
    )
    op.bulk_insert(sa.table("mig_accounts", sa.column("name")), [{"name": "a"}, {"name": "b"}])


def downgrade():
    op.drop_table("mig_accounts")
"""

_REV2 = """
import sqlalchemy as sa
from alembic import op

revision, down_revision, branch_labels, depends_on = "0002", "0001", None, None


def upgrade():
    op.create_table(
        "mig_orders",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("account_id", sa.Integer, sa.ForeignKey("mig_accounts.id"), nullable=False),
        sa.Column("total", sa.Numeric(10, 2)),
    )
    op.execute("INSERT INTO mig_orders (account_id, total) VALUES (1, 9.50), (2, 1.25)")


def downgrade():
    op.drop_table("mig_orders")
"""


def test_alembic_upgrade_and_downgrade_through_the_server(server, tmp_path):
    import sqlalchemy as sa
    from alembic import command
    from alembic.config import Config

    (tmp_path / "versions").mkdir()
    (tmp_path / "env.py").write_text(_ENV)
    (tmp_path / "versions" / "0001_accounts.py").write_text(_REV1)
    (tmp_path / "versions" / "0002_orders.py").write_text(_REV2)
    cfg = Config()
    cfg.set_main_option("script_location", str(tmp_path))
    cfg.set_main_option("sqlalchemy.url", server.url())
    command.upgrade(cfg, "head")
    engine = sa.create_engine(server.url())
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).fetchall() == [
            ("0002",)
        ]
        rows = c.execute(
            sa.text(
                "SELECT a.name, o.total FROM mig_orders o JOIN mig_accounts a "
                "ON a.id = o.account_id ORDER BY a.name"
            )
        ).fetchall()
        assert [(n, str(t)) for n, t in rows] == [("a", "9.50"), ("b", "1.25")]
    command.downgrade(cfg, "0001")
    with engine.connect() as c:
        assert c.execute(sa.text("SELECT version_num FROM alembic_version")).fetchall() == [
            ("0001",)
        ]
        assert sa.inspect(c).has_table("mig_orders") is False
    command.downgrade(cfg, "base")
    engine.dispose()


# --- after an internal failure -------------------------------------------------------------


def test_no_cached_read_over_the_wire_after_an_internal_failure():
    """The server's lock-free lookup paths (COM_QUERY and COM_STMT_EXECUTE) check the engine's
    failure like every other path: the client gets an error, never the cached row."""
    import asyncio
    import struct

    from noria_py.engine import Engine
    from noria_py.server import protocol as P
    from noria_py.server.connection import CommandProtocol
    from noria_py.server.mysql import NoriaServer, WireConnection
    from noria_py.server.session import Session

    class Transport:
        def __init__(self):
            self.out = []

        def write(self, data):
            self.out.append(data)

        def set_protocol(self, proto):
            pass

        def is_reading(self):
            return True

        def close(self):
            pass

    def pkt(payload):
        return len(payload).to_bytes(3, "little") + b"\x00" + payload

    async def run():
        engine = Engine(private_storage=True)
        engine.execute("CREATE TABLE f (id INT PRIMARY KEY, v INT)")
        engine.execute("INSERT INTO f VALUES (1, 10)")
        server = NoriaServer(engine)
        session = Session(server.state)
        session.username, session.database = "t", "noria"
        conn = WireConnection(P.BoundedStream(None, None, 1 << 20), server, session)
        proto = CommandProtocol(conn)
        transport = Transport()
        proto.take_over(transport, b"", False)
        query = pkt(b"\x03SELECT v FROM f WHERE id = 1")
        proto.data_received(pkt(b"\x16SELECT v FROM f WHERE id = ?"))
        execute = pkt(
            b"\x17" + struct.pack("<IBI", 1, 0, 1) + b"\x00\x01\x08\x00" + struct.pack("<q", 1)
        )
        for _ in range(3):  # the lookups are planned and take the fast paths
            proto.data_received(query)
            proto.data_received(execute)
        assert not any(b"\xff" == o[4:5] for o in transport.out)
        engine._failure = RuntimeError("a domain failed")
        transport.out.clear()
        proto.data_received(query)
        proto.data_received(execute)
        assert len(transport.out) == 2
        for o in transport.out:
            assert o[4:5] == b"\xff"  # an ERR packet
            assert struct.unpack("<H", o[5:7])[0] == 2013
        engine._failure = None
        engine.close()

    asyncio.run(run())
