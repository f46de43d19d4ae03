"""Sources to a database open for queries: the database the user named, or dumps loaded into
one (given, or a temporary one removed afterwards), with every line of the load outcome
(rdbscan/db/outcome.py) told, and the exit code so far.  `rdbscan report` (reports/report/run.py)
and `rdbscan schema` open their sources here.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...db.parquet import is_database_path
from ...errors import (
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    worst_exit,
)
from .database import open_report_database
from .outputs import database_name


@dataclass
class Opened:
    """A database ready for queries: what was loaded into it now, what was said, the exit code
    so far (the load's and that of the dumps it held before), and whether any dump is there."""

    con: Any  # duckdb.DuckDBPyConnection
    path: str
    loaded: list = field(default_factory=list)  # DumpResult of each dump loaded by this call
    code: int = EXIT_OK
    has_dumps: bool = True
    reported: list[tuple[int, str]] = field(default_factory=list)  # (dump_id, path) of the
    # dumps a report covers; with dumps loaded now, those held before are among them too


def is_database(sources: Sequence[str]) -> bool:
    """One source naming a database rdbscan wrote, or a Parquet dataset (docs/fleet.md); else:
    dumps to load."""
    return len(sources) == 1 and is_database_path(sources[0])


def check_sources(sources: Sequence[str]) -> None:
    """Dumps to load must exist and must not include a database (CommandError otherwise); a
    URL's file system must be installed (docs/fleet.md: exit 2 naming the extra)."""
    from ...rdb import remote

    for s in sources:
        if remote.is_url(s):
            try:
                remote.filesystem(s)
            except remote.UnsupportedURL as e:
                raise CommandError(str(e), EXIT_USAGE) from None
        elif s != "-" and not os.path.exists(s):
            raise CommandError(f"{s}: No such file or directory", EXIT_INPUT)
        if s != "-" and is_database_path(s):
            raise CommandError(f"{s}: give one database, or dumps, not both", EXIT_USAGE)


def release_load_memory() -> None:
    """Give back what the load held before the queries start (peak RSS of a whole report:
    Arrow's memory pool keeps freed batches for reuse, when the load used pyarrow)."""
    import gc
    import sys

    gc.collect()
    arrow = sys.modules.get("pyarrow")
    if arrow is not None:
        arrow.default_memory_pool().release_unused()


def loaded_summary(r) -> str:
    """The line for a dump loaded cleanly (or found already loaded) before a report."""
    if r.reused:
        return (
            f"rdbscan: {r.path}: already loaded as dump {r.dump_id}; reporting it "
            f"(--replace loads it again)"
        )
    from ...db.load import filtered_out

    return f"rdbscan: loaded {r.path}: {r.keys:,} keys{filtered_out(r)} in {r.parse_seconds:.2f} s"


def held_outcome(con, dump_id: int, skip: set):
    """The outcome (rdbscan/db/outcome.py) of the dumps the database holds, but those in `skip`."""
    from ...db.load import result_from_row
    from ...db.outcome import outcome
    from .relations import REPORTED_DUMPS

    cur = con.execute(
        f"SELECT * EXCLUDE (aux) FROM dumps WHERE dump_id IN ({REPORTED_DUMPS}) ORDER BY dump_id",
        {"dump_id": dump_id},
    )
    names = [d[0] for d in cur.description]
    return outcome(
        [
            result_from_row(dict(zip(names, row)))
            for row in cur.fetchall()
            if row[names.index("dump_id")] not in skip
        ]
    )


def reported_dumps(con, dump_id: int) -> list[tuple[int, str]]:
    """(dump_id, path) of every dump a report with `dump_id` covers, in load order."""
    from .relations import REPORTED_DUMPS

    return con.execute(
        f"SELECT dump_id, path FROM dumps WHERE dump_id IN ({REPORTED_DUMPS}) ORDER BY dump_id",
        {"dump_id": dump_id},
    ).fetchall()


def has_dumps(con, dump_id: int) -> bool:
    row = con.execute(
        "SELECT count(*) FROM dumps WHERE ? = 0 OR dump_id = ?", [dump_id, dump_id]
    ).fetchone()
    return bool(row and row[0])


def _no_dump(con, path: str, dump_id: int) -> str:
    """Why a database gives nothing to report: no dump at all (its only load was killed, or
    it was emptied), or none with the id asked for."""
    ids = [r[0] for r in con.execute("SELECT dump_id FROM dumps ORDER BY 1").fetchall()]
    if dump_id and ids:
        listed = ", ".join(map(str, ids[:20])) + (", ..." if len(ids) > 20 else "")
        return f"holds no dump {dump_id} (its dumps: {listed})"
    return f"holds no dump (an interrupted load leaves none; load one with `rdbscan load DUMP -o {path}`)"


def _nothing_to_report(con, path: str, dump_id: int, named: bool) -> CommandError:
    """Nothing to report, nor why, with every dump read: a database without the dump asked for
    (or any), or dumps loaded cleanly and another dump id asked for.  `named`: the database is
    one the user named (the source, or --database), which their own `report X.duckdb` reads."""
    if named:
        return CommandError(f"{path}: {_no_dump(con, path, dump_id)}", EXIT_INPUT)
    return CommandError(_no_loaded_dump(con, dump_id), EXIT_INPUT)


def _no_loaded_dump(con, dump_id: int) -> str:
    """--dump-id naming none of the dumps just loaded into a temporary database (which the
    user cannot open): their ids, with their files."""
    rows = con.execute("SELECT dump_id, path FROM dumps ORDER BY 1").fetchall()
    listed = ", ".join(f"dump {i}: {os.path.basename(p) or p}" for i, p in rows[:6])
    listed += ", ..." if len(rows) > 6 else ""
    return f"--dump-id {dump_id}: no dump {dump_id} among the dumps loaded ({listed})"


@contextlib.contextmanager
def open_sources(
    sources: Sequence[str],
    *,
    output: str | None = None,
    dump_id: int = 0,
    say: Callable[[str], None] | None = None,
    quiet: bool = False,
    progress=None,
    target: str | None = None,
    replace: bool = False,
    allow_ratio: bool = False,
    key_filter=None,
) -> Iterator[Opened]:
    """The database `sources` name (one database rdbscan wrote), or dumps loaded into `output`
    (default: a temporary database, removed on leaving), open for queries.

    Every line of the load outcome goes to `say` (quiet: not the per-dump summary lines); the
    outcome of the dumps the database held before is told too, as `rdbscan load` told it.
    A dump the database holds is reported, not loaded again, unless `replace`; key_filter
    (db/filters.KeyFilter) keeps only the keys it selects.  Failures are
    CommandErrors (one line and an exit code)."""
    from ...db.load import load
    from ...db.outcome import outcome

    tell = say or (lambda line: None)
    sources = list(sources)
    database = is_database(sources)
    if database and output:
        raise CommandError("--database applies when loading dumps, not to a database", EXIT_USAGE)
    if output:
        database_name(output, "output")
    if not database:
        check_sources(sources)
    tmpdir = None
    try:
        loaded: list = []
        code = EXIT_OK
        if database:
            path = sources[0]
        else:
            if output:
                path = output
            else:
                tmpdir = tempfile.mkdtemp(prefix="rdbscan-")
                path = os.path.join(tmpdir, "report.duckdb")
            loaded = load(
                sources,
                path,
                progress=progress,
                target=target,
                existing="replace" if replace else "reuse",
                allow_ratio=allow_ratio,
                key_filter=key_filter,
            )
            done = outcome(loaded, summary=loaded_summary)
            for line in done.lines(quiet):
                tell(line)
            code = done.code
            release_load_memory()
            if not os.path.exists(path):  # nothing was committed: the load removed the file
                yield Opened(None, path, loaded, code, False)
                return
        con = open_report_database(path)
        try:
            held = held_outcome(con, dump_id, skip={r.dump_id for r in loaded})
            for line in held.lines(quiet=True):
                tell(line)
            code = worst_exit(code, held.code)
            present = has_dumps(con, dump_id)
            if not present and code == EXIT_OK and (database or dump_id):
                raise _nothing_to_report(con, path, dump_id, named=bool(database or output))
            yield Opened(con, path, loaded, code, present, reported_dumps(con, dump_id))
        finally:
            con.close()
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
