"""The operator contract every node in the dataflow graph follows.

A node receives batches from its parents on numbered *ports* (port i = parent i) and returns the
batch it emits to its children. Operators are deterministic and distributive over delta
addition: processing two batches one after the other emits the same multiset as processing their
sum. ``contents()`` returns a node's current full output, which is how a newly installed child
gets its initial state (a replay of its ancestors' current contents).

Every operator implements the contract for itself (a default here, overridden per operator);
the planner, the engine, the message runtime, the audit, the eviction points and the Spark
replay call only these methods (no checks of operator classes, no private members):

* processing (``Graph``, the engine, every runtime): ``on_input(port, batch)`` (a delta in, the
  delta out; records a partial state drops are probed for below), ``contents()`` (the full
  output: a new child's initial state), ``on_probe`` (a record dropped upstream: evict what it
  may affect, pass the probe on);
* provenance (planner, lookup joins, ``sqlrel``): ``source_column`` (the base column an output
  column is a copy of), ``base_tables``, ``traceable``/``range_traceable``/``stateless_to_base``
  (what a lookup by some columns reaches);
* indexes and partial state (``plan_upqueries.py``): ``plan_need``/``plan_pass``/``plan_range``
  (partial or full, and the indexes its parents need), ``fill_carriers``/``fill_key``/
  ``congruent`` (which drops need probes);
* upqueries in process (``connect(upqueries="direct")``): ``query(cols, key)`` (the output rows
  of a key, filling partial state on the way), ``answerer(cols)`` (``query`` by ``cols``
  planned once: a reader's miss calls it) and ``query_range``;
* upqueries as messages (``domain.py``): ``on_request`` (answer from its own state or ask the
  parents), ``on_response`` (an answer passing through), ``on_fill`` (an answer filling its own
  state), ``fill_now`` (a fill made at once, without messages, when the node can),
  ``request_fill`` (what a fill asks the parents), ``fold_held`` (a delta meeting
  answers held here), ``placement`` (its domain);
* base storage: ``sql_rel`` (itself as one SQL relation, so a fill is one query),
  ``build_from_storage`` (a full state from one query), ``key_gate`` (whether a record of some
  key would be dropped silently below, so a lookup join can skip it);
* eviction and state (``eviction.py``, ``audit.py``, ``Graph``): ``evict_key`` (on stateful
  nodes), ``filled_keys``, ``state_size``, ``sample_state``, ``compare_filled`` (the audit
  against a fully materialized twin), ``make_full``, ``on_added``/``on_removed``;
* EXPLAIN (``explain.py``): ``describe()`` (one line) and ``key_columns()``;
* Spark bulk replay (``spark/replay.py``): ``replay_role`` (whether a full node's initial state
  may come from Spark) and ``replay_op`` (the node as a relational operation Spark can run, or
  why not); the dataflow never imports pyspark.
"""

from __future__ import annotations

NONE = "none"
FULL = "full"
PARTIAL = "partial"


class Node:
    """Base class of every operator."""

    kind = "node"
    materialization = NONE

    def __init__(self, parents: list[Node], columns: list[str], kinds: list[str]):
        self.id = -1
        self.parents = parents
        self.children: list[tuple[Node, int]] = []
        self.columns = columns
        self.kinds = kinds
        self.signature = ""
        self.refcount = 0
        self.domain = 0

    # --- the contract -------------------------------------------------------------------
    def on_input(self, port: int, batch: list) -> list:
        """Process a batch of deltas (``(row, multiplicity)`` records) from the parent on
        ``port``; return the batch this node emits to its children. A partial state drops the
        records of keys it has not filled and probes below for them (``graph.probe``), unless
        nothing below could hold them. Called by ``Graph.propagate``, the message runtime (a
        ``delta`` message), ``Graph.install`` (the initial replay) and the Spark replay."""
        raise NotImplementedError

    def contents(self) -> list:
        """The node's current full output as a batch of positive records."""
        raise NotImplementedError

    def own_rows(self, cols, keys: list) -> list:
        """The records of this full state whose ``cols`` equal one of ``keys`` (tuples), from
        its own state: how a full node answers an upquery. The default filters ``contents``;
        a state that finds a key's records without listing them all overrides it."""
        from .domain import select

        return select(self.contents(), cols, keys)

    def absorb(self, port: int, batch: list) -> None:
        """Add a batch from ``port`` to a full state being built (``Graph.install``: nothing
        is connected below yet, so no output is wanted). The default is ``on_input`` with its
        output dropped; a state that can skip computing the output overrides it."""
        self.on_input(port, batch)

    def describe(self) -> str:
        """One line for EXPLAIN (columns by position: ``explain.py`` names them)."""
        return self.kind

    def key_columns(self) -> list[int]:
        """The columns this node's state is keyed by, for EXPLAIN's key column."""
        return []

    def column_source(self, col: int):
        """Where output column ``col`` comes from (its provenance, as EXPLAIN names it:
        ``explain.py``): ``(port, input column)`` when it is that input column, a text naming
        the first input's columns by position when it is computed from them (an aggregate's
        ``"COUNT(#1)"``), None when only its own name says what it is (a computed column, a
        base table's column). The default: the same column of the first input, if it has it."""
        if self.parents and len(self.parents[0].columns) > col:
            return (0, col)
        return None

    def state_size(self) -> tuple[int, int]:
        """(keys, rows) held in this node's state."""
        return (0, 0)

    def on_removed(self) -> None:
        """Called when the node leaves the graph: drop state."""

    def on_added(self, graph) -> None:
        """Called when the node joins ``graph`` (before it is planned and installed)."""

    def source_column(self, col: int):
        """``(base table node, its column)`` that output column ``col`` is a copy of, through
        stateless operators only, else None."""
        return None

    def column_type(self, col: int):
        """The declared type (``ColumnType``) of output column ``col`` when it is a copy of a
        base table's column through copies (projections, filters, DISTINCT, joins), else None
        (computed, aggregated, or merged by a union). The compiler reads a DECIMAL argument's
        scale from it."""
        return None

    def build_from_storage(self) -> bool:
        """A full node's initial state computed by base storage directly (one query), instead
        of from its parents' contents; False when it cannot be."""
        return False

    def key_gate(self, port: int, carriers: dict):
        """Early drops: input columns ``carriers`` (column -> component) of port ``port`` hold
        the components of some key upstream. If every record whose key this node (and what it
        feeds) has no state for would be dropped here without a trace (no probe, nothing
        else), return ``holds(key) -> bool``, True when such a record may matter; else None.
        A stateless join calls it to skip lookups for records nobody below would keep."""
        return None

    def sql_rel(self):
        """This node's output as one SQL relation over base storage (``sqlrel.SqlRel``), when
        it holds no state and computes nothing SQLite could compute otherwise, else None."""
        return None

    def base_tables(self) -> set[str] | None:
        """The base tables whose rows this node's output is computed from when it holds no
        state on the way to them (its ``query`` then reads base storage alone), else None."""
        return None

    # --- partial state -------------------------------------------------------------------
    partial = False
    probe_on_drop = True  # see plan_upqueries.update_probe_flags

    def query(self, cols: list[int], key: tuple) -> list:
        """Current output rows whose ``cols`` equal ``key`` (an upquery), filling partial state
        on the way. The default recomputes from the full contents."""
        from .partial import matches

        return [(r, m) for r, m in self.contents() if matches(r, cols, key)]

    def answerer(self, cols: list[int]):
        """``key -> records``: ``query(cols, key)`` planned once for ``cols``, for the
        graph's current shape (a reader keeps it while ``graph.version`` stays the same). A
        node whose upquery by ``cols`` always takes the same way answers it without deciding
        that way again per key; the default is ``query`` itself."""
        cols = list(cols)
        query = self.query
        return lambda key: query(cols, key)

    def _answerer_through(self, cols: list[int], parent_cols: list[int]):
        """``answerer`` of a one-input stateless node whose upquery by ``cols`` asks its parent
        by ``parent_cols`` and passes the answer through ``on_input``: over a stateful parent
        (whose upquery is never one SQL relation), the parent's answerer composed with this
        node's ``on_input``; otherwise ``query``, which looks for that relation per key."""
        parent = self.parents[0]
        if not cols or parent.materialization == NONE:
            return Node.answerer(self, cols)
        inner = parent.answerer(parent_cols)
        on_input = self.on_input
        return lambda key: on_input(0, inner(key))

    def query_many(self, cols: list[int], keys: list[tuple]) -> list:
        """``query`` for several keys at once: the records of every one of ``keys`` (distinct),
        in no particular order (each carries its key in ``cols``). A node that can answer them
        together (base storage: one indexed query) overrides it; the default asks per key."""
        out: list = []
        for key in keys:
            out.extend(self.query(cols, key))
        return out

    def on_probe(self, port: int, rows: list) -> list:
        """A record was dropped upstream: evict what it may affect here, return probes to pass on."""
        return rows

    def evict_key(self, key) -> None:
        """Evict filled key ``key`` (one of ``filled_keys``) of this partial state, probing
        below for what it derived (``graph.probe``). Called by the eviction points
        (``eviction.py``, a runtime's ``evict``) and by ``on_probe``. Nothing to do for a node
        without partial state."""

    def make_full(self) -> None:
        """Turn a partial node full: rebuild its state from its (full) parents' contents."""

    def filled_keys(self) -> list:
        """The keys (or filled pieces) of this partial state that are currently filled: what
        ``evict_key`` takes. Empty for a full or stateless node."""
        return []

    def sample_state(self, n: int = 20) -> list:
        """A few ``(row, count)`` records of this node's state (from at most ``n`` of its keys),
        without computing its contents: what ``Graph.state_bytes`` sizes a partial state by."""
        return []

    def compare_filled(self, twin: Node):
        """Invariant audit (``audit.py``): for each filled key of this partial state, yield
        ``(part, key, held, wanted)``: the rows this node holds for the key and those its fully
        materialized ``twin`` (same signature, same base data) holds for it, as Counters;
        ``part`` names a part of the state ("left", "right") or is empty."""
        return ()

    # --- planning (plan_upqueries.py) ---------------------------------------------------
    # The planner walks a new query from its reader up and asks each node what a lookup on it
    # needs; the node answers for itself and passes the question on to its parents. A node
    # the planner does not know answers "full": nothing traceable, every parent full.

    def traceable(self, cols: list[int]) -> bool:
        """Can ``query(cols, key)`` be answered by lookups instead of a full scan (the key's
        provenance reaches base columns through states keyed by it)? False for no columns."""
        return False

    def range_traceable(self, cols: list[int], col: int) -> bool:
        """Can ``query_range(cols, key, col, ...)`` be answered by ranged lookups in base
        storage (plan_upqueries' module docstring)?"""
        return False

    def stateless_to_base(self, cols: list[int]) -> bool:
        """Does a lookup of ``cols`` reach base storage through no state at all (nothing that
        could be partial or keyed otherwise), only passing columns on?"""
        return False

    def plan_need(self, planner, cols: list[int] | None) -> None:
        """This node is new and planned now: a consumer will look it up by ``cols`` (None: it
        needs every row). Decide partial or full and tell ``planner`` what the parents need
        (``planner.need``). The default holds full state: every parent is needed full."""
        for p in self.parents:
            planner.need(p, None)

    def plan_pass(self, planner, cols: list[int]) -> None:
        """A lookup on ``cols`` passes through this node (planned already, or stateless): the
        index obligations and full requirements of what it asks its parents. The default asks
        nothing."""

    def plan_range(self, planner, cols: list[int], col: int) -> None:
        """A ranged upquery on ``cols`` and range column ``col`` passes through this node (only
        asked where ``range_traceable`` holds): the obligations of what it asks its parents."""

    def fill_carriers(self) -> list[set[int]] | None:
        """For each component of this partial node's fill key, the output columns holding its
        value; None when the node has no fill key of its own."""
        return None

    def fill_key(self, port: int) -> list[int] | None:
        """The columns of input ``port`` this partial state fills by (what its upqueries ask
        that parent for), or None."""
        return None

    def congruent(self, port: int, carriers: list[set[int]]) -> bool:
        """Arriving on ``port`` from a partial state whose fill key's values sit in the columns
        ``carriers`` (``fill_carriers`` of the node above, mapped down), is this node and every
        state below it filled by that same key, so that a key filled down here implies the key
        is filled above (a record dropped above then needs no probe)? A full node is; a
        partial one must be filled by the key and feed only congruent states."""
        if not self.partial:
            return True
        key = self.fill_key(port)
        if key is None:
            return False
        # this state is keyed like the one above, and so must be everything it feeds: a
        # consumer filled some other way (a lookup that bypasses this state) would miss a
        # silent drop above
        own = self.fill_carriers()
        return (
            covers(key, carriers)
            and own is not None
            and all(c.congruent(p, own) for c, p in self.children)
        )

    # --- the message runtime (domain.py) ---------------------------------------------------
    # With ``connect(upqueries="messages")`` (and under the test schedulers) an upquery travels
    # as messages: a request up, the answer back down along the hops it came up. The runtime
    # (``domain.Dataflow``, passed as ``df``) keeps what every node shares (delivery, hops,
    # the fills under way and their waiters, union buffers) and asks the node what to do with
    # each message; the node answers through ``df.request``/``df.respond``/``df.need``.
    # ``hops`` is the tuple of ``(node id, port, cols, keys, ...)`` the request passed, the
    # asker's last; a node appends its own hop when it passes a request on.

    view: dict | None = None
    """Base node id -> sequence number of the last base write that reached this node, kept
    (by ``Dataflow``, from each delta's position) for nodes that read base storage as they
    have received it under message scheduling (``ops/base.py`` ``start_reading``)."""

    gated = False
    """Message scheduling: the delta this node just took stopped at its gate (a lookup join
    whose states below all lack its keys); ``Dataflow`` still sends the delta's position down."""

    placement = "inherit"
    """Where ``domain.assign_domains`` puts the node: "storage" (domain 0, base storage),
    "own" (a new domain: a boundary only its small output crosses) or "inherit" (its
    parents' domain)."""

    def on_request(self, df, up, hops, cols: tuple, keys: list, rng=None) -> None:
        """An upquery for the rows whose ``cols`` equal one of ``keys`` (ranged: ``rng =
        (col, lo, hi, limit, desc)``) reached this node, which is partial or keeps no state (a
        full state answers from its contents without asking). Answer it (``df.respond``) from
        this node's own state, filling the keys first (``df.need``), or pass it on to the
        parents (``df.request``, this node's hop appended). Called by ``Dataflow`` for each
        ``req`` message."""
        raise RuntimeError(f"no upquery handling for {self}")

    def request_by_fill_key(self, df, up, hops, cols: tuple, keys: list, rng=None) -> None:
        """``on_request`` of a partial stateful node that keeps its rows by its fill key (an
        aggregate, a distinct): asked by its fill columns it answers from its own state
        (``_filled_rows``), filling the keys first; asked by other columns it passes the
        upquery on to its parent (nothing is filled here)."""
        if rng is not None:  # pragma: no cover - the planner routes none through it
            raise RuntimeError(f"no ranged upquery through {self}")
        fill = self.fill_cols
        one = len(cols) == 1 and len(fill) == 1  # (the common case: no sorting, no picking)
        if (cols[0] != fill[0]) if one else (sorted(cols) != sorted(fill)):
            hop = (self.id, 0, cols, tuple(keys))
            df.request(self, 0, up, hops + (hop,), cols, keys)
            return
        if one:
            fks = keys if len(keys) == 1 else list(dict.fromkeys(keys))  # (keys are tuples)
        else:
            pos = [cols.index(c) for c in fill]
            fks = list(dict.fromkeys([tuple([k[i] for i in pos]) for k in keys]))
        df.need(self, fks, lambda: df.respond(self, up, hops, self._filled_rows(fks)))

    def fill_by_fill_key(self, df, up, rows: list, add) -> None:
        """``on_fill`` of a node that keeps its rows by its fill key (an aggregate, a distinct,
        as ``request_by_fill_key``): the keys still waited for are marked filled, the parent's
        rows of those keys go to ``add(rows)``, and each key is reported filled."""
        fks = df.answered(self, up)
        if not fks:
            return
        if len(fks) != len(up.keys):  # else the parent answered exactly these keys
            want = set(fks)
            rows = [rec for rec in rows if self._fkey(rec[0]) in want]
        for fk in fks:
            self.filled.add(fk)
            self.fidx.setdefault(fk, set())
        add(rows)
        for fk in fks:
            df.done(self, fk)
            df.graph.filled(self, fk, len(self.fidx.get(fk, ())))

    def on_response(self, df, port: int, up, hops, rows: list, span=None) -> None:
        """An answer from the parent on ``port`` passes through on its way down to ``hops[:-1]``
        (``hops[-1]`` is this node's own hop: what it was asked, and what it asked). Send down
        this node's output for it; ``span`` is the sub-range a ranged request was answered for.
        The default is a stateless operator's: its output for those rows, the same range.
        Called by ``Dataflow`` for each ``resp`` message not addressed to its asker."""
        df.respond(self, up, hops[:-1], self.on_input(port, rows), span)

    def on_fill(self, df, port: int, up, rows: list, span=None) -> None:
        """The answer to upquery ``up`` this node sent to fill its own state (``request_fill``,
        a reader's miss) arrived from the parent on ``port``: add the rows and report each key
        filled (``df.answered`` says which keys are still waited for, ``df.done`` wakes what
        waited). Called by ``Dataflow`` for a ``resp`` message back at its asker."""
        raise RuntimeError(f"no fills at {self}")

    def fill_now(self, fks: list) -> bool:
        """Fill keys ``fks`` of this partial state at once, without messages (from base
        storage as of the writes that have reached this node), if it can: ``df.need`` asks
        first when no other fill of these keys is under way. False (the default) when it
        cannot; ``request_fill`` then asks the parents."""
        return False

    def fill_size(self, fk) -> int:
        """The rows filled key ``fk`` holds, for the eviction bookkeeping (``graph.filled``)."""
        return 0

    def request_fill(self, df, up, fks: list) -> None:
        """Send the upqueries (one upquery ``up``) that fill keys ``fks`` of this partial state:
        ``df.need`` calls it for keys neither filled (``self.filled``) nor being filled. The
        default asks the parent for the rows of ``fill_key(0)``."""
        cols = tuple(self.fill_key(0))
        df.request(self, 0, up, ((self.id, 0, cols, tuple(fks)),), cols, fks)

    def out_pos(self, pos: dict) -> dict:
        """The position (``ops/base.py`` ``Delta``) of this node's output for an input delta
        at ``pos``: the same, but for a lookup join, whose output reflects its own position."""
        return pos

    def fold_held(self, df, port: int, batch: list) -> None:
        """A delta arrives while this node holds answers of upqueries under way (a union's
        buffered pieces, a join's half-filled keys): fold into them what they must include.
        Called by ``Dataflow`` before ``on_input`` when it has fills or buffers at this node."""

    # --- Spark bulk replay (spark/replay.py) ----------------------------------------------
    # A big full node's initial state may be computed by Spark from a snapshot of its base
    # tables. Each node says whether it takes such a replay and what it is as a relational
    # operation; the spark package turns that into DataFrame calls (pyspark stays an optional
    # import only the spark package performs).

    replay_role: str | None = None
    """Whether a full node's input may be computed in Spark: "reduce" (its input is consolidated
    into a much smaller state, so joins and distincts beneath it are recomputed in Spark too),
    "keep" (it keeps every input row: only stateless operators beneath it go to Spark) or None
    (never: its inputs are replayed in process)."""

    def replay_op(self) -> tuple | None:
        """This node as one relational operation over its parents' outputs, for a Spark replay
        of a node below: ``("scan", table)`` (a base table's rows), ``("where", pred)`` (the
        rows for which ``pred(row, None)`` is true), ``("map", source_cols, fns)`` (each output
        column a copy of input column ``source_cols[i]``, or ``fns[i](row, None)`` when that is
        None), ``("union",)`` (every parent's rows), ``("join", left_key, right_key, outer)``
        (an equi-join kept in full), ``("distinct",)`` (each row once, kept in full),
        ``("state",)`` (a state whose contents are at hand: replayed from them, in process);
        None when it has no such translation."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.id} {self.describe()}>"


def parent_contents(node: Node, port: int) -> list:
    return node.parents[port].contents()


def covers(key: list[int], carriers: list[set[int]]) -> bool:
    """Does a downstream key (these columns) name exactly one upstream fill key?"""
    if not key:
        return False
    allc = set().union(*carriers) if carriers else set()
    return all(k in allc for k in key) and all(s & set(key) for s in carriers)


def pass_congruent(node: Node, carriers: list[set[int]]) -> bool:
    """``congruent`` of a node that passes rows on with the same columns (a filter, a union):
    whatever it feeds must be congruent."""
    return all(c.congruent(p, carriers) for c, p in node.children)
