"""The engine (noria_py/engine/core.py) and its parts."""

from .base import LATENCY_BOUNDS_NS, QueryEntry
from .catalog import _split_top
from .core import VERSION_STRING, Engine, _estimate_bytes
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
