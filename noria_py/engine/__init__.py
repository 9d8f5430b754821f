"""The engine: one database's catalog, statement cache, write path and read path.

``Engine`` (``core``) is composed of one part per concern, each a mixin in its own module:

* ``core``: the Engine class itself, its state (``__init__``), ``execute``/``prepare`` and the
  statement cache, and dispatching a parsed statement to the part that prepares it;
* ``transactions``: ``Txn``, BEGIN/COMMIT/ROLLBACK, savepoints, the lock-free-read rule, and
  several processes sharing one file (the change log, catching up with others' commits);
* ``writes``: the write path every write takes (base storage, change log, dataflow deltas);
* ``inserts``, ``updates``, ``loads``: INSERT/REPLACE/upsert, UPDATE/DELETE, bulk loads;
* ``reads``: compiling a SELECT into the dataflow (or proxying it to base storage);
* ``catalog``, ``views``, ``schema``, ``show``: DDL, views, table schemas, SHOW statements;
* ``explain``: EXPLAIN, SHOW CACHES and the graph as dot.

Prepared statements live in ``prepared`` (the base class and small kinds), ``selects``
(``SelectPrepared``) and ``inserts`` (``InsertPrepared``); ``base`` holds what every part uses.
The names below are this package's interface; import them from ``noria_py.engine``.
"""

from ..dataflow.scheduler import ReaderGone
from .base import LATENCY_BOUNDS_NS, QueryEntry
from .catalog import _split_top
from .core import VERSION_STRING, Engine
from .explain import _estimate_bytes
from .inserts import InsertPrepared
from .loads import LOG_ROWS_LIMIT
from .prepared import (
    BindsOtherwise,
    CalcFoundRowsPrepared,
    ConstPrepared,
    FuncPrepared,
    LockingPrepared,
    Prepared,
    ProxyPrepared,
    binds_otherwise,
    check_params,
    check_timestamp_zone,
    lifts_as_written,
    lifts_whatever_values,
    zone_differs,
)
from .reads import _normalize
from .schema import (
    _default_value,
    _foreign_key_indexes,
    _mysql8_type,
    _schema_from_create,
    check_generated,
    current_collation_name,
    show_create_table,
)
from .selects import SelectPrepared
from .transactions import POLL_EVERY, Txn

__all__ = [
    "BindsOtherwise",
    "CalcFoundRowsPrepared",
    "ConstPrepared",
    "Engine",
    "FuncPrepared",
    "InsertPrepared",
    "LATENCY_BOUNDS_NS",
    "LOG_ROWS_LIMIT",
    "LockingPrepared",
    "POLL_EVERY",
    "Prepared",
    "ProxyPrepared",
    "QueryEntry",
    "ReaderGone",
    "SelectPrepared",
    "Txn",
    "VERSION_STRING",
    "binds_otherwise",
    "check_generated",
    "check_params",
    "check_timestamp_zone",
    "current_collation_name",
    "lifts_as_written",
    "lifts_whatever_values",
    "show_create_table",
    "zone_differs",
    # private helpers other modules of noria_py use
    "_default_value",
    "_estimate_bytes",
    "_foreign_key_indexes",
    "_mysql8_type",
    "_normalize",
    "_schema_from_create",
    "_split_top",
]
