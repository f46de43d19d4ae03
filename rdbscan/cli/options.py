"""Options several commands share, declared once: the same name, default and help everywhere."""

from __future__ import annotations

import click


def nonempty_delimiters(ctx, param, value):
    """`--delimiters ""` is a mistake (no segment could be cut), whichever command it is given to."""
    if value == "":
        raise click.BadParameter("must not be empty")
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
