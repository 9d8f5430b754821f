"""SQLAlchemy 2 Core and ORM over `mysql+pymysql://`."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

pytestmark = pytest.mark.wire


def test_core(server):
    engine = sa.create_engine(server.url(), pool_size=2)
    md = sa.MetaData()
    items = sa.Table(
        "sa_items",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(50), nullable=False),
        sa.Column("qty", sa.Integer),
    )
    md.create_all(engine)
    assert sa.inspect(engine).has_table("sa_items")
    with engine.begin() as c:
        c.execute(items.insert(), [{"id": i, "name": f"n'{i}", "qty": i * 10} for i in range(20)])
    with engine.connect() as c:
        rows = c.execute(sa.select(items.c.name, items.c.qty).where(items.c.id == 7)).all()
        assert rows == [("n'7", 70)]
        total = c.execute(sa.select(sa.func.count()).select_from(items)).scalar()
        assert total == 20
    with engine.begin() as c:
        res = c.execute(items.update().where(items.c.id == 3).values(qty=0))
        assert res.rowcount == 1
        c.execute(items.delete().where(items.c.id == 4))
    with engine.connect() as c:
        assert c.execute(sa.select(items.c.qty).where(items.c.id == 3)).scalar() == 0
        assert c.execute(sa.select(items.c.qty).where(items.c.id == 4)).all() == []
    # a failed transaction rolls back as a whole
    with pytest.raises(sa.exc.IntegrityError):
        with engine.begin() as c:
            c.execute(items.insert(), [{"id": 100, "name": "x"}, {"id": 5, "name": "dup"}])
    with engine.connect() as c:
        assert c.execute(sa.select(items.c.id).where(items.c.id == 100)).all() == []
    md.drop_all(engine)
    assert not sa.inspect(engine).has_table("sa_items")
    engine.dispose()


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "orm_authors"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=False)
    name: Mapped[str] = mapped_column(sa.String(80))
    karma: Mapped[int] = mapped_column(default=0)


class Note(Base):
    __tablename__ = "orm_notes"
    id: Mapped[int] = mapped_column(primary_key=True)  # AUTO_INCREMENT
    body: Mapped[str] = mapped_column(sa.String(200))


def test_orm(server):
    engine = sa.create_engine(server.url())
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        s.add_all([Author(id=i, name=f"author {i}") for i in range(1, 6)])
        s.commit()
    with Session(engine) as s:
        a = s.get(Author, 2)
        assert a.name == "author 2"
        a.karma = 42
        s.delete(s.get(Author, 5))
        s.commit()
    with Session(engine) as s:
        assert s.get(Author, 2).karma == 42
        assert s.get(Author, 5) is None
        names = s.scalars(sa.select(Author.name).where(Author.karma == 0).order_by(Author.id))
        assert list(names) == ["author 1", "author 3", "author 4"]
        s.get(Author, 1).name = "changed"
        s.rollback()
    with Session(engine) as s:
        assert s.get(Author, 1).name == "author 1"
    # Generated keys are known at once in autocommit mode (inside a transaction they are
    # assigned at COMMIT; see noria_py.server.session).
    auto = engine.execution_options(isolation_level="AUTOCOMMIT")
    with Session(auto) as s:
        notes = [Note(body="first"), Note(body="it's second")]
        s.add_all(notes)
        s.flush()
        ids = [n.id for n in notes]
        assert ids[0] >= 1 and ids[1] == ids[0] + 1
    with Session(engine) as s:
        assert s.get(Note, ids[1]).body == "it's second"
    engine.dispose()
