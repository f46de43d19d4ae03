"""Where a command's outputs go, decided and checked before any dump is read: the rendered
report (`-o FILE`, its format from the name), the database the dumps are loaded into
(`--database FILE.duckdb`) and the HTML companion (`--html FILE.html`).  `report`, `diff` and
`migrate` share these rules (docs/report.md#outputs):

- `-o` names one thing, by its name: a report file (.txt .md .json .html .prom ...), or, as
  before there was `--database`, a database (.duckdb .ddb .db, or a DuckDB file that exists).
- A database is never written under a report's name, nor over a file that is not a database.
- A report file replaces only a file rdbscan wrote (recognised by its first bytes).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..errors import EXIT_DATABASE, EXIT_USAGE, CommandError, not_overwritten
from ..reports.engine.outputs import DATABASE_SUFFIXES, REPORT_SUFFIXES, database_name, suffix

__all__ = [
    "DATABASE_SUFFIXES",
    "REPORT_SUFFIXES",
    "Outputs",
    "check",
    "check_database",
    "check_report_file",
    "database_name",
    "resolve",
    "suffix",
    "write_output",
    "write_report_file",
]


@dataclass
class Outputs:
    """Where a command writes: `fmt` the report's format, `report` its file (None: standard
    output), `database` the database kept (None: a temporary one), `html` the HTML companion."""

    fmt: str
    report: str | None = None
    database: str | None = None
    html: str | None = None


def resolve(
    output: str | None,
    database: str | None,
    fmt: str | None,
    html: str | None = None,
    formats: tuple[str, ...] = ("text", "json", "markdown", "html", "openmetrics"),
) -> Outputs:
    """The outputs the options name (CommandError EXIT_USAGE when they are ambiguous or
    contradict each other); nothing is checked on disk yet (check() does)."""
    from ..db.store import is_database_file

    out = Outputs(fmt or "text", database=database, html=html)
    if output in (None, "-"):
        pass
    elif suffix(output) in REPORT_SUFFIXES:
        named = REPORT_SUFFIXES[suffix(output)]
        if named not in formats:
            raise CommandError(
                f"-o {output}: the name says {named}; this command writes "
                f"{', '.join(formats)} (give another name)",
                EXIT_USAGE,
            )
        if fmt and fmt != named:
            raise CommandError(
                f"-o {output}: the name says {named}, --format says {fmt} (give one of them)",
                EXIT_USAGE,
            )
        out.fmt, out.report = named, output
    elif suffix(output) in DATABASE_SUFFIXES or is_database_file(output):
        if database:
            raise CommandError(
                f"-o {output} and --database {database}: give the database once", EXIT_USAGE
            )
        out.database = output
    elif fmt:  # a name without a known extension: the --format given says what it is
        out.report = output
    else:
        raise CommandError(
            f"-o {output}: give the report file a name ending .txt, .md, .json, .html or .prom "
            f"(or --format), "
            f"or the database one ending .duckdb (--database FILE.duckdb)",
            EXIT_USAGE,
        )
    if database:
        database_name(database, "--database")
    if out.fmt == "html" and out.report and html:
        raise CommandError(
            f"-o {out.report} is the HTML report already; --html adds one to another format",
            EXIT_USAGE,
        )
    paths = [p for p in (out.report, out.database, out.html) if p]
    same = {os.path.realpath(p) for p in paths}
    if len(same) < len(paths):
        raise CommandError(f"{paths[0]}: given for two outputs; give each its own file", EXIT_USAGE)
    return out


def check(out: Outputs, *, new_database: bool = False) -> None:
    """Every output target usable before the work starts (CommandError EXIT_DATABASE): its
    directory exists and is writable, a report file replaces only one rdbscan wrote, and the
    database is one (`new_database`: it must not exist yet)."""
    if out.database:
        check_database(out.database, new=new_database)
    for path in (out.report, out.html):
        if path:
            check_report_file(path)


def _directory(path: str) -> None:
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise CommandError(f"{path}: its directory does not exist", EXIT_DATABASE)
    if not os.access(parent, os.W_OK):  # the words of errors.database_fault
        reason = (
            "the file system is read-only"
            if _read_only(parent)
            else "permission denied (the file or its directory is not writable)"
        )
        raise CommandError(f"{path}: {reason}", EXIT_DATABASE)


def _read_only(directory: str) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (AttributeError, OSError):
        return False


def check_database(path: str, new: bool = False) -> None:
    """A database to load into: a new file in a writable directory, or (unless `new`) a DuckDB
    database that exists and can be written; never a file of another kind."""
    from ..db.store import is_database_file

    if not os.path.exists(path):
        _directory(path)
        return
    if os.path.isdir(path):
        raise CommandError(
            f"{path}: is a directory (give a file such as dump.duckdb)", EXIT_DATABASE
        )
    if not is_database_file(path):
        raise CommandError(
            f"{path}: not a DuckDB database; not overwritten (give a new file name such as "
            f"dump.duckdb, or a database rdbscan wrote)",
            EXIT_DATABASE,
        )
    if new:
        raise CommandError(
            f"{path}: exists; give a new file for the database (or compare the databases themselves)",
            EXIT_DATABASE,
        )
    if not os.access(path, os.W_OK):
        raise CommandError(
            f"{path}: permission denied (the database is not writable)", EXIT_DATABASE
        )


# The first bytes of each file rdbscan renders (report, diff, trend, migrate): such a file may be
# replaced by the next run, any other is left untouched.
_OURS = re.compile(
    rb"\A(?:\xef\xbb\xbf)?(?:"
    rb"rdbscan (?:report|diff|trend), generated |rdbscan migrate\n"  # text (written to a file)
    rb"|# rdbscan (?:report|diff|trend|migrate)\n"  # Markdown
    rb"|\{\s*\"rdbscan_(?:report|diff|trend|migrate)\""  # JSON
    rb"|# (?:TYPE|HELP) rdbscan_"  # OpenMetrics
    rb")"
)


def _written_by_rdbscan(head: bytes) -> bool:
    return bool(_OURS.match(head)) or b'<meta name="generator" content="rdbscan">' in head


def check_report_file(path: str) -> None:
    """A report file (or HTML page) that can be written: a new file in a writable directory, or
    a file rdbscan wrote, which is replaced."""
    from ..db.store import is_database_file

    if not os.path.exists(path):
        _directory(path)
        return
    if os.path.isdir(path):
        raise CommandError(f"{path}: is a directory", EXIT_DATABASE)
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096)
    except OSError as e:
        raise CommandError(f"{path}: {e.strerror or e}", EXIT_DATABASE) from None
    if is_database_file(path):  # a database under a report's name (what -o once wrote)
        raise not_overwritten(path, "is a DuckDB database, not a report")
    if not _written_by_rdbscan(head):
        raise not_overwritten(path, "is not a report rdbscan wrote")
    if not os.access(path, os.W_OK) or not os.access(
        os.path.dirname(os.path.abspath(path)), os.W_OK
    ):
        raise CommandError(f"{path}: permission denied (not writable)", EXIT_DATABASE)


def write_report_file(path: str, text: str) -> None:
    """`text` to `path` whole or not at all (a temporary file beside it, then renamed): a full
    disk leaves the old report, never half of a new one.  Checked again just before."""
    from .output import output_fault

    check_report_file(path)
    tmp = path + ".rdbscan-tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise output_fault(e, path) from None


def write_output(text: str, path: str | None, quiet: bool, what: str) -> None:
    """A rendered report, diff or page to the file `path` (replacing only a file rdbscan
    wrote), else to standard output; `what` names it in the line that says where it went."""
    import click

    if path is None:
        click.echo(text, nl=False)
        return
    write_report_file(path, text)
    if not quiet:
        click.echo(f"rdbscan: {what} written to {path}", err=True)
