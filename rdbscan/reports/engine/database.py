"""A database rdbscan wrote (or a Parquet dataset), opened for the report queries."""

from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

import duckdb

from ...db.connections import connect, set_database_memory_limit
from ...db.macros import create_macros
from ...db.store import (
    StoreError,
    check_schema,
    family_again_sql,
    family_rule_is_older,
    recorded_family_rule,
)
from ...errors import EXIT_DATABASE, EXIT_INPUT, CommandError, database_fault
from .querylib import sql_literal

# DuckDB memory for queries on an opened database or Parquet dataset
# (db/connections.DATABASE_MEMORY_LIMIT, grown for a query that needs more, unless
# --memory-limit or RDBSCAN_MEMORY_LIMIT says otherwise).  The bundled queries stream over the `keys` table (rkeys is a view) and keep
# aggregates, so they fit; what does not (a keyspace of unique families, millions of keys
# breaking naming rules) spills to a temporary directory instead of growing the process.


def open_database(path: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a database rdbscan wrote and (re)create the macros; TEMP macros if it is read-only.

    Queries get memory_limit() and spill to a directory of their own under the system temporary
    directory (DuckDB creates it when it first spills and removes it when the connection closes):
    the default, next to the database file, may not be writable.
    """
    from ...db.parquet import is_dataset

    if is_dataset(path):  # a Parquet dataset: views over its files (docs/fleet.md)
        from .dataset import open_dataset

        return open_dataset(path)
    if not Path(path).exists():
        raise FileNotFoundError(path)
    con = None
    if not read_only:
        try:
            con = connect(path)
            create_macros(con)
        except duckdb.Error:
            # locked by another process, or a read-only file: fall back to TEMP macros
            if con is not None:
                con.close()
            con = None
    if con is None:
        con = connect(path, read_only=True)
        create_macros(con, temporary=True)
    con.execute("SET enable_progress_bar = false")
    set_database_memory_limit(con)
    spill = os.path.join(tempfile.gettempdir(), f"rdbscan-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        con.execute("SET temp_directory = " + sql_literal(spill))
    except duckdb.Error:
        pass  # the database is open elsewhere in this process and has spilled already: keep its directory
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    missing = {"keys", "dumps"} - tables
    if missing:
        con.close()
        raise ValueError(
            f"{path} is not an rdbscan database (no {', '.join(sorted(missing))} table)"
        )
    try:
        check_schema(con, path)
    except StoreError:
        con.close()
        raise
    show_families_again(con)
    return con


def show_families_again(con: duckdb.DuckDBPyConnection) -> None:
    """On a database an older family rule wrote (store.FAMILY_RULE: IPv4 and e-mail segments
    were kept as they are): a TEMP view `keys`, ahead of the database's own on the connection's
    search path, whose family is this rule's (store.family_again_sql), so that the report,
    `query`, `schema` and `sql` read the families a load today would store, without writing to
    the database (a load into it updates them for good: Store._update_families).  The macros
    as TEMP macros too: a read-only database holds those of the rdbscan that wrote it."""
    if not family_rule_is_older(recorded_family_rule(con)):
        return
    create_macros(con, temporary=True)
    (catalog,) = con.execute("SELECT current_database()").fetchone() or ("",)
    quoted = '"' + catalog.replace('"', '""') + '"'
    con.execute(
        "CREATE OR REPLACE TEMP VIEW keys AS SELECT * REPLACE "
        f"({family_again_sql('k')} AS family) FROM {quoted}.main.keys AS k"
    )


def open_report_database(path: str):
    """open_database, with each failure as a one-line CommandError: a
    missing file (EXIT_INPUT), not an rdbscan database or one it cannot open (EXIT_DATABASE)."""
    try:
        return open_database(path)
    except FileNotFoundError:
        raise CommandError(f"{path}: No such file or directory", EXIT_INPUT) from None
    except ValueError as e:  # not an rdbscan database, another schema
        raise CommandError(str(e), EXIT_DATABASE) from None
    except Exception as e:  # duckdb.Error: not a database, newer storage version, locked, ...
        raise database_fault(e, path) or CommandError(
            f"{path}: cannot open as a DuckDB database: {e}", EXIT_DATABASE
        ) from None
