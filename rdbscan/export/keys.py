"""`rdbscan export`: key rows to CSV, JSON Lines or Parquet, written by DuckDB's own writers
(`COPY (SELECT ...) TO`), from a database or dataset, or from dumps loaded into a temporary
database that is removed afterwards (docs/export.md).

    export_keys(con, "keys.csv", fmt="csv", columns="rdbtools")

Memory is that of `load` (the dumps stream into the temporary database) and of DuckDB's writer,
which streams the rows out under the connection's memory limit: no key list is ever held in
Python.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..db.connections import with_room
from ..errors import EXIT_DATABASE, EXIT_USAGE, CommandError, not_overwritten

FORMATS = ("csv", "jsonl", "parquet")
# Where an output's extension names its format (a name without one is CSV).
EXTENSIONS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
}

# `--columns default`: what a script usually wants of a key, in this order.
DEFAULT_COLUMNS = (
    "dump_id",
    "db",
    "key",
    "type",
    "encoding",
    "length",
    "max_elem_bytes",
    "memory_bytes",
    "memory_total_bytes",
    "serialized_bytes",
    "expire_at_ms",
    "idle_seconds",
    "lfu_freq",
    "slot",
    "family",
)

# rdbtools' `rdb -c memory` CSV: its header, and each column as SQL over the `keys` view.
# The conventions are those of rdbtools' memory profiler (rdbtools/memprofiler.py, 0.1.15):
#  * type: `sortedset` for zset, `module` for every module value;
#  * encoding: `string` for every string, `quicklist` for every list (rdbtools assumes a 3.2+
#    server and predicts it), `listpack` for streams, the RDB encoding otherwise (ziplist,
#    zipmap, intset, hashtable, skiplist); a module value: its module type name;
#  * num_elements: a string's length, an integer stored as an integer (RDB int encoding: an
#    integer of the int32 range) counting 8 (a long); 1 for a stream and a module value;
#  * len_largest_element: the same for a string; 8 for an intset;
#  * expiry: the expiry in UTC as Python's datetime.isoformat() writes it (microseconds only
#    when not zero), empty without a TTL.
# size_in_bytes is rdbscan's estimate (memory_bytes, MEMORY USAGE of the server that wrote the
# dump), not rdbtools' own model: docs/export.md says where the two differ.
RDBTOOLS_HEADER = (
    "database",
    "type",
    "key",
    "size_in_bytes",
    "encoding",
    "num_elements",
    "len_largest_element",
    "expiry",
)
_MODULE = "k.rdb_type IN (6, 7)"
# An integer string the RDB stores as an integer: the int32 range.  The keys table keeps its
# text length, not the value: up to 9 characters it is in range; 10 and 11 characters
# (2147483647, -2147483648) may be either, and are taken as in range when 10 long.
_RDB_INT = "(k.type = 'string' AND k.encoding = 'int' AND k.length <= 10)"
RDBTOOLS_SQL = {
    "database": "k.db",
    "type": f"CASE WHEN {_MODULE} THEN 'module' WHEN k.type = 'zset' THEN 'sortedset' "
    "ELSE k.type END",
    "key": "k.key",
    "size_in_bytes": "k.memory_bytes",
    "encoding": f"CASE WHEN {_MODULE} THEN k.type WHEN k.type = 'string' THEN 'string' "
    "WHEN k.type = 'list' THEN 'quicklist' WHEN k.type = 'stream' THEN 'listpack' "
    "ELSE k.encoding END",
    "num_elements": f"CASE WHEN {_RDB_INT} THEN 8 WHEN k.type = 'stream' OR {_MODULE} THEN 1 "
    "ELSE k.length END",
    "len_largest_element": f"CASE WHEN {_RDB_INT} OR k.encoding = 'intset' THEN 8 "
    f"WHEN {_MODULE} THEN k.serialized_bytes ELSE k.max_elem_bytes END",
    "expiry": "CASE WHEN k.expire_at_ms IS NOT NULL THEN strftime(make_timestamp(k.expire_at_ms * 1000), '%Y-%m-%dT%H:%M:%S') || "
    "CASE WHEN k.expire_at_ms % 1000 = 0 THEN '' "
    "ELSE '.' || lpad(((k.expire_at_ms % 1000) * 1000)::VARCHAR, 6, '0') END END",
    # (NULL without a TTL: DuckDB writes it as an empty field, as rdbtools does)
}
COLUMN_SETS = ("default", "rdbtools", "all")


@dataclass
class Exported:
    """What one export wrote: rows, the output (None: standard output) and its format."""

    rows: int
    path: str | None
    fmt: str


def format_of(output: str, fmt: str | None) -> str:
    """The format to write: `fmt`, else the output's extension, else CSV."""
    if fmt:
        if fmt not in FORMATS:
            raise CommandError(f"--format {fmt}: one of {', '.join(FORMATS)}", EXIT_USAGE)
        return fmt
    if output == "-":
        return "csv"
    return EXTENSIONS.get(os.path.splitext(output)[1].lower(), "csv")


# --redact: columns that could give a key name back are written empty; `key` (and `family` at
# the strict level) are rewritten on their way out (rdbscan/export/redact.py, redact_batches),
# from the family that REDACT_FAMILY adds to the rows.
REDACTED_SQL = {"key_bytes": "NULL::BLOB", "key_raw": "NULL::BLOB", "key_hash": "NULL::BIGINT"}
REDACT_FAMILY = "rdbscan_redact_family"


def select_sql(con, columns: str = "default", order: bool = True, redact: str | None = None) -> str:
    """The SELECT over the `keys` view that the export writes: a column set of COLUMN_SETS or a
    comma-separated list of `keys` columns (an unknown name is a CommandError, EXIT_USAGE).
    `redact` (a level of rdbscan/export/redact.py): key names as REDACTED_SQL writes them."""
    have = [r[0] for r in con.execute("SELECT * FROM keys LIMIT 0").description]
    hidden = dict(REDACTED_SQL) if redact else {}

    def col(c: str) -> str:
        return f'{hidden[c]} AS "{c}"' if c in hidden else f'k."{c}"'

    if columns == "rdbtools":
        cols = ", ".join(f"{hidden.get(c, RDBTOOLS_SQL[c])} AS {c}" for c in RDBTOOLS_HEADER)
    elif columns == "all":
        cols = ", ".join(col(c) for c in have)
    else:
        names = DEFAULT_COLUMNS if columns == "default" else tuple(_split(columns))
        unknown = [n for n in names if n not in have]
        if unknown:
            raise CommandError(
                f"--columns: no column {', '.join(unknown)} in keys (its columns: "
                f"{', '.join(have)}; or one of {', '.join(COLUMN_SETS)})",
                EXIT_USAGE,
            )
        cols = ", ".join(col(c) for c in names)
    if redact:
        cols += f", k.family AS {REDACT_FAMILY}"
    sql = f"SELECT {cols} FROM keys k"
    if order:  # the file's order, as rdbtools writes it
        sql += " ORDER BY k.dump_id, k.file_offset"
    return sql


def _split(columns: str) -> list[str]:
    names = [c.strip() for c in columns.split(",") if c.strip()]
    if not names:
        raise CommandError("--columns: name at least one column", EXIT_USAGE)
    return names


def check_output(output: str, force: bool) -> None:
    """An existing file is not overwritten without --force, a directory never is
    (CommandError, EXIT_DATABASE: as a report file rdbscan did not write)."""
    if output == "-":
        return
    if os.path.isdir(output):
        raise CommandError(f"{output}: is a directory; give a file name", EXIT_DATABASE)
    if os.path.exists(output) and not force:
        raise not_overwritten(output, hint="--force writes over it, or give another name")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def copy_options(fmt: str) -> str:
    if fmt == "csv":
        return "FORMAT csv, HEADER true"
    if fmt == "jsonl":
        return "FORMAT json"
    return "FORMAT parquet, COMPRESSION zstd"


def _copy_redacted(con, sql: str, target: str, fmt: str, redactor) -> tuple | None:
    """COPY of the rows of `sql` with their key names redacted on the way: the rows stream in
    Arrow batches through rdbscan.export.redact.redact_batches to DuckDB's writer (in a
    connection of its own: `con` is busy reading)."""
    import duckdb

    from .redact import redact_batches

    reader = con.sql(sql).to_arrow_reader(BATCH_ROWS)
    # one writer thread: the Python hashing is the bottleneck, and more threads buffer more rows
    out = duckdb.connect(":memory:", config={"threads": 1})
    try:
        out.register("redacted_keys", redact_batches(reader, redactor, REDACT_FAMILY))
        return out.execute(
            f"COPY (SELECT * FROM redacted_keys) TO {_quote(target)} ({copy_options(fmt)})"
        ).fetchone()
    finally:
        out.close()


BATCH_ROWS = 65_536


def export_keys(
    con,
    output: str,
    *,
    fmt: str | None = None,
    columns: str = "default",
    order: bool = True,
    force: bool = False,
    where: str | None = None,
    redactor=None,
) -> Exported:
    """Write the key rows of the database open on `con` to `output` (a file, or `-` for
    standard output) with DuckDB's COPY: CSV with a header, JSON Lines (one object per key) or
    Parquet (zstd).  `where`: an SQL condition over the `keys` view (alias k).  A file is
    written under a temporary name in its directory and renamed when whole, so a failed
    export leaves no half file and never the user's old one half overwritten.  `redactor`
    (rdbscan.export.redact.Redactor): key names redacted as the reports' --redact shows them."""
    import duckdb

    fmt = format_of(output, fmt)
    check_output(output, force)
    sql = select_sql(con, columns, order, redactor.level if redactor is not None else None)
    if where:
        sql = sql.replace(" FROM keys k", f" FROM keys k WHERE {where}", 1)
    if output == "-":
        if fmt == "parquet":
            raise CommandError(
                "Parquet cannot be written to standard output: give a file", EXIT_USAGE
            )
        import sys

        # COPY writes to a path: /dev/stdout is this process's standard output.
        sys.stdout.flush()
        target = "/dev/stdout"
    else:
        target = os.path.join(
            os.path.dirname(os.path.abspath(output)),
            f".{os.path.basename(output)}.rdbscan-{os.getpid()}.tmp",
        )

    def copy() -> tuple | None:
        if redactor is None:
            return con.execute(f"COPY ({sql}) TO {_quote(target)} ({copy_options(fmt)})").fetchone()
        return _copy_redacted(con, sql, target, fmt, redactor)

    try:
        # the sort into file order can need more than a database's 48 MB (mixed: 96 MB): a file
        # is written again with more room; standard output, once
        row = with_room(con, copy, once=target == "/dev/stdout")
    except (duckdb.IOException, OSError) as e:
        if target == "/dev/stdout" and "broken pipe" in str(e).lower():
            # `rdbscan export ... -o - | head`: the reader has what it wanted (exit 0)
            raise BrokenPipeError(32, "Broken pipe") from None
        if target != "/dev/stdout" and os.path.exists(target):
            os.unlink(target)
        raise CommandError(f"{output}: cannot be written: {e}", EXIT_DATABASE) from None
    except BaseException:
        if target != "/dev/stdout" and os.path.exists(target):
            os.unlink(target)
        raise
    if target != "/dev/stdout":
        os.replace(target, output)
    return Exported(int(row[0]) if row else 0, None if output == "-" else output, fmt)
