"""A typed table with awkward values, loaded identically into noria_py and the MariaDB oracle."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

SCHEMA = (
    "CREATE TABLE vals (id INT PRIMARY KEY, s VARCHAR(40), i BIGINT, d DECIMAL(10,3), "
    "f DOUBLE, dt DATE, ts DATETIME, tm TIME)"
)

ROWS = [
    (1, "Élodie", 7, Decimal("9.990"), 2.5, dt.date(2024, 1, 31),
     dt.datetime(2024, 3, 1, 10, 0, 0), dt.timedelta(hours=10, minutes=30)),
    (2, "bob ", -3, Decimal("-1.500"), -0.5, dt.date(2024, 2, 29),
     dt.datetime(2023, 12, 31, 23, 59, 59), dt.timedelta(hours=-1, minutes=-15)),
    (3, "BOB", 0, Decimal("0.000"), 1e20, dt.date(2000, 12, 31),
     dt.datetime(2000, 1, 1, 0, 0, 0), dt.timedelta(hours=100)),
    (4, "straße 😀", 9007199254740993, Decimal("1234567.125"), 3.5, dt.date(1999, 1, 1),
     dt.datetime(2024, 2, 29, 12, 30, 45), dt.timedelta(0)),
    (5, "", 2147483648, Decimal("0.005"), -2.5, dt.date(2024, 12, 30),
     dt.datetime(2025, 1, 1, 0, 0, 1), dt.timedelta(hours=838, minutes=59, seconds=59)),
    (6, None, None, None, None, None, None, None),
    (7, "a,b,c", 42, Decimal("42.000"), 0.1, dt.date(2021, 1, 3),
     dt.datetime(2021, 1, 3, 7, 8, 9), dt.timedelta(minutes=5)),
    (8, "  padded  ", -9223372036854775807, Decimal("-0.001"), 1.0000000000000002,
     dt.date(2020, 2, 29), dt.datetime(2020, 2, 29, 23, 0, 0), dt.timedelta(seconds=-1)),
    (9, "中文字符", 1, Decimal("99999.999"), 123.456, dt.date(1970, 1, 1),
     dt.datetime(1970, 1, 1, 0, 0, 0), dt.timedelta(hours=23, minutes=59, seconds=59)),
    (10, "e", 255, Decimal("2.500"), 0.0, dt.date(2024, 3, 31),
     dt.datetime(2024, 3, 31, 1, 2, 3), dt.timedelta(hours=1)),
]  # fmt: skip

COLUMNS = ["id", "s", "i", "d", "f", "dt", "ts", "tm"]
KIND_OF = {"s": "str", "i": "int", "d": "dec", "f": "dbl", "dt": "date", "ts": "datetime",
           "tm": "time"}  # fmt: skip


def load_noria(conn) -> None:
    conn.execute(SCHEMA)
    conn.executemany("INSERT INTO vals VALUES (?, ?, ?, ?, ?, ?, ?, ?)", ROWS)


def load_mariadb(oracle) -> None:
    oracle.query("DROP TABLE IF EXISTS vals")
    oracle.query(SCHEMA)
    with oracle.conn.cursor() as cur:
        cur.executemany("INSERT INTO vals VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", ROWS)
