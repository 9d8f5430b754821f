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
