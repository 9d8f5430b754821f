"""SHOW statements and DESCRIBE, answered from the information schema."""

from __future__ import annotations

from .. import errors as E
from ..result import Result
from ..sql import names as N
from ..sql import values as V
from ..sql.dialect import DIALECT
from ..sql.parse import parse
from .schema import _mysql8_type, _quote_ident, current_collation_name, show_create_table


def _extra(c) -> str:
    """DESCRIBE's Extra column."""
    if c.generated is not None:
        return "STORED GENERATED" if c.stored else "VIRTUAL GENERATED"
    if c.auto_increment:
        return "auto_increment"
    if c.on_update:
        return "on update current_timestamp"
    return ""


def _sql_str(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "''")


class ShowMixin:
    """SHOW statements and DESCRIBE: a part of ``Engine`` (engine/core.py).

    State it owns: none (reads the catalog: ``storage``, ``views``, ``view_names``).
    Calls into other parts: the catalog (``_database``, ``_resolve_db``), ``_schema`` (core).
    """

    def _show_create_table(self, table: str) -> Result:
        schema = self._schema(table)
        text = show_create_table(schema, current_collation_name(), shown=True)
        return Result(
            ["Table", "Create Table"],
            ((N.bare(schema.name), text),),
            ["VARCHAR", "VARCHAR"],
            [False, False],
            1,
        )

    # --- introspection -----------------------------------------------------------------------
    def _show_info(self, select: str, like=None, like_col: str = "", where=None) -> Result:
        """A SHOW statement answered by a SELECT over information_schema, its LIKE or WHERE
        applied to the SHOW's own column names."""
        from ..infoschema import InfoSchemaPrepared

        cond = None
        if where is not None:
            cond = where.sql(DIALECT)
        elif like is not None:
            cond = f"{_quote_ident(like_col)} LIKE {like.sql(DIALECT)}"
        sql = select if cond is None else f"SELECT * FROM ({select}) AS `__show` WHERE {cond}"
        ast, n = parse(sql)
        return InfoSchemaPrepared(ast, n, sql).run(self, ())

    def _listed_db(self, name: str | None) -> str:
        """The database a SHOW ... FROM db lists (the current one without FROM)."""
        if name is None:
            return self._database()
        canon = self._resolve_db(name)
        return N.HOME if canon is None else canon

    @staticmethod
    def _where_table(table: str) -> str:
        """information_schema's condition for one engine table name."""
        db, bare = N.split(table)
        return f"TABLE_SCHEMA = '{_sql_str(db or N.HOME)}' AND TABLE_NAME = '{_sql_str(bare)}'"

    def _show_databases(self, like=None) -> Result:
        select = (
            "SELECT SCHEMA_NAME AS `Database` FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME"
        )
        return self._show_info(select, like, "Database")

    def _show_create_database(self, name: str) -> Result:
        canon = self._resolve_db(name) if name.lower() != N.INFORMATION_SCHEMA else name
        shown = N.HOME if canon is None else canon
        text = (
            f"CREATE DATABASE {_quote_ident(shown)} /*!40100 DEFAULT CHARACTER SET utf8mb4 "
            f"COLLATE {current_collation_name()} */"
        )
        return Result(["Database", "Create Database"], ((shown, text),), ["VARCHAR"] * 2,
                      [False, False], 1)  # fmt: skip

    def _show_tables(self, full: bool = False, like=None, where=None, db=None) -> Result:
        shown = self._listed_db(db)
        col = f"Tables_in_{shown}"
        extra = ", TABLE_TYPE AS `Table_type`" if full else ""
        select = (
            f"SELECT TABLE_NAME AS {_quote_ident(col)}{extra} FROM information_schema.TABLES "
            f"WHERE TABLE_SCHEMA = '{_sql_str(shown)}' ORDER BY TABLE_NAME"
        )
        return self._show_info(select, like, col, where)

    def _show_columns(self, table: str, full: bool, like=None, where=None) -> Result:
        self._schema_or_view(table)
        coll = ", COLLATION_NAME AS `Collation`" if full else ""
        more = ", PRIVILEGES AS `Privileges`, COLUMN_COMMENT AS `Comment`" if full else ""
        select = (
            f"SELECT COLUMN_NAME AS `Field`, COLUMN_TYPE AS `Type`{coll}, IS_NULLABLE AS `Null`, "
            f"COLUMN_KEY AS `Key`, COLUMN_DEFAULT AS `Default`, EXTRA AS `Extra`{more} "
            f"FROM information_schema.COLUMNS WHERE {self._where_table(table)} "
            "ORDER BY ORDINAL_POSITION"
        )
        return self._show_info(select, like, "Field", where)

    def _show_index(self, table: str, where=None) -> Result:
        self._schema(table)
        select = (
            "SELECT TABLE_NAME AS `Table`, NON_UNIQUE AS `Non_unique`, INDEX_NAME AS `Key_name`, "
            "SEQ_IN_INDEX AS `Seq_in_index`, COLUMN_NAME AS `Column_name`, COLLATION AS "
            "`Collation`, CARDINALITY AS `Cardinality`, SUB_PART AS `Sub_part`, PACKED AS "
            "`Packed`, NULLABLE AS `Null`, INDEX_TYPE AS `Index_type`, COMMENT AS `Comment`, "
            "INDEX_COMMENT AS `Index_comment`, IS_VISIBLE AS `Visible`, EXPRESSION AS "
            "`Expression` FROM information_schema.STATISTICS "
            f"WHERE {self._where_table(table)}"
        )
        return self._show_info(select, where=where)

    def _show_table_status(self, like=None, where=None, db=None) -> Result:
        shown = self._listed_db(db)
        select = (
            "SELECT TABLE_NAME AS `Name`, ENGINE AS `Engine`, VERSION AS `Version`, ROW_FORMAT "
            "AS `Row_format`, TABLE_ROWS AS `Rows`, AVG_ROW_LENGTH AS `Avg_row_length`, "
            "DATA_LENGTH AS `Data_length`, MAX_DATA_LENGTH AS `Max_data_length`, INDEX_LENGTH "
            "AS `Index_length`, DATA_FREE AS `Data_free`, AUTO_INCREMENT AS `Auto_increment`, "
            "CREATE_TIME AS `Create_time`, UPDATE_TIME AS `Update_time`, CHECK_TIME AS "
            "`Check_time`, TABLE_COLLATION AS `Collation`, CHECKSUM AS `Checksum`, "
            "CREATE_OPTIONS AS `Create_options`, TABLE_COMMENT AS `Comment` "
            f"FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{_sql_str(shown)}' "
            "ORDER BY TABLE_NAME"
        )
        return self._show_info(select, like, "Name", where)

    def _show_create_view(self, name: str) -> Result:
        low = name.lower()
        if low not in self.views:
            if low in self.storage.schemas:
                raise E.ProgrammingError(
                    f"'{N.split(name)[0] or N.HOME}.{N.bare(name)}' is not of type 'VIEW'",
                    1347,
                    "HY000",
                )
            raise E.no_such_table(name)
        real = N.bare(self.view_names.get(low, name))
        text = (
            "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW "
            f"{_quote_ident(real)} AS {N.shown_sql(self.views[low])}"
        )
        coll = current_collation_name()
        return Result(
            ["View", "Create View", "character_set_client", "collation_connection"],
            ((real, text, "utf8mb4", coll),),
            ["VARCHAR"] * 4,
            [False] * 4,
            1,
        )

    def _schema_or_view(self, name: str) -> None:
        if name.lower() not in self.views:
            self._schema(name)

    def _describe(self, table: str) -> Result:
        schema = self._schema(table)
        rows = []
        for i, c in enumerate(schema.columns):
            key = ""
            if i in schema.primary_key:
                key = "PRI"
            elif any(u == [i] for u in schema.uniques):
                key = "UNI"
            elif any(ix and ix[0] == i for ix in schema.indexes):
                key = "MUL"
            default = None
            if c.has_default:
                default = (
                    "CURRENT_TIMESTAMP"
                    if callable(c.default)
                    else (None if c.default is None else V.format_value(c.default))
                )
            rows.append(
                (
                    c.name,
                    _mysql8_type(c.ctype),
                    "YES" if c.nullable else "NO",
                    key,
                    default,
                    _extra(c),
                )
            )
        names = ["Field", "Type", "Null", "Key", "Default", "Extra"]
        return Result(
            names, rows, ["VARCHAR"] * 6, [False, False, False, False, True, False], len(rows)
        )
