"""`rdbscan export`: key rows to CSV, JSON Lines or Parquet (rdbscan/export/keys.py)."""

from __future__ import annotations

import sys

import click

from ..export.keys import COLUMN_SETS, FORMATS
from .filters import filter_options, key_filter_from
from .options import checked_target, memory_limit_option
from .output import make_progress, say
from .redact import redact_options, redacted_say


@click.command("export")
@click.argument("sources", nargs=-1, required=True, metavar="DUMP... | FILE.duckdb | DATASET")
@click.option(
    "-o",
    "--output",
    required=True,
    metavar="FILE|-",
    help="Where to write the rows; - for standard output (CSV or JSON Lines). An existing "
    "file is not overwritten without --force.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="csv (with a header), jsonl (one JSON object per key) or parquet (zstd); default: "
    "from the output's extension (.csv, .jsonl/.ndjson/.json, .parquet), else csv.",
)
@click.option(
    "--columns",
    default="default",
    show_default=True,
    metavar="SET|COL,COL...",
    help="default: dump_id, db, key, type, encoding, length, max_elem_bytes, memory_bytes, "
    "memory_total_bytes, serialized_bytes, expire_at_ms, idle_seconds, lfu_freq, slot, family; "
    "rdbtools: the columns of rdbtools' `rdb -c memory` CSV, with its conventions "
    "(docs/export.md); all: every column of the keys view; or a comma-separated list of them.",
)
@click.option(
    "--unordered",
    is_flag=True,
    help="Write the rows in whatever order DuckDB reads them (default: the dump's own order, "
    "dump by dump, as rdbtools writes it).",
)
@click.option("--force", is_flag=True, help="Write over an existing output file.")
@filter_options
@click.option(
    "--target",
    metavar="VERSION",
    callback=checked_target,
    help="Memory model used when loading a dump (see `rdbscan load`).",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress display and no summary on standard error."
)
@click.option(
    "--allow-ratio",
    is_flag=True,
    help="Read compressed input that expands more than 200:1 (see `rdbscan load`).",
)
@memory_limit_option
@redact_options
def export_cmd(
    sources, output, fmt, columns, unordered, force, target, quiet, allow_ratio, redact, **flt
):
    """Write one row per key to a CSV, JSON Lines or Parquet file, with DuckDB's own writers.

    Given dumps, rdbscan loads them into a temporary database (removed afterwards; memory as
    for `rdbscan load`) and writes their keys; given a database written by `rdbscan load`, or a
    Parquet dataset, it writes the keys held there (the filters then select rows of it).
    `--columns rdbtools` writes what `rdb -c memory` of redis-rdb-tools writes, so scripts
    written for it keep working (docs/export.md says where the figures differ).  Exit codes
    as for `rdbscan report`; 7 when the output exists (without --force), as a report file
    rdbscan did not write.

    Example: rdbscan export dump.rdb -o keys.csv --columns rdbtools
    """
    from ..export.keys import check_output, export_keys, format_of
    from ..reports.engine.sources import is_database, open_sources
    from .fleet import expand_dumps

    if columns not in COLUMN_SETS and not columns.strip():
        raise click.BadParameter("name a column set or columns", param_hint="--columns")
    sources = expand_dumps(sources)
    key_filter = key_filter_from(flt)
    fmt = format_of(output, fmt)
    check_output(output, force)  # before a long load, not after it
    database = is_database(sources)
    with open_sources(
        sources,
        say=redacted_say(redact),
        quiet=quiet,
        progress=make_progress(quiet),
        target=target,
        allow_ratio=allow_ratio,
        key_filter=None if database else key_filter,
    ) as db:
        if not db.has_dumps:
            sys.exit(db.code)  # nothing was read: the errors told are all there is
        where = key_filter.sql() if (database and key_filter is not None) else None
        done = export_keys(
            db.con,
            output,
            fmt=fmt,
            columns=columns,
            order=not unordered,
            force=force,
            where=where,
            redactor=redact,
        )
    if not quiet and done.path is not None:
        say(f"rdbscan: wrote {done.rows:,} keys to {done.path} ({done.fmt})")
    sys.exit(db.code)
