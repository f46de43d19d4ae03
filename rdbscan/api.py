"""The library API that the command line wraps: `rdbscan.load()` and `rdbscan.report()`.

    import rdbscan
    results = rdbscan.load(["dump.rdb"], "dump.duckdb")   # one DumpResult per dump
    report = rdbscan.report("dump.duckdb")                # the report (docs/json.md), a dict
    report = rdbscan.report(["dump.rdb"])                 # load (temporary database), report

Imports stay inside the functions: `import rdbscan` (which the parser's users do too) loads
neither DuckDB nor Arrow.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

    from .db.load import DumpResult
    from .reports.report import ReportOptions


def load(
    paths: str | Sequence[str], db_path: str | os.PathLike, **options: Any
) -> list[DumpResult]:
    """Load every dump in `paths` (files, `-` for standard input, compressed or framed; see
    docs/inputs.md; one path as a string is one dump) into the DuckDB database at `db_path`,
    created if needed: one DumpResult per dump, in order.  A damaged dump keeps the rows read
    before the damage.  `options` are those of rdbscan.db.load.load (progress, verify_crc,
    target, skip_bad, existing, ...); jobs=N loads up to N dumps at once in worker processes
    (rdbscan/db/parallel.py).  A `db_path` named as a report (x.json, x.html, ...) is refused:
    CommandError, as on the command line."""
    from .db.load import load as load_dumps
    from .reports.engine.outputs import database_name

    db_path = os.fspath(db_path)
    database_name(db_path, "db_path")

    paths = _paths(paths)
    jobs = options.pop("jobs", 1) or 1
    if jobs > 1 and len(paths) > 1 and "-" not in paths:
        from .db.parallel import load_parallel

        options.setdefault("existing", "refuse")
        options.pop("progress", None)  # the workers draw no progress line
        return load_parallel(paths, db_path, jobs=jobs, **options)
    return load_dumps(paths, db_path, **options)


def load_dataset(
    paths: str | Sequence[str], root: str | os.PathLike, **options: Any
) -> list[DumpResult]:
    """Load every dump in `paths` (one path as a string is one dump) into the Parquet dataset
    at `root` (a directory, or an object-store URL such as s3://bucket/prefix; created if
    needed): one DumpResult per dump.
    jobs=N: N worker processes; scheduler=ADDRESS: one task per dump on a Dask cluster.  The
    other options are load()'s.  rdbscan.report(root) reports on the dataset (docs/fleet.md)."""
    from .fleet.load import load_dataset as load_into_dataset

    return load_into_dataset(_paths(paths), os.fspath(root), **options)


def _paths(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str]:
    """The dumps to load: one path given as a string (or os.PathLike) is one dump, not a list
    of one-character names."""
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def report(
    source: str | os.PathLike | Sequence[str] | duckdb.DuckDBPyConnection,
    options: ReportOptions | None = None,
    *,
    fail_on: list[tuple[str, str]] | None = None,
    on_section: Callable[[str], None] | None = None,
    output: str | os.PathLike | None = None,
    charts: bool = False,
    **load_options: Any,
) -> dict[str, Any]:
    """The report (the `--format json` object, docs/json.md, as `rdbscan report -f json` prints
    it) on dumps or on a database written by load().

    source: a list of dumps (loaded first into `output`, or a temporary database removed
    afterwards; `load_options`: progress, target, replace, allow_ratio), the path of one dump
    or database, or a connection from rdbscan.reports.engine.database.open_database, which stays open.
    fail_on: parsed `--fail-on` checks (rdbscan.reports.report.parse_fail_on); on_section:
    called with each section's name before its queries run; charts: also the HTML report's
    data.  What the load tells, and the exit code the command line would give, come with
    rdbscan.reports.report.run.run_report, which this calls; when no dump could be read this raises
    rdbscan.errors.CommandError with the load's errors.  Dumps loaded into an `output` database
    that held others: the report covers those too, and its `note` says so (docs/json.md).  An
    `output` named as a report (x.json, x.html, ...) is refused before any dump is read:
    rdbscan.errors.CommandError, as `rdbscan report --database x.json` refuses it."""
    from .reports.report.run import run_report

    if not isinstance(source, (str, os.PathLike, list, tuple)):  # an open connection
        from .reports.report import build_report

        return build_report(source, options, fail_on=fail_on, on_section=on_section, charts=charts)
    run = run_report(
        _paths(source),
        options,
        output=None if output is None else os.fspath(output),
        fail_on=fail_on,
        on_section=on_section,
        charts=charts,
        **load_options,
    )
    if run.report is None:
        from .errors import CommandError

        raise CommandError("; ".join(run.messages) or "no dump could be read", run.exit_code)
    return run.report
