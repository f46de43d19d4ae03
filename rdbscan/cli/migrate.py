"""`rdbscan migrate`: will these dumps load on another server, and what will they cost there
(rdbscan.migrate.run, docs/migrate.md)."""

from __future__ import annotations

import os
import sys

import click

from ..errors import (
    EXIT_DATABASE,
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_OK,
    EXIT_USAGE,
    CommandError,
    worst_exit,
)
from . import targets as outputs  # (`targets` is the --to option here)
from .output import make_progress, say, say_jobs, text_width

FORMATS = ("text", "markdown", "json", "html")


@click.command("migrate")
@click.argument("dumps", nargs=-1, required=True, metavar="DUMP... | FILE.duckdb")
@click.option(
    "--to",
    "targets",
    multiple=True,
    required=True,
    metavar="SERVER-VERSION[/ALLOCATOR]",
    help="A server to load the dumps on: redis-7.2, valkey-9.1, redis-8.6/16p (/16: a "
    "distribution package linking the system jemalloc; /16p: jemalloc 5.3.1 as Debian sid "
    "links it). Repeat it to compare several side by side.",
)
@click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    help="Write the result here, in the format its name says (.txt, .md, .json, .html; another name "
    "needs --format); default: standard output.  An existing file is replaced only if rdbscan "
    "wrote it.  A name ending .duckdb is the database, as --database.",
)
@click.option(
    "--database",
    "db_path",
    metavar="FILE.duckdb",
    help="Keep the database (keys, and each key's projection in key_projections) for "
    "`rdbscan sql`; default: a temporary database removed afterwards.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="text (the default): for a terminal; markdown: for tickets and wikis; json: for "
    "scripts (docs/migrate.md); html: one self-contained page.  Default: from -o FILE's name, "
    "else text.",
)
@click.option(
    "--html",
    "html_path",
    metavar="FILE.html",
    help="Also write the HTML page here (with any --format).",
)
@click.option(
    "--fail-on",
    "fail_on",
    type=click.Choice(["blockers", "none"]),
    default="none",
    show_default=True,
    help="blockers: exit 3 when any target would refuse a dump (a CI gate).",
)
@click.option(
    "--with-module",
    "modules",
    multiple=True,
    metavar="NAME",
    help="A module type (its 9-character name, e.g. ReJSON-RL) the targets have loaded: "
    "its keys and aux records load instead of blocking. Repeatable.",
)
@click.option(
    "--rdb-version-check",
    "version_check",
    type=click.Choice(["strict", "relaxed"]),
    default="strict",
    show_default=True,
    help="The Valkey 8.1+ targets' rdb-version-check setting (strict is their default).",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Dumps loaded at once, each in its own process, as `rdbscan load -j` (default: the "
    "number of cores).",
)
@click.option("-q", "--quiet", is_flag=True, help="No progress line and no per-dump summary.")
@click.option("--no-verify-crc", is_flag=True, help="Skip the CRC64 check of the dumps.")
def migrate_cmd(
    dumps,
    targets,
    output,
    db_path,
    fmt,
    html_path,
    fail_on,
    modules,
    version_check,
    jobs,
    quiet,
    no_verify_crc,
):
    """Will DUMPS load on another server, and what would their keys cost there?

    For each --to target: what its loader does with the dumps' header, every RDB type, module
    type, opcode and aux field (loads, converts, skips, refuses), each blocker with the keys
    it stops (count, examples, families) and what to do; then every key re-estimated with the
    target's memory profile and the encoding the target picks on load: totals, per type and
    family, the difference to today, the keys that change encoding.

    Given a database written by `rdbscan load`, `report --database` or `migrate --database`
    instead of dumps, the report comes from its rows: the projections `migrate --database`
    kept, else the keys whose projection needs no more than the rows (strings); the others are
    counted as not projected.

    Example: rdbscan migrate dump.rdb --to valkey-9.1 --to redis-8.6/16p
    """
    from ..migrate.servers import parse_server

    for t in targets:
        try:
            parse_server(t)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--to") from None
    outs = outputs.resolve(output, db_path, fmt, html_path, formats=FORMATS)
    database = _database_input(dumps, outs.database)
    outputs.check(outs)
    fmt, db_path = outs.fmt, outs.database
    html_path = (outs.report if fmt == "html" else None) or outs.html
    relaxed = version_check == "relaxed"
    if database is not None:
        result, code = _from_database(database, targets, modules, relaxed)
    else:
        result, code = _from_dumps(
            dumps, targets, db_path, modules, relaxed, jobs, quiet, no_verify_crc
        )
    if result.report["dumps"]:
        _write_result(result.report, fmt, html_path, outs.report, quiet)
    if fail_on == "blockers" and result.blockers:
        code = worst_exit(code, EXIT_FINDINGS)
        say(
            f"rdbscan: {result.blockers} blockers: a target would refuse a dump (--fail-on blockers)"
        )
    sys.exit(code if code != EXIT_OK else EXIT_OK)


def _database_input(dumps: tuple[str, ...], keep: str | None) -> str | None:
    """The database given instead of dumps, if any.  A database is migrated alone (not with
    other inputs), and it is read, so --database (a database to write) does not apply."""
    from ..db.store import is_database_file

    databases = [d for d in dumps if is_database_file(d)]
    if databases and len(dumps) > 1:
        raise CommandError(
            f"{databases[0]}: a database is migrated alone, not with other inputs", EXIT_USAGE
        )
    if databases and keep:
        raise CommandError(
            f"{databases[0]}: --database keeps the database of loaded dumps; a database input "
            f"is read, not written",
            EXIT_USAGE,
        )
    return databases[0] if databases else None


def _from_database(database: str, targets, modules, relaxed: bool):
    """The migrate result from a database's rows (exit code 0).  A missing file is exit 6, a
    file that is not an rdbscan database (or too old) exit 7."""
    from ..migrate.run import migrate_database

    try:
        result = migrate_database(database, list(targets), modules=list(modules), relaxed=relaxed)
    except FileNotFoundError:
        raise CommandError(f"{database}: No such file or directory", EXIT_INPUT) from None
    except ValueError as e:
        raise CommandError(str(e), EXIT_DATABASE) from None
    return result, EXIT_OK


def _from_dumps(dumps, targets, db_path, modules, relaxed: bool, jobs, quiet, no_verify_crc):
    """The migrate result from loading the dumps (in worker processes when several and jobs
    allow), each dump's outcome said on standard error; the exit code is the worst load's."""
    from ..db.load import summarize
    from ..db.outcome import outcome
    from ..migrate.run import in_workers, migrate

    jobs = jobs or os.cpu_count() or 1
    parallel = in_workers(list(dumps), jobs)
    if parallel and not quiet:
        say_jobs(len(dumps), jobs)
    result = migrate(
        list(dumps),
        list(targets),
        db_path,
        progress=None if parallel else make_progress(quiet),
        modules=list(modules),
        verify_crc=not no_verify_crc,
        relaxed=relaxed,
        jobs=jobs,
    )
    done = outcome(result.results, summary=summarize)
    for line in done.lines(quiet=True):
        say(line)
    return result, done.code


def _write_result(report, fmt: str, html_path: str | None, path: str | None, quiet: bool) -> None:
    """The report as HTML to html_path (when asked), and in fmt (unless html) to path or
    standard output; a text file says on its first line what it is (targets.py)."""
    from ..migrate.render import render, render_html

    if fmt == "html" or html_path:
        outputs.write_output(render_html(report), html_path, quiet, "HTML page")
    if fmt != "html":
        text = render(report, fmt, width=text_width(terminal=not path))
        if fmt == "text" and path:
            text = "rdbscan migrate\n\n" + text
        names = {"text": "text", "json": "JSON", "markdown": "Markdown"}
        outputs.write_output(text, path, quiet, f"{names[fmt]} migrate result")
