"""The write path every write takes: apply to base storage, append to the change log (a
shared file), and push the signed deltas through the dataflow (in place, or to the domain
threads).
"""

from __future__ import annotations

import time


class _Multi:
    """What a write function returns when it changed several tables (foreign-key cascades):
    ``(table, delta)`` pairs, each entering the dataflow at its table's base node."""

    __slots__ = ("pairs",)

    def __init__(self, pairs: list) -> None:
        self.pairs = pairs


class _Unlogged(list):
    """A write's delta that the change log does not carry: the other processes on the file are
    told to rebuild their views from base storage instead (a bulk load)."""


def _pairs(table: str, batch) -> list:
    if isinstance(batch, _Multi):
        return [(t, b) for t, b in batch.pairs if b]
    return [(table, batch)] if batch else []


class WritePathMixin:
    """The write path: a part of ``Engine`` (engine/core.py).

    State it owns: the dataflow domain (``_pending``, ``_thread``, ``_wake``, ``batch_window``,
    ``inbox_limit``; ``_runtime`` when domains run as messages) and ``write_count``.
    Calls into other parts: transactions (``_write_gate``, ``_catch_up``, ``_writer``,
    ``_failure``) and ``_check_open`` (core).
    """

    # --- the dataflow domain ------------------------------------------------------------------
    def _dispatch(self, node, batch) -> None:
        """Hand a base-table delta to the dataflow: now (inline) or to the domain thread."""
        if self._thread is None:
            self.graph.propagate(node, batch)
            return
        if len(self._pending) >= self.inbox_limit:
            self._drain()  # backpressure: a full inbox is emptied by the writer itself
        self._pending.append((node, batch))
        with self._wake:
            self._wake.notify()

    def _drain(self) -> None:
        """Apply every pending delta (under the engine lock), so base storage and the dataflow
        agree: done before anything reads base storage for the dataflow (fills, new queries).
        A shared file: pin a snapshot that holds this process's last commit."""
        if self._pin_stale:
            with self.lock:
                self._catch_up()
        if self._runtime is not None:
            with self.lock:
                self._runtime.wait_idle()
            return
        if not self._pending:
            return
        with self.lock:
            pending = self._pending
            while pending:
                node, batch = pending.popleft()
                # merge consecutive deltas of one table into one batch
                while pending and pending[0][0] is node:
                    batch = batch + pending.popleft()[1]
                if node.graph is not None:
                    self.graph.propagate(node, batch)

    def _domain_loop(self) -> None:
        while not self._closed:
            with self._wake:
                if not self._pending:
                    self._wake.wait(timeout=0.1)
            if not self._pending:
                continue
            if self.batch_window:
                time.sleep(self.batch_window)  # let concurrent writes join the batch
            try:
                self._drain()
            except BaseException as e:  # noqa: BLE001 - surfaced to the next caller
                self._failure = e
                return

    def _domain_failed(self, error: BaseException) -> None:
        self._failure = error

    def sync(self) -> None:
        """Wait until every acknowledged write has reached every view (with a shared file:
        every write any process committed before this call)."""
        self._check_open()
        self._drain()
        if self.shared:
            with self.lock:
                self._catch_up()

    def _forget_tx_fills(self) -> None:
        """Keys filled inside a transaction read its uncommitted writes: drop them."""
        log, self.graph.fill_log = self.graph.fill_log, None
        for node, key in log or ():
            if node.graph is not None:
                if self._runtime is not None:
                    self._runtime.evict(node, key)  # on the node's own domain thread
                else:
                    node.evict_key(key)

    def _push(self, deltas: list) -> None:
        """Send base-table deltas into the dataflow, merging consecutive ones per table."""
        merged: dict[str, list] = {}
        order: list[str] = []
        for table, batch in deltas:
            if table not in merged:
                merged[table] = []
                order.append(table)
            merged[table].extend(batch)
        pairs = []
        for table in order:
            node = self.graph.lookup(f"base({table})")
            if node is not None and node.children:
                pairs.append((node, merged[table]))
        self._dispatch_nodes(pairs)

    def _dispatch_nodes(self, pairs: list) -> None:
        """Hand several base deltas (``(base node, batch)``, all in base storage already) to
        the dataflow, in order."""
        if self._thread is None and self._runtime is None:
            self.graph.propagate_all(pairs)
            return
        for node, batch in pairs:
            self._dispatch(node, batch)

    def _write(self, table: str, fn, single: bool = False) -> None:
        """Run ``fn`` (which changes SQLite and returns a delta) atomically, then propagate.

        ``single`` says ``fn`` issues exactly one SQLite statement, which SQLite already applies
        atomically, so no explicit transaction is needed.
        """
        if self._writer is not self._cur:
            self._write_gate(self._cur)
        rt = self._runtime
        if rt is not None and not self._tx:
            # SQLite's change and its delta go together under base storage's lock, so a base
            # upquery answered on a domain thread sees both or neither
            rt.throttle()
            rt.base_acquire()
            try:
                self._write_now(table, fn, single)
            finally:
                rt.base_release()
            self.write_count += 1
            return
        self._write_now(table, fn, single)
        self.write_count += 1  # the write statements that succeeded, for noria_py/monitor

    def _catch_up_writer(self, pin: bool = False) -> None:
        """Just after taking base storage's write lock (a shared file): apply what other
        processes committed before it, so this write's delta follows theirs. ``pin``: a
        transaction starts, whose fills need a snapshot holding this process's last commit."""
        if self.storage.others_committed() or (pin and self._pin_stale):
            self._catch_up()

    def _write_now(self, table: str, fn, single: bool) -> None:
        if self.shared:
            self._write_logged(table, fn)
            return
        if single and not self._tx:
            batch = fn()
            if batch:
                node = self.graph.lookup(f"base({table})")
                if node is not None and node.children:
                    self._dispatch(node, batch)
            return
        if self._tx:
            if single:
                batch = fn()  # one statement: SQLite undoes its own part if it fails
            else:
                self.storage.savepoint("noria_stmt")
                try:
                    batch = fn()
                except BaseException:
                    self.storage.rollback_to("noria_stmt")
                    raise
                self.storage.release("noria_stmt")
            for t, b in _pairs(table, batch):
                self._tx_deltas.append((t, b))
                self._tx_tables.add(t.lower())
            return
        self.storage.begin()
        try:
            batch = fn()
        except BaseException:
            self.storage.rollback()
            raise
        self.storage.commit()
        self._dispatch_pairs(_pairs(table, batch))

    def _dispatch_pairs(self, pairs: list) -> None:
        self._dispatch_nodes(self._base_pairs(pairs))

    def _base_pairs(self, pairs: list) -> list:
        """``(table, batch)`` pairs as ``(base node, batch)`` for the tables the dataflow reads."""
        out = []
        for t, b in pairs:
            node = self.graph.lookup(f"base({self.storage.schemas[t.lower()].name})")
            if node is not None and node.children:
                out.append((node, b))
        return out

    def _pin_own(self, pairs: list) -> None:
        """A shared file, just after this process committed ``pairs``: lookup joins read the
        pinned snapshot, so pin one that holds the commit (and apply what other processes
        committed up to it) before the commit's deltas enter, which stay pending meanwhile."""
        if not self.graph.lookup_count or self._runtime is not None:
            return
        held = self.graph.hold(self._base_pairs(pairs))
        try:
            self._catch_up()
        finally:
            self.graph.unhold(held)

    def _write_logged(self, table: str, fn) -> None:
        """A write to a shared file: its delta goes into the change log in its transaction."""
        st = self.storage
        if self._tx:
            st.savepoint("noria_stmt")
            try:
                pairs = self._log(table, fn())
            except BaseException:
                st.rollback_to("noria_stmt")
                raise
            st.release("noria_stmt")
            for t, b in pairs:
                self._tx_deltas.append((t, b))
                self._tx_tables.add(t.lower())
            return
        st.begin()  # the write lock: other processes' commits are all in the log now
        try:
            self._catch_up_writer()
            pairs = self._log(table, fn())
        except BaseException:
            st.rollback()
            raise
        st.commit()
        self._pin_own(pairs)
        self._dispatch_pairs(pairs)
        self._pin_stale = True  # the next fill pins a snapshot that holds this write
        if self._runtime is not None:
            # domain threads answer base upqueries from the pinned snapshot without asking:
            # pin one holding this write now, while base storage's lock still pairs the two
            self._catch_up()

    def _log(self, table: str, batch) -> list:
        """Put a write's delta in the change log (in its transaction); returns its pairs."""
        pairs = _pairs(table, batch)
        if isinstance(batch, _Unlogged):
            self.storage.log_rebuild()
            return pairs
        for t, b in pairs:
            self.storage.log_append(self._origin, t, b)
        return pairs
