"""Reports over a Parquet dataset (`rdbscan report DIR/`, docs/fleet.md): an in-memory DuckDB
whose views have the names and columns of a database's tables, read from the dataset's files
with read_parquet and hive partitioning.  Nothing is copied: each query reads the files.
The views list the files of the dataset's dumps (Dataset.files: dumps whose `dumps` file, the
commit mark, is there), not a glob: the files of a writer still running, or of one killed, are
never read.

A table without files (a dataset with no streams) is an empty view of the table's columns, from
the database schema itself (rdbscan/db/store.py DDL, in an attached in-memory database).
"""

from __future__ import annotations

import os
import tempfile
import uuid

import duckdb

from ...db.connections import connect, set_database_memory_limit
from ...db.macros import MACROS, create_macros
from ...db.parquet import TABLES, Dataset
from ...db.store import DDL, SCHEMA_VERSION, family_again_sql, family_rule_is_older
from . import querylib

_TYPES = "rdbscan_types"


def open_dataset(path: str) -> duckdb.DuckDBPyConnection:
    """A connection on which the dataset at `path` (a directory or an object-store URL) reads
    as an rdbscan database: views keys, dumps, db_sizes, slot_info, streams, stream_groups,
    rdbscan_meta, and the macros; queries get a database's memory limit and spill past it
    (connections.set_database_memory_limit).  StoreError when `path` is no dataset."""
    con = connect(":memory:")
    try:
        create_macros(con)  # before the views: `keys` may call key_pattern (_view_sql)
        attach_dataset(con, path, "memory")
        con.execute("SET enable_progress_bar = false")
        set_database_memory_limit(con)
        spill = f"rdbscan-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"  # as open_database's
        con.execute(
            "SET temp_directory = "
            + querylib.sql_literal(os.path.join(tempfile.gettempdir(), spill))
        )
    except BaseException:
        con.close()
        raise
    return con


def attach_dataset(con, path: str, catalog: str) -> None:
    """Create the dataset's views in `catalog` of `con` (attached as an in-memory database
    unless it is `memory`, the connection's own): how `rdbscan diff` attaches a dataset beside
    databases."""
    dataset = Dataset(path)
    if dataset.remote:  # read through the same fsspec file system as rdbscan writes with
        con.register_filesystem(dataset.fs)
    if catalog != "memory":
        con.execute(f"ATTACH ':memory:' AS {catalog}")
    known = {r[0] for r in con.execute("SELECT database_name FROM duckdb_databases()").fetchall()}
    if _TYPES not in known:
        con.execute(f"ATTACH ':memory:' AS {_TYPES}")
        con.execute(f"USE {_TYPES}")
        try:
            con.execute(DDL)
            for macro in MACROS:
                con.execute(macro)
        finally:
            con.execute("USE memory")
    rule = dataset.meta().get("family_rule")
    older = family_rule_is_older(None if rule is None else str(rule))
    for table in TABLES:
        con.execute(_view_sql(con, dataset, table, catalog, older))
    con.execute(
        f"CREATE VIEW {catalog}.main.rdbscan_meta AS SELECT 'schema_version' AS name, "
        f"'{SCHEMA_VERSION}' AS value"
    )


def _view_sql(con, dataset: Dataset, table: str, catalog: str, older_families: bool) -> str:
    """The view of one table: its columns (the database's types) from the dataset's files, the
    partition columns (dump_id; dumps.instance) from the paths.  `older_families`: the dataset
    was made by an rdbscan of an older family rule (no `family_rule` in its marker file, whose
    keys files keep the families they were written with), and `keys.family` is worked out again
    for the keys this rule gives another family (store.family_again_sql)."""
    columns = con.execute(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_catalog = ? AND table_name = ? ORDER BY ordinal_position",
        [_TYPES, table],
    ).fetchall()
    files = dataset.files(table)
    view = f"{catalog}.main.{table}"
    if not files:
        return f"CREATE VIEW {view} AS SELECT * FROM {_TYPES}.main.{table}"
    names = ", ".join(querylib.sql_literal(_url(dataset, f)) for f in files)
    hive = "{'dump_id': INTEGER, 'snapshot': INTEGER, 'instance': VARCHAR}"
    union, have = "", None
    if table == "dumps":  # one row per dump: files written before a column was added lack it
        union = ", union_by_name = true"
        have = {
            r[0]
            for r in con.execute(
                f"DESCRIBE SELECT * FROM read_parquet([{names}], union_by_name = true)"
            ).fetchall()
        }
    again = {"family": f"({family_again_sql('k')})"} if table == "keys" and older_families else {}
    select = ", ".join(
        f"{again.get(name) or _quoted(name)}::{kind} AS {_quoted(name)}"
        if have is None or name in have
        else f'NULL::{kind} AS "{name}"'
        for name, kind in columns
    )
    # Every file of a table but `dumps` has the same columns (one writer schema per
    # SCHEMA_VERSION, which the dataset's marker checks), so no union_by_name: with it each scan
    # kept every file's reader.  Each scan of the view holds a reader per file and thread, so a
    # query the report runs here scans the keys once (big_keys_top_grouped: one grouped pass, not
    # big_keys_top's one scan per type).
    return (
        f"CREATE VIEW {view} AS SELECT {select} FROM read_parquet("
        f"[{names}], hive_partitioning = true, hive_types = {hive}{union}) AS k"
    )


def _quoted(name: str) -> str:
    return f'"{name}"'


def _url(dataset: Dataset, path: str) -> str:
    """A file of the dataset as DuckDB opens it: a local path, or the URL with its scheme."""
    return dataset.url(path[len(dataset.root) + 1 :])
