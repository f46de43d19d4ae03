"""Which file names are a rendered report's and which a database's: the one rule that a
database is never written under a report's name, for the command line (rdbscan/cli/targets.py)
and the library (rdbscan.load, rdbscan.report) alike (docs/report.md#outputs)."""

from __future__ import annotations

import os

from ...errors import EXIT_USAGE, CommandError

# A report file's format, from its extension.
REPORT_SUFFIXES = {
    ".txt": "text",
    ".text": "text",
    ".json": "json",
    ".md": "markdown",
    ".markdown": "markdown",
    ".html": "html",
    ".htm": "html",
    ".prom": "openmetrics",
    ".om": "openmetrics",
}
# Names `-o` reads as the database (rdbscan writes no report in DuckDB's format).
DATABASE_SUFFIXES = (".duckdb", ".ddb", ".db")


def suffix(path: str) -> str:
    return os.path.splitext(path)[1].lower()


def database_name(path: str, option: str) -> None:
    """A database is never written under a report's name (CommandError EXIT_USAGE); `option`
    names where the path was given (`--database`, `-o`, `output=`)."""
    if suffix(path) in REPORT_SUFFIXES:
        raise CommandError(
            f"{option} {path}: a report's name, not a database's; give the database a name "
            f"ending .duckdb",
            EXIT_USAGE,
        )
