"""MySQL's semantics, compared with a real MariaDB (the ``mariadb_oracle`` fixture)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys


def wire_fixtures():
    """``tests/wire/conftest.py`` as a module (``start_server``, ``stop_server``): the wire
    tests' way of starting ``noria-py serve``, shared here."""
    mod = sys.modules.get("wire_fixtures")
    if mod is None:
        path = pathlib.Path(__file__).parent.parent / "wire" / "conftest.py"
        spec = importlib.util.spec_from_file_location("wire_fixtures", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["wire_fixtures"] = mod  # dataclasses look their module up there
        spec.loader.exec_module(mod)
    return mod


def both_sides(oracle, setup: list[str], tables: str):
    """A generator for a module fixture: ``({"dataflow": conn, "storage": conn}, cursor)``,
    the statements ``setup`` run on two noria_py engines (the dataflow's, and base storage
    alone) and on the MariaDB oracle, whose ``tables`` (a comma list) are dropped before and
    after."""
    import noria_py

    conn = oracle.connect()
    cur = conn.cursor()
    cur.execute(f"DROP TABLE IF EXISTS {tables}")
    for sql in setup:
        cur.execute(sql)
    ours = {}
    for mode in ("dataflow", "storage"):
        c = noria_py.connect(dataflow=mode == "dataflow")
        for sql in setup:
            c.execute(sql)
        ours[mode] = c
    try:
        yield ours, cur
    finally:
        cur.execute(f"DROP TABLE IF EXISTS {tables}")
        conn.close()
        for c in ours.values():
            c.close()
