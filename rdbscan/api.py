"""The library API that the command line wraps: `rdbscan.load()` and `rdbscan.report()`.

    import rdbscan
    results = rdbscan.load(["dump.rdb"], "dump.duckdb")   # one DumpResult per dump
    report = rdbscan.report("dump.duckdb")                # the report (docs/json.md), a dict

Imports stay inside the functions: `import rdbscan` (which the parser's users do too) loads
neither DuckDB nor Arrow.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

    from .db.load import DumpResult
    from .reports.report import ReportOptions


def load(paths: Sequence[str], db_path: str, **options: Any) -> list[DumpResult]:
    """Load every dump in `paths` (files, `-` for standard input, compressed or framed; see
    docs/inputs.md) into the DuckDB database at `db_path`, created if needed: one DumpResult
    per dump, in order.  A damaged dump keeps the rows read before the damage.  `options` are
    those of rdbscan.db.load.load (progress, verify_crc, target, skip_bad, existing, ...);
    jobs=N loads up to N dumps at once in worker processes (rdbscan/db/parallel.py)."""
    from .db.load import load as load_dumps

    paths = list(paths)
    jobs = options.pop("jobs", 1) or 1
    if jobs > 1 and len(paths) > 1 and "-" not in paths:
        from .db.parallel import load_parallel

        options.setdefault("existing", "refuse")
        options.pop("progress", None)  # the workers draw no progress line
        return load_parallel(paths, db_path, jobs=jobs, **options)
    return load_dumps(paths, db_path, **options)


def report(
    database: str | duckdb.DuckDBPyConnection,
    options: ReportOptions | None = None,
    *,
    fail_on: list[tuple[str, str]] | None = None,
    on_section: Callable[[str], None] | None = None,
    **build: Any,
) -> dict[str, Any]:
    """The report (the `--format json` object, docs/json.md) on a database written by load():
    its path, or a connection from rdbscan.reports.report.open_database, which stays open.

    fail_on: parsed `--fail-on` checks (rdbscan.reports.report.parse_fail_on); on_section:
    called with each section's name before its queries run; `build`: the other options of
    rdbscan.reports.report.build_report (charts=True for the HTML report's data)."""
    from .reports.report import build_report, open_database

    con = open_database(database) if isinstance(database, str) else database
    try:
        return build_report(con, options, fail_on=fail_on, on_section=on_section, **build)
    finally:
        if isinstance(database, str):
            con.close()
