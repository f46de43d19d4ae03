"""Every DuckDB connection rdbscan opens, so that a Ctrl-C can stop the query that runs.

DuckDB turns a KeyboardInterrupt raised while it runs a query into "Query interrupted" only at
some points of the query; at others it goes on to the end (a `SELECT` over billions of rows
ran on for minutes after Ctrl-C).  `interrupt_all()`, called from another thread by the command
line's signal handler, asks each open connection to stop (DuckDBPyConnection.interrupt).

Only connections that run queries for a reader (`sql`, `query`, the report, the diff) come from
here: the loader's connection (db/store.py) is not interrupted, since the load stops between two
batches by itself and its clean-up runs on that connection right after the signal (an
interrupt landing in the clean-up would leave the load half removed)."""

from __future__ import annotations

import weakref

import duckdb

_open: weakref.WeakSet = weakref.WeakSet()


def connect(database: str = ":memory:", **options) -> duckdb.DuckDBPyConnection:
    """duckdb.connect, remembered for interrupt_all()."""
    con = duckdb.connect(database, **options)
    _open.add(con)
    return con


def interrupt_all() -> None:
    """Stop the query each open connection runs (nothing happens to an idle one)."""
    for con in list(_open):
        try:
            con.interrupt()
        except Exception:  # closed meanwhile
            pass
