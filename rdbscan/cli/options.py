"""Options several commands share, declared once: the same name, default and help everywhere."""

from __future__ import annotations

import click

# Key families for `query`, `schema`, `diff` and `trend` (`report` says more: its naming rules
# use the delimiters too).
delimiters_option = click.option(
    "--delimiters",
    default=":",
    show_default=True,
    help="Characters that separate key segments (for families).",
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
