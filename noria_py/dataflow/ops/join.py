"""Equi-join (inner or left) of two parents.

The join keeps its own copy of each input, indexed by the join key: the state of side A that a
delta from side B is joined with is exactly what the join has received from A so far. That makes
the output correct whatever order the two inputs' deltas arrive in, including self-joins and
diamonds where one base change reaches both inputs (delta(A join B) = dA join B + A' join dB).
It is also what lets a join sit at a domain boundary: it never reads another node's state.

Rows whose key contains NULL never match (SQL equality); for a left join they are padded.
"""

from __future__ import annotations

from ..node import FULL, Node


class Join(Node):
    kind = "join"
    materialization = FULL

    def __init__(self, left: Node, right: Node, left_key: list[int], right_key: list[int], outer):
        names = left.columns + right.columns
        kinds = left.kinds + right.kinds
        super().__init__([left, right], names, kinds)
        self.left_key = tuple(left_key)
        self.right_key = tuple(right_key)
        self.outer = outer  # True for LEFT JOIN
        self.left_state: dict = {}  # key -> {row: count}
        self.right_state: dict = {}
        self.pad = (None,) * len(right.columns)
        if len(left_key) == 1:
            i = left_key[0]
            self._lk = lambda r: r[i]
        else:
            ks = self.left_key
            self._lk = lambda r: tuple([r[i] for i in ks])
        if len(right_key) == 1:
            j = right_key[0]
            self._rk = lambda r: r[j]
        else:
            ks2 = self.right_key
            self._rk = lambda r: tuple([r[i] for i in ks2])
        self._multi = len(left_key) > 1

    def _has_null(self, key) -> bool:
        if self._multi:
            return None in key
        return key is None

    def on_input(self, port: int, batch: list) -> list:
        if port == 0:
            return self._from_left(batch)
        return self._from_right(batch)

    def _from_left(self, batch: list) -> list:
        out = []
        lk = self._lk
        lstate = self.left_state
        rstate = self.right_state
        outer = self.outer
        pad = self.pad
        for row, m in batch:
            key = lk(row)
            bag = lstate.get(key)
            if bag is None:
                bag = lstate[key] = {}
            c = bag.get(row, 0) + m
            if c:
                bag[row] = c
            else:
                del bag[row]
                if not bag:
                    del lstate[key]
            matches = rstate.get(key) if not self._has_null(key) else None
            if matches:
                for rrow, rc in matches.items():
                    out.append((row + rrow, m * rc))
            elif outer:
                out.append((row + pad, m))
        return out

    def _from_right(self, batch: list) -> list:
        out = []
        rk = self._rk
        lstate = self.left_state
        rstate = self.right_state
        outer = self.outer
        pad = self.pad
        for row, m in batch:
            key = rk(row)
            if self._has_null(key):
                continue  # never matches anything; not needed for output
            bag = rstate.get(key)
            before = bool(bag)
            if bag is None:
                bag = rstate[key] = {}
            c = bag.get(row, 0) + m
            if c:
                bag[row] = c
            else:
                del bag[row]
            after = bool(bag)
            if not bag:
                del rstate[key]
            lefts = lstate.get(key)
            if not lefts:
                continue
            if outer and before != after:
                # the left rows switch between padded and matched
                sign = -1 if after else 1
                for lrow, lc in lefts.items():
                    out.append((lrow + pad, sign * lc))
            for lrow, lc in lefts.items():
                out.append((lrow + row, lc * m))
        return out

    def contents(self) -> list:
        out = []
        rstate = self.right_state
        pad = self.pad
        for key, bag in self.left_state.items():
            matches = rstate.get(key) if not self._has_null(key) else None
            for lrow, lc in bag.items():
                if matches:
                    for rrow, rc in matches.items():
                        out.append((lrow + rrow, lc * rc))
                elif self.outer:
                    out.append((lrow + pad, lc))
        return out

    def describe(self) -> str:
        kind = "left join" if self.outer else "join"
        on = ", ".join(
            f"{self.parents[0].columns[a]}={self.parents[1].columns[b]}"
            for a, b in zip(self.left_key, self.right_key)
        )
        return f"{kind} on {on}"

    def key_columns(self) -> list[int]:
        return list(self.left_key)

    def state_size(self):
        keys = len(self.left_state) + len(self.right_state)
        rows = sum(len(b) for b in self.left_state.values())
        rows += sum(len(b) for b in self.right_state.values())
        return (keys, rows)

    def on_removed(self):
        self.left_state = {}
        self.right_state = {}
