"""Cache commands, as ReadySet users know them, and the rules that decide what is cached.

Statements (the embedded API and the server alike; the engine's ``prepare`` hands them here):

* ``CREATE CACHE [ALWAYS] [name] FROM <select | query id>`` installs the SELECT as a cached query,
  parameterized as a read of it would be (``?`` placeholders, or literals lifted into
  parameters), under ``name`` or its query id. A query the dataflow cannot maintain is error
  1235 naming the construct. Creating a cache of a query that is cached already succeeds and
  changes nothing but its name, when one is given.
* ``DROP CACHE name`` (a cache name or query id) removes the query's reader and every operator
  no other query uses, with their state; ``DROP ALL CACHES`` does so for every cache. The query
  is then answered by base storage until ``CREATE CACHE`` asks for it again (in both modes).
* ``SHOW CACHES [WHERE query_id = '...']`` lists every query the engine has seen, cached or
  proxied (the engine's own columns, then ReadySet's ``query id``, ``fallback behavior`` and
  ``count``).
* ``SHOW PROXIED [SUPPORTED] QUERIES [WHERE query_id = '...']`` lists the proxied query shapes:
  ``query id``, ``proxied query``, ``readyset supported`` (yes / no), ``count`` and ``reason``,
  the construct that keeps a ``no`` out of the dataflow. ``DROP ALL PROXIED QUERIES`` forgets
  the list.

``CacheRules`` holds what the statements decide: the mode (``caching="auto"`` caches every
SELECT the dataflow can maintain on first use; ``"explicit"`` only what CREATE CACHE asked
for), the queries asked for (with their names, kept while a DDL recompiles them) and the ones
dropped. Both are kept in base storage's catalog (kinds ``cache`` and ``nocache``), so a
database file reopened, and every process sharing it, has the same caches. Like DDL, the
commands that change them commit the connection's open transaction.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from typing import TYPE_CHECKING

from sqlglot import exp

from . import errors as E
from .result import Result
from .sql.dialect import DIALECT

if TYPE_CHECKING:
    from .engine import Engine, Prepared, QueryEntry

_IDENT = r"`(?:[^`]|``)+`|[\w$]+"
_CREATE = re.compile(
    rf"\A\s*create\s+cache\s+(?P<always>always\s+)?(?:(?P<name>{_IDENT})\s+)?from\s+(?P<q>.+?)"
    r"\s*;?\s*\Z",
    re.I | re.S,
)
_DROP = re.compile(rf"\A\s*drop\s+cache\s+(?P<name>{_IDENT}|'[^']*')\s*;?\s*\Z", re.I)
_DROP_ALL = re.compile(r"\A\s*drop\s+all\s+caches\s*;?\s*\Z", re.I)
_DROP_PROXIED = re.compile(r"\A\s*drop\s+all\s+proxied\s+queries\s*;?\s*\Z", re.I)
_SHOW_PROXIED = re.compile(
    r"\A\s*show\s+proxied\s+(?P<supported>supported\s+)?queries"
    r"(?:\s+where\s+query_id\s*=\s*(?P<id>'[^']*'|\"[^\"]*\"|\w+))?\s*;?\s*\Z",
    re.I,
)
_SHOW_ONE = re.compile(
    r"\A\s*show\s+caches\s+where\s+query_id\s*=\s*(?P<id>'[^']*'|\"[^\"]*\"|\w+)\s*;?\s*\Z", re.I
)
_QUERY_ID = re.compile(r"\Aq_[0-9a-f]{16}\Z")
_FIRST = re.compile(r"\A\s*(create|drop|show)\s+(caches?|all|proxied)\b", re.I)


class CacheRules:
    """Which SELECTs the engine caches (see the module docstring)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode  # "auto" or "explicit"
        self.wanted: dict[str, str] = {}  # normalized text -> cache name (CREATE CACHE)
        self.dropped: set[str] = set()  # normalized texts DROP CACHE removed
        self.forced = False  # CREATE CACHE is installing a query
        self._ids: dict[str, str] = {}  # shown text -> query id

    def allows(self, key: str, ast: exp.Expression) -> bool:
        """May the SELECT of normalized text ``key`` become a cached query? An IN-list text
        shares the query of its lists two long (``compile.in_list_shape``): that one's rule
        counts too."""
        if self.forced:
            return True
        if self.mode == "auto":
            return not self.dropped or (
                key not in self.dropped and self._shape_key(ast) not in self.dropped
            )
        if key in self.wanted:
            return True
        return bool(self.wanted) and self._shape_key(ast) in self.wanted

    def name_for(self, key: str, engine: Engine) -> str:
        """The name of a query being installed: the one CREATE CACHE gave it, else q<n>."""
        name = self.wanted.get(key)
        if name is not None and name not in engine.queries:
            return name
        return engine._next_name()

    @contextlib.contextmanager
    def forcing(self):
        self.forced = True
        try:
            yield
        finally:
            self.forced = False

    @staticmethod
    def _shape_key(ast: exp.Expression) -> str | None:
        from .engine import _normalize
        from .sql.compile import in_list_shape

        shape = in_list_shape(ast)
        return None if shape is None else _normalize(shape.ast)

    def query_id(self, text: str) -> str:
        """ReadySet's query id: ``q_`` and 16 hex digits of a hash of the query's normalized
        text (the same in every process)."""
        qid = self._ids.get(text)
        if qid is None:
            from .engine import _normalize
            from .sql.parse import parse

            try:
                norm = _normalize(parse(text)[0])
            except E.Error:
                norm = text
            qid = "q_" + hashlib.blake2b(norm.encode(), digest_size=8).hexdigest()
            if len(self._ids) > 10000:
                self._ids.clear()
            self._ids[text] = qid
        return qid


def prepare_cache_command(engine: Engine, sql: str) -> Prepared | None:
    """The statement for a cache command, or None when ``sql`` is none (cheap to ask)."""
    if _FIRST.match(sql) is None:
        return None
    from .engine import FuncPrepared

    m = _CREATE.match(sql)
    if m is not None:
        name = _unquote(m.group("name")) if m.group("name") else None
        text = m.group("q")
        return FuncPrepared(lambda p: create_cache(engine, name, text), 0, kind="ddl")
    m = _DROP.match(sql)
    if m is not None:
        name = _unquote(m.group("name"))
        return FuncPrepared(lambda p: drop_cache(engine, name), 0, kind="ddl")
    if _DROP_ALL.match(sql):
        return FuncPrepared(lambda p: drop_all_caches(engine), 0, kind="ddl")
    if _DROP_PROXIED.match(sql):
        return FuncPrepared(lambda p: drop_proxied_queries(engine), 0, kind="ddl")
    m = _SHOW_ONE.match(sql)
    if m is not None:
        qid = _unquote(m.group("id"))
        return FuncPrepared(lambda p: show_caches(engine, qid), 0)
    m = _SHOW_PROXIED.match(sql)
    if m is not None:
        only = bool(m.group("supported"))
        qid = _unquote(m.group("id")) if m.group("id") else None
        return FuncPrepared(lambda p: show_proxied_queries(engine, only, qid), 0)
    return None


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "`'\"":
        return name[1:-1].replace(name[0] * 2, name[0])
    return name


# ---------------------------------------------------------------------------------------------
# CREATE CACHE


def create_cache(engine: Engine, name: str | None, text: str, restoring: bool = False) -> Result:
    """CREATE CACHE; ``restoring``: the catalog's entry is being installed again (reopening
    the file, or another process changed the catalog), nothing is written."""
    if not restoring:
        engine._ensure_views()  # (a cache's name may be a restored view's)
    from .engine import SelectPrepared, lifts_as_written
    from .sql.literals import lift_literals_cached

    if not restoring:
        engine._ddl_guard()
    rules = engine.cache_rules
    if _QUERY_ID.match(text.strip()):
        entry = _entry_by_id(engine, text.strip())
        if entry is None:
            raise E.ProgrammingError(
                f"Unknown query id '{text.strip()}' (SHOW PROXIED QUERIES lists them)",
                E.ER_BAD_TABLE_ERROR,
                "42S02",
            )
        text = entry.sql
    lifted = None
    if "?" not in text and engine.lift_literals:
        lifted = lift_literals_cached(text)
    prep = None
    if lifted is not None:
        prep, made = _install(engine, lifted[0])
        if not (isinstance(prep, SelectPrepared) and lifts_as_written(prep, tuple(lifted[1]))):
            # the literals do not compare as parameters as they do in the text: the text as
            # written is what reads of it run, so that is what is cached
            if made and isinstance(prep, SelectPrepared):
                engine._remove_query(prep.entry.name)
            prep = None
    if prep is None:
        prep, _made = _install(engine, text)
    if not isinstance(prep, SelectPrepared):
        entry = getattr(prep, "entry", None)
        why = getattr(entry, "reason", None) or "a query without a table to cache"
        raise E.NotSupportedError(
            f"This version of noria_py doesn't yet support '{why}' in a cached query",
            E.ER_NOT_SUPPORTED_YET,
            "42000",
        )
    entry = prep.entry
    old = entry.name if entry.name in rules.wanted.values() else None
    if name is not None and name != entry.name:
        other = engine.queries.get(name)
        if other is not None:
            raise E.ProgrammingError(
                f"Cache '{name}' already exists", E.ER_TABLE_EXISTS_ERROR, "42S01"
            )
        del engine.queries[entry.name]
        entry.name = name
        engine.queries[name] = entry
    elif name is None and old is None:
        # an automatic cache asked for by CREATE CACHE: named by its query id, as ReadySet does
        qid = rules.query_id(entry.sql)
        if qid not in engine.queries:
            del engine.queries[entry.name]
            entry.name = qid
            engine.queries[qid] = entry
    keys = _keys_of(engine, entry)
    for key in keys:
        rules.wanted[key] = entry.name
        rules.dropped.discard(key)
    if not restoring:
        st = engine.storage
        st.begin()
        if old is not None:
            st.catalog_remove("cache", old)
        st.catalog_remove("cache", entry.name)
        st.catalog_add("cache", entry.name, entry.sql)
        for key in keys:
            st.catalog_remove("nocache", _key_id(key))
        st.commit()
    return Result(rowcount=0)


def _key_id(key: str) -> str:
    return hashlib.blake2b(key.encode(), digest_size=8).hexdigest()


def restore(engine: Engine, entries: list[tuple[str, str, str]]) -> None:
    """The caching rules and the caches of the catalog's ``cache`` and ``nocache`` entries
    (after its tables and views). A cache that no longer installs (its table was dropped, or
    changed so that the query no longer compiles) is left out."""
    rules = engine.cache_rules
    rules.wanted.clear()
    rules.dropped.clear()
    rules.dropped.update(sql for kind, _name, sql in entries if kind == "nocache")
    for kind, name, sql in entries:
        if kind == "cache":
            try:
                create_cache(engine, name, sql, restoring=True)
            except E.Error:
                continue


def _install(engine: Engine, text: str) -> tuple[Prepared, bool]:
    """The statement for SELECT ``text`` with the caching rules set aside, so that it is
    installed when the dataflow can maintain it; and whether it was installed now. A proxied
    entry of the text (of its IN-list shape too) that the rules kept proxied goes first."""
    from .engine import _normalize
    from .sql.parse import parse

    ast, nparams = parse(text)
    if not isinstance(ast, (exp.Select, exp.Union, exp.Intersect, exp.Except, exp.Subquery)):
        raise E.ProgrammingError(
            "CREATE CACHE needs a SELECT (or a query id from SHOW PROXIED QUERIES)",
            E.ER_PARSE_ERROR,
            "42000",
        )
    if engine._qualify(ast, engine._cur.database):
        text = ast.sql(DIALECT)
    key = _normalize(ast)
    keys = [key]
    shape = CacheRules._shape_key(ast)
    if shape is not None:
        keys.append(shape)
    existing = {id(e) for e in engine.queries.values()}
    for k in keys:
        entry = engine._by_sql.get(k)
        if entry is not None and entry.compiled is None and entry.reason is None:
            engine._remove_query(entry.name)  # proxied by the rules only: install it now
    with engine.cache_rules.forcing():
        prep = engine._prepare_ast(ast, nparams, text)
    entry = getattr(prep, "entry", None)
    made = entry is not None and id(entry) not in existing and entry.compiled is not None
    engine._cache.clear()  # statements prepared as proxies are prepared again
    return prep, made


def _is_view(engine: Engine, entry: QueryEntry) -> bool:
    """A view's own entry (named after the view): DROP VIEW removes it, not DROP CACHE."""
    return entry.readerless or entry.name.lower() in engine.view_names


def _keys_of(engine: Engine, entry: QueryEntry) -> list[str]:
    return [k for k, v in engine._by_sql.items() if v is entry]


def _entry_by_id(engine: Engine, qid: str) -> QueryEntry | None:
    rules = engine.cache_rules
    for entry in engine.queries.values():
        if not _is_view(engine, entry) and rules.query_id(entry.sql) == qid:
            return entry
    return None


# ---------------------------------------------------------------------------------------------
# DROP CACHE


def _caches(engine: Engine) -> list[QueryEntry]:
    return [
        e for e in engine.queries.values() if e.compiled is not None and not _is_view(engine, e)
    ]


def drop_cache(engine: Engine, name: str) -> Result:
    engine._ensure_views()  # (the name may be a restored view's: refused as a view)
    engine._ddl_guard()
    entry = engine.queries.get(name)
    if entry is None:
        low = name.lower()
        found = [e for e in engine.queries.values() if e.name.lower() == low]
        entry = found[0] if len(found) == 1 else _entry_by_id(engine, name)
    if entry is not None and _is_view(engine, entry):
        raise E.ProgrammingError(
            f"'{name}' is a view: DROP VIEW removes it", E.ER_BAD_TABLE_ERROR, "42S02"
        )
    if entry is None or entry.compiled is None:
        raise E.ProgrammingError(f"Unknown cache '{name}'", E.ER_BAD_TABLE_ERROR, "42S02")
    _drop(engine, [entry])
    return Result(rowcount=0)


def drop_all_caches(engine: Engine) -> Result:
    engine._ddl_guard()
    _drop(engine, _caches(engine))
    return Result(rowcount=0)


def _drop(engine: Engine, entries: list[QueryEntry]) -> None:
    """Remove the queries of ``entries``: their readers and every node no other query uses
    (``Graph.release``), with their state and their keys in the eviction policy. Each stays
    proxied until CREATE CACHE asks for it again."""
    if not entries:
        return
    engine._drain()  # nothing in flight towards the nodes that go
    rules = engine.cache_rules
    st = engine.storage
    st.begin()
    for entry in entries:
        st.catalog_remove("cache", entry.name)
        for key in _keys_of(engine, entry):
            rules.wanted.pop(key, None)
            rules.dropped.add(key)
            st.catalog_remove("nocache", _key_id(key))
            st.catalog_add("nocache", _key_id(key), key)
        engine._remove_query(entry.name)
    st.commit()
    graph = engine.graph
    if graph.evictor is not None:
        graph.evictor.forget_removed(graph)
    from .dataflow.plan_upqueries import update_probe_flags

    update_probe_flags(list(graph.nodes.values()))


def drop_proxied_queries(engine: Engine) -> Result:
    """Forget the proxied queries (each is listed again when next read); a view's own entry
    stays, whatever answers it."""
    for entry in [e for e in engine.queries.values() if e.compiled is None]:
        if not _is_view(engine, entry):
            engine._remove_query(entry.name)
    return Result(rowcount=0)


# ---------------------------------------------------------------------------------------------
# SHOW CACHES, SHOW PROXIED QUERIES


def show_caches(engine: Engine, qid: str | None = None) -> Result:
    """SHOW CACHES [WHERE query_id = ...]."""
    from .engine import _estimate_bytes

    rules = engine.cache_rules
    names = ["name", "query", "status", "keys", "hits", "misses", "bytes"]
    names += ["query id", "fallback behavior", "count"]
    rows = []
    for name, entry in engine.queries.items():
        keys = nbytes = None
        if entry.compiled is not None and not entry.readerless:
            reader = entry.compiled.reader
            keys = reader.state_size()[0]
            nbytes = _estimate_bytes(reader)
        fallback = "fallback allowed" if entry.compiled is not None else None
        this_id = rules.query_id(entry.sql)
        if qid is not None and this_id != qid:
            continue
        count = entry.hits + entry.misses
        rows.append(
            (name, entry.sql, entry.status, keys, entry.hits, entry.misses, nbytes)
            + (this_id, fallback, count)
        )
    types = ["VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "BIGINT", "BIGINT", "BIGINT"]
    types += ["VARCHAR", "VARCHAR", "BIGINT"]
    nullable = [False, False, False, True, False, False, True, False, True, False]
    return Result(names, rows, types, nullable, len(rows))


def show_proxied_queries(engine: Engine, supported_only: bool, qid: str | None) -> Result:
    rules = engine.cache_rules
    names = ["query id", "proxied query", "readyset supported", "count", "reason"]
    rows = []
    for entry in list(engine.queries.values()):
        if entry.compiled is not None or _is_view(engine, entry):
            continue
        this_id = rules.query_id(entry.sql)
        if qid is not None and this_id != qid:
            continue
        if entry.cacheable is None:
            _check(engine, entry)
        if supported_only and not entry.cacheable:
            continue
        supported = {True: "yes", False: "no", None: "pending"}[entry.cacheable]
        rows.append((this_id, entry.sql, supported, entry.hits, entry.reason))
    types = ["VARCHAR", "VARCHAR", "VARCHAR", "BIGINT", "VARCHAR"]
    return Result(names, rows, types, [False, False, False, False, True], len(rows))


def _check(engine: Engine, entry: QueryEntry) -> None:
    """Could the dataflow maintain this proxied query? Compiled and set aside again (nothing
    is installed); a no names the construct in ``entry.reason``."""
    from .sql.compile import Compiler
    from .sql.expr import Unsupported
    from .sql.parse import parse

    try:
        ast, nparams = parse(entry.sql)
    except E.Error as e:
        entry.cacheable, entry.reason = False, str(e)
        return
    compiler = Compiler(engine.graph, engine.storage, engine.views)
    try:
        compiler.compile_query(ast, nparams)
        entry.cacheable = True
    except (Unsupported, E.Error) as e:
        entry.cacheable, entry.reason = False, str(e)
    except Exception as e:  # noqa: BLE001 - sqlglot raises assorted errors
        entry.cacheable, entry.reason = False, f"{type(e).__name__}: {e}"
    finally:
        engine._discard(compiler)
