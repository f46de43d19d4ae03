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

import contextlib
import os
import weakref
from collections.abc import Callable, Iterator
from typing import TypeVar

import duckdb

from .sizes import parse_size

_open: weakref.WeakSet = weakref.WeakSet()
T = TypeVar("T")

# DuckDB memory for the queries rdbscan runs (report, query, schema, diff, trend): beyond it they
# spill to a temporary directory instead of growing the process.  `--memory-limit` or the
# environment variable RDBSCAN_MEMORY_LIMIT raise it (docs/exit-codes.md, exit 8); `sql` keeps
# DuckDB's own default unless one of them is given.
DEFAULT_MEMORY_LIMIT = "128MB"
# The report's queries (and `query`'s, `schema`'s) over a database rdbscan wrote, which runs
# after the load in the same process: its peak is the process's (docs/benchmarks.md, "Peak
# memory of `load` and `report`").  DuckDB caches the blocks of `key_rows` it reads up to the
# limit, and the bundled queries are written to spill or to hold little beyond it (a Parquet
# dataset, read through a reader per file, keeps DEFAULT_MEMORY_LIMIT).
DATABASE_MEMORY_LIMIT = "48MB"
MEMORY_LIMIT_ENV = "RDBSCAN_MEMORY_LIMIT"
MIN_MEMORY_LIMIT = 16 * 10**6  # below it DuckDB cannot run the bundled queries at all
_chosen: dict[str, str | None] = {"limit": None}


def parse_memory_limit(text: str) -> str:
    """A memory size as DuckDB's `SET memory_limit` takes it ("512MB", "2GiB"), checked; raises
    ValueError naming what is wrong."""
    size = parse_size(text)
    if size < MIN_MEMORY_LIMIT:
        raise ValueError(f"{text!r} is below the 16MB minimum")
    return f"{size}B"


def set_memory_limit(text: str | None) -> None:
    """The memory limit of the query connections opened from now on (None: back to the default)."""
    _chosen["limit"] = None if text is None else parse_memory_limit(text)


def chosen_memory_limit() -> str | None:
    """The limit given by --memory-limit or RDBSCAN_MEMORY_LIMIT, or None."""
    if _chosen["limit"] is not None:
        return _chosen["limit"]
    env = os.environ.get(MEMORY_LIMIT_ENV)
    if env:
        try:
            return parse_memory_limit(env)
        except ValueError as e:
            raise ValueError(f"{MEMORY_LIMIT_ENV}: {e}") from None
    return None


def memory_limit(default: str = DEFAULT_MEMORY_LIMIT) -> str:
    """The memory limit of a query connection about to be opened: the chosen one, else
    `default`; remembered for out_of_memory_message."""
    limit = chosen_memory_limit() or default
    _chosen["applied"] = limit
    return limit


def set_database_memory_limit(con: duckdb.DuckDBPyConnection) -> None:
    """The limit of the queries on a database rdbscan wrote: the chosen one, else
    DATABASE_MEMORY_LIMIT, from which a query that cannot fit may grow once (more_memory)."""
    con.execute(f"SET memory_limit = '{memory_limit(DATABASE_MEMORY_LIMIT)}'")
    if chosen_memory_limit() is None:
        _may_grow.add(con)


_may_grow: weakref.WeakSet = weakref.WeakSet()

# The limits a query that ran out of memory at DATABASE_MEMORY_LIMIT tries in turn (more_memory):
# 80 MB, then 96 MB, where every bundled query that needs more than 48 MB has fitted so far (the
# key families of a keyspace of two or five million one-key families: a string aggregate, which
# DuckDB cannot spill).  Two million of them fit 80 MB in four runs of five (the fifth failed
# there in 0.2 s and fitted at 96 MB), and the report's peak is then 184-187 MB instead of
# 201-206 (docs/benchmarks.md, "Two million families within 200 MB").  Then
# DEFAULT_MEMORY_LIMIT, the limit before the report's was lowered, so that no report that used
# to succeed fails.  What runs once (with_room) gets ROOMY_MEMORY_LIMIT from the start: `export`
# of a million keys to standard output needs more than 80 MB to sort them into file order.
ROOMY_MEMORY_LIMIT = "96MB"
GROWN_MEMORY_LIMITS = ("80MB", ROOMY_MEMORY_LIMIT, DEFAULT_MEMORY_LIMIT)


def grown_limits(con: duckdb.DuckDBPyConnection) -> tuple[str, ...]:
    """The limits a query that ran out of memory on `con` may run again at, in turn: none when
    the limit was chosen (--memory-limit, RDBSCAN_MEMORY_LIMIT): a chosen limit stands, and its
    error with it."""
    return GROWN_MEMORY_LIMITS if con in _may_grow else ()


@contextlib.contextmanager
def more_memory(con: duckdb.DuckDBPyConnection, limit: str) -> Iterator[None]:
    """`limit` (one of grown_limits(con)) while one query runs again, then DATABASE_MEMORY_LIMIT
    back."""
    con.execute(f"SET memory_limit = '{limit}'")
    _chosen["applied"] = limit  # what out_of_memory_message says, should it fail
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{DATABASE_MEMORY_LIMIT}'")
    _chosen["applied"] = DATABASE_MEMORY_LIMIT


def with_room(con, run: Callable[[], T], once: bool = False) -> T:
    """run(); on a database rdbscan wrote, run again at each grown limit in turn while it runs out
    of memory at the lower one (grown_limits), the last error raised: the report's queries,
    `query`, `schema` and `export` all take this way.  `run` must be able to start again: a
    statement that failed left nothing behind (a base relation, a file COPY rewrites).  `once`:
    what `run` did cannot be taken back (rows written to standard output), so it runs once, with
    ROOMY_MEMORY_LIMIT from the start."""
    limits = grown_limits(con)
    if once:
        with more_memory(con, ROOMY_MEMORY_LIMIT) if limits else contextlib.nullcontext():
            return run()
    try:
        return run()
    except duckdb.OutOfMemoryException:
        if not limits:
            raise
    for limit in limits[:-1]:
        with more_memory(con, limit):
            try:
                return run()
            except duckdb.OutOfMemoryException:
                pass
    with more_memory(con, limits[-1]):
        return run()


def is_out_of_memory(e: BaseException) -> bool:
    """DuckDB's "Out of Memory Error": a query needed more than its limit and could not spill."""
    return isinstance(e, duckdb.OutOfMemoryException)


def out_of_memory_message(e: BaseException) -> str:
    """The one line that says so, with the way out."""
    first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
    limit = chosen_memory_limit() or _chosen.get("applied") or DEFAULT_MEMORY_LIMIT
    return (
        f"DuckDB ran out of memory at its {_human(limit)} limit and could not spill "
        f"enough to disk ({first}); raise the limit with --memory-limit (for example "
        f"--memory-limit 1GB) or {MEMORY_LIMIT_ENV}"
    )


def _human(limit: str) -> str:
    n = int(limit[:-1]) if limit.endswith("B") and limit[:-1].isdigit() else None
    if n is None:
        return limit
    for unit, size in (("GiB", 1 << 30), ("GB", 10**9), ("MiB", 1 << 20), ("MB", 10**6)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return f"{n:,} bytes"


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
