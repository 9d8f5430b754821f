"""Base table node: the root of every dataflow path. Its rows live in base storage (SQLite)."""

from __future__ import annotations

from ..node import Node


class BaseTable(Node):
    kind = "base"

    def __init__(self, table: str, columns: list[str], kinds: list[str], storage):
        super().__init__([], columns, kinds)
        self.table = table
        self.storage = storage

    def on_input(self, port: int, batch: list) -> list:
        return batch

    def contents(self) -> list:
        return [(row, 1) for row in self.storage.scan(self.table)]

    def query(self, cols, key) -> list:
        return [(row, 1) for row in self.storage.lookup(self.table, list(cols), tuple(key))]

    def describe(self) -> str:
        return f"base {self.table}"
