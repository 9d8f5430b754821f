"""``GROUP BY ... WITH ROLLUP`` compared with MariaDB, on the dataflow's engine and on base
storage alone: the rows and their order (each group's super-aggregate row after its rows, the
grand total last, keys sorted with NULLs first), HAVING on the rolled-up rows, LIMIT, a key
that holds NULLs itself, expressions over rolled-up keys (which keep the key's type), no rows
at all. It was 1235; ORDER BY beside it (MariaDB's 1221), CUBE and a ROLLUP inside a subquery
still are."""

from __future__ import annotations

import pytest

from noria_py import errors as E

from . import both_sides

SETUP = [
    "CREATE TABLE ru (id INT PRIMARY KEY, a VARCHAR(5), b INT, x DECIMAL(5,1), d DATE)",
    "INSERT INTO ru VALUES (1,'p',1,1.5,'2024-01-01'),(2,'p',2,2.0,'2024-01-02'),"
    "(3,'q',1,3.0,NULL),(4,NULL,NULL,1.0,'2024-01-01'),(5,'p',NULL,0.5,'2024-01-03'),"
    "(6,'r',3,1.0,'2024-01-02'),(7,'q',10,2.5,'2024-01-01')",
]
QUERIES = [
    "SELECT a, b, SUM(x), COUNT(*) FROM ru GROUP BY a, b WITH ROLLUP",
    "SELECT a, SUM(x) FROM ru GROUP BY a WITH ROLLUP",
    "SELECT a, SUM(x) s FROM ru GROUP BY a WITH ROLLUP HAVING s > 2",
    "SELECT a, b, SUM(x) FROM ru GROUP BY a, b WITH ROLLUP HAVING b IS NULL",
    "SELECT a, SUM(x) FROM ru GROUP BY a WITH ROLLUP LIMIT 2",
    "SELECT YEAR(d), a, COUNT(*) FROM ru GROUP BY YEAR(d), a WITH ROLLUP LIMIT 1, 4",
    "SELECT CONCAT(a, '!'), b + 1, SUM(x) FROM ru GROUP BY a, b WITH ROLLUP",
    "SELECT a AS k, AVG(x), MAX(b) FROM ru WHERE id > 1 GROUP BY k WITH ROLLUP",
    "SELECT b, COUNT(*) FROM ru GROUP BY 1 WITH ROLLUP",
    "SELECT d, a, MIN(x) FROM ru GROUP BY d, a WITH ROLLUP",
    "SELECT a, SUM(x) FROM ru WHERE id > 100 GROUP BY a WITH ROLLUP",
    "SELECT COALESCE(a, 'ALL') AS grp, SUM(x) FROM ru GROUP BY a WITH ROLLUP",
    # a key named with and without its table is one key
    "SELECT ru.a, SUM(x) FROM ru GROUP BY a WITH ROLLUP",
    "SELECT a, COUNT(DISTINCT b) FROM ru GROUP BY ru.a WITH ROLLUP",
]
REFUSED = [
    "SELECT a, SUM(x) FROM ru GROUP BY a WITH ROLLUP ORDER BY a",
    "SELECT * FROM (SELECT a, SUM(x) s FROM ru GROUP BY a WITH ROLLUP) t",
]


@pytest.fixture(scope="module")
def sides(mariadb_oracle):
    yield from both_sides(mariadb_oracle, SETUP, "ru")


@pytest.mark.parametrize("sql", QUERIES)
def test_rollup_as_mariadb(sides, sql):
    ours, cur = sides
    cur.execute(sql)
    want = [tuple(r) for r in cur.fetchall()]
    for mode, conn in ours.items():
        got = [tuple(r) for r in conn.execute(sql).fetchall()]
        assert repr(got) == repr(want), mode


@pytest.mark.parametrize("sql", REFUSED)
def test_rollup_forms_still_refused(sides, sql):
    ours, _cur = sides
    for conn in ours.values():
        with pytest.raises(E.NotSupportedError):
            conn.execute(sql).fetchall()
