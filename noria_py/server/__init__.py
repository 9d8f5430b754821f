"""The MySQL-wire front end of noria_py (``noria-py serve``).

``mysql`` runs the server and logs clients in (mysql-mimic handshake and authentication on
uvloop), ``connection`` serves each logged-in client as an asyncio protocol (the command phase),
``session`` answers session-level statements and buffers transactions, ``protocol`` encodes
result sets and decodes prepared-statement parameters. Turning literal point lookups into
parameterized statements (``noria_py.sql.literals``) is shared with the embedded API."""

from __future__ import annotations

__all__ = ["add_arguments", "run_from_args", "serve"]


def __getattr__(name: str):
    if name in __all__:
        from . import mysql

        return getattr(mysql, name)
    raise AttributeError(name)
