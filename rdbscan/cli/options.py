"""Options several commands share, declared once: the same name, default and help everywhere."""

from __future__ import annotations

import click


def nonempty_delimiters(ctx, param, value):
    """`--delimiters ""` is a mistake (no segment could be cut), whichever command it is given to."""
    if value == "":
        raise click.BadParameter("must not be empty")
    return value


def checked_target(ctx, param, value):
    """`--target` of `load`, `report`, `schema` and `diff`, checked once, before any dump is
    read: a spelling that names no memory profile is a usage error (exit 2), not a dump that
    fails to load."""
    if value is None:
        return None
    from ..model.memory import validate_target

    try:
        validate_target(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    return value


# Key families for `query`, `schema`, `diff` and `trend` (`report` says more: its naming rules
# use the delimiters too).
delimiters_option = click.option(
    "--delimiters",
    default=":",
    show_default=True,
    help="Characters that separate key segments (for families).",
    callback=nonempty_delimiters,
)

MAX_TOP = 100_000  # rows per list; DuckDB's arg_max(x, n) takes n below 1,000,000


def top_option(help: str, zero_means_all: bool = False):
    """`--top` of `report`, `diff` and `trend`: rows per list, 10 unless given, at most MAX_TOP;
    0 (every row) only where `zero_means_all`."""
    return click.option(
        "--top",
        type=click.IntRange(0 if zero_means_all else 1, MAX_TOP),
        default=10,
        show_default=True,
        help=help,
    )


# Query results of `sql` and `query` (rdbscan/cli/sqlout.py).
table_format_option = click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)


def _set_memory_limit(ctx, param, value):
    """Applies --memory-limit to every query connection the command opens (db/connections.py)."""
    from ..db.connections import chosen_memory_limit, set_memory_limit

    try:
        set_memory_limit(value)  # None: the default again (one process may run several commands)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    try:
        chosen_memory_limit()
    except ValueError as e:  # RDBSCAN_MEMORY_LIMIT is not a size
        raise click.UsageError(str(e)) from None
    return value


# DuckDB's memory for the queries of `report`, `query`, `schema`, `diff`, `trend` and `sql`
# (docs/exit-codes.md, exit 8).
memory_limit_option = click.option(
    "--memory-limit",
    metavar="SIZE",
    callback=_set_memory_limit,
    expose_value=False,
    help="DuckDB memory for the queries (512MB, 2GB, 1GiB); beyond it they spill to a temporary "
    "directory. Default 48MB over a database, dumps or a Parquet dataset (a query that needs "
    "more runs again at 80MB, 96MB, then 128MB), 128MB for diff and trend, DuckDB's own for sql; or "
    "RDBSCAN_MEMORY_LIMIT.",
)
