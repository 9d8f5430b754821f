"""Django through the server with pymysql: makemigrations and migrate (Django's own apps,
whose migrations add foreign keys and unique constraints with ALTER TABLE), the ORM across a
foreign key, a cascading delete, and ``inspectdb``, whose output (read from
information_schema, SHOW INDEX and result metadata) must equal what the same run gives
against MariaDB. Each run is a subprocess: Django's settings are per process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.wire

MODELS = """
from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=50, unique=True)
    born = models.DateField(null=True)


class Book(models.Model):
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    title = models.CharField(max_length=100, db_index=True)
    price = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    in_print = models.BooleanField(default=True)
"""

RUN = """
import io, sys
import pymysql
pymysql.install_as_MySQLdb()
import django
from django.conf import settings

settings.configure(
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "shelf"],
    DATABASES={"default": {"ENGINE": "django.db.backends.mysql", "NAME": sys.argv[2],
               "USER": "root", "PASSWORD": "", "HOST": "127.0.0.1", "PORT": int(sys.argv[1])}},
    USE_TZ=False,
    DEFAULT_AUTO_FIELD="django.db.models.AutoField",
)
django.setup()
from django.core.management import call_command
from django.db import IntegrityError, transaction

call_command("makemigrations", "shelf", verbosity=0)
call_command("migrate", verbosity=0)
from shelf.models import Author, Book
from django.contrib.auth.models import User

ann = Author.objects.create(name="ann")
bob = Author.objects.create(name="bob")
Book.objects.create(author=ann, title="t1", price="9.50")
Book.objects.create(author=ann, title="t2")
Book.objects.create(author=bob, title="t3", in_print=False)
User.objects.create_user("u1", password="x")
print("books", sorted(Book.objects.filter(author__name="ann").values_list("title", "price")))
print("count", Author.objects.get(name="ann").books.count())
try:
    with transaction.atomic():
        Book.objects.create(author_id=999, title="orphan")
    print("orphan accepted")
except IntegrityError as e:
    print("orphan refused", e.args[0])
bob.delete()  # Django cascades itself; the database's own constraint agrees
print("after delete", Book.objects.count(), Author.objects.count())
out = io.StringIO()
call_command("inspectdb", "shelf_author", "shelf_book", stdout=out)
print(out.getvalue())
"""


def _run(tmp_path, port: int, db: str) -> str:
    (tmp_path / "shelf").mkdir(parents=True, exist_ok=True)
    (tmp_path / "shelf" / "__init__.py").write_text("")
    (tmp_path / "shelf" / "models.py").write_text(textwrap.dedent(MODELS))
    (tmp_path / "run.py").write_text(RUN)
    proc = subprocess.run(
        [sys.executable, "run.py", str(port), db],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_django_migrate_orm_and_inspectdb_match_mariadb(server, mariadb_oracle, tmp_path):
    mariadb_oracle.query("DROP DATABASE IF EXISTS django_oracle")
    mariadb_oracle.query("CREATE DATABASE django_oracle")
    with server.pymysql() as conn, conn.cursor() as cur:  # a database of its own on ours too
        cur.execute("CREATE DATABASE IF NOT EXISTS django_app")
    ours = _run(tmp_path / "noria", server.port, "django_app")
    theirs = _run(tmp_path / "maria", mariadb_oracle.port, "django_oracle")
    assert "books [('t1', Decimal('9.50')), ('t2', Decimal('0.00'))]" in ours
    assert "count 2" in ours
    assert "orphan refused 1452" in ours
    assert "after delete 2 1" in ours
    assert "class ShelfBook(models.Model)" in ours
    assert ours == theirs
