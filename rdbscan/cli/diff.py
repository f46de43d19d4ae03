"""`rdbscan diff` and `rdbscan trend`: thin click wrappers over rdbscan.reports.diff."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

import click

from ..errors import (
    EXIT_CHECKSUM,
    EXIT_DAMAGED,
    EXIT_FINDINGS,
    EXIT_INPUT,
    EXIT_PARTIAL,
    EXIT_USAGE,
    CommandError,
)
from ..reports import diff as D
from ..reports.document import draw_text
from . import targets
from .filters import filter_options, key_filter_from, refuse_on_database
from .fleet import expand_dumps
from .options import checked_target, delimiters_option, memory_limit_option, top_option
from .output import make_progress, text_page
from .redact import redact_options, shown
from .report import _release_load_memory, _settings

if TYPE_CHECKING:
    from ..db.filters import KeyFilter
    from ..reports.diff.data import DiffData, FailCheck
    from ..reports.diff.trend_data import TrendData


def _load_sides(
    dumps: dict[str, list[str]],
    db_path: str | None,
    tmpdir: str,
    target: str | None,
    quiet: bool,
    jobs: int,
    key_filter=None,
    show=lambda line: line,
) -> tuple[int, dict[str, tuple[str, list[int]]]]:
    """Load each side's dumps (one snapshot each, old first).  Into db_path, when given, with
    one load, several dumps at once as `rdbscan load -j` does; else into databases under
    tmpdir: with one dump a side and jobs > 1, each side into a database of its own by a worker
    of its own (nothing copied between databases: db/parallel.load_each), otherwise all into
    one.  Returns 0, or 5 on a checksum mismatch, and each side's database and dump ids (a dump
    given twice is loaded once: both name its id).  A damaged dump stops the diff: the keys
    after the damage would count as removed (or added).  key_filter (db/filters.KeyFilter):
    only the keys it keeps are loaded, on both sides.  show: a line for standard error as
    --redact wants it (cli/redact.shown)."""
    import rdbscan

    paths = [p for specs in dumps.values() for p in specs]
    for p in paths:
        if p != "-" and not os.path.exists(p):
            raise CommandError(f"{p}: no such file", EXIT_INPUT)
    apart = (
        db_path is None
        and jobs > 1
        and len(dumps) == 2
        and all(len(specs) == 1 for specs in dumps.values())
        and "-" not in paths
        and os.path.realpath(paths[0]) != os.path.realpath(paths[1])
    )
    if apart:
        from ..db.parallel import load_each

        where = {w: os.path.join(tmpdir, f"{w}.duckdb") for w in dumps}
        results = load_each(
            [(dumps[w][0], where[w]) for w in dumps], jobs=2, target=target, key_filter=key_filter
        )
    else:
        one = db_path or os.path.join(tmpdir, "diff.duckdb")
        where = {w: one for w in dumps}
        parallel = jobs > 1 and len(paths) > 1
        results = rdbscan.load(
            paths,
            one,
            progress=None if parallel else make_progress(quiet),
            target=target,
            jobs=jobs,
            snapshot_sizes=[len(specs) for specs in dumps.values()],
            existing="reuse",
            key_filter=key_filter,
        )
    return _report_loads(dumps, where, results, quiet, show)


def _report_loads(
    dumps: dict[str, list[str]], where: dict[str, str], results, quiet: bool, show
) -> tuple[int, dict[str, tuple[str, list[int]]]]:
    """Each load's outcome on standard error, in the order the dumps were given: a dump that
    could not be read to the end stops the diff here (its keys after the damage would count as
    removed or added), a checksum mismatch is said and gives exit code 5.  Returns that code
    and each side's database and dump ids, as _load_sides does."""
    sides = [w for w, specs in dumps.items() for _ in specs]
    code = 0
    ids: dict[str, list[int]] = {w: [] for w in dumps}
    for what, r in zip(sides, results):
        if r.dump_id not in ids[what]:
            ids[what].append(r.dump_id)
        if r.error:
            click.echo(show(f"rdbscan: error: {r.error}"), err=True)
            limit = r.error_kind == "unsupported"  # rdbscan is older than the dump
            why = "rdbscan stopped at a record it does not know" if limit else "the damage"
            click.echo(
                f"rdbscan: not compared: the {what} snapshot could not be read to the end, and the "
                f"keys after {why} would show as {'removed' if what == 'new' else 'added'}",
                err=True,
            )
            sys.exit(EXIT_PARTIAL if limit else EXIT_DAMAGED)
        if r.checksum == "mismatch":
            click.echo(
                f"rdbscan: error: {r.path}: CRC64 checksum mismatch; the file is damaged (every key "
                f"was read; the diff goes on)",
                err=True,
            )
            code = EXIT_CHECKSUM
        elif not quiet:
            click.echo(
                f"rdbscan: loaded {r.path}: {r.keys:,} keys in {r.parse_seconds:.2f} s", err=True
            )
    return code, {w: (where[w], ids[w]) for w in dumps}


FORMAT = click.Choice(["text", "json", "markdown", "html"])


def _html_option(what: str):
    return click.option(
        "--html",
        "html_path",
        metavar="FILE.html",
        help=f"Also write the {what} as one self-contained HTML file with charts (next to "
        "--format; an existing file is replaced only if rdbscan wrote it).",
    )


@click.command("diff")
@click.argument("inputs", nargs=-1, metavar="OLD NEW | HISTORY.duckdb")
@click.option(
    "--old",
    "old_patterns",
    multiple=True,
    metavar="PATTERN",
    help="The old snapshot as several dumps, the shards of a cluster: a quoted pattern such "
    "as 'old/shard*.rdb' (rdbscan expands it), or --old repeated.",
)
@click.option(
    "--new", "new_patterns", multiple=True, metavar="PATTERN", help="The new snapshot, as --old."
)
@click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    help="Write the diff here, in the format its name says (.txt, .md, .json, .html; another "
    "name needs --format); default: standard output.  An existing file is replaced only if "
    "rdbscan wrote it.  A name ending .duckdb is the database, as --database.",
)
@click.option(
    "--database",
    "db_path",
    metavar="FILE.duckdb",
    help="Keep the database the dumps are loaded into (both snapshots; a new file); "
    "default: a temporary database removed afterwards.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=FORMAT,
    default=None,
    help="text (the default): tables for a terminal; json: the object documented in "
    "docs/diff.md; markdown: for tickets and wikis; html: one self-contained page with charts.  "
    "Default: from -o FILE's name, else text.",
)
@_html_option("diff")
@top_option("Rows per list (families, keys, big keys, ...).")
@click.option(
    "--fail-on",
    "fail_on",
    default=None,
    metavar="RULES",
    help="Exit with 3 when the change exceeds thresholds, e.g. 'growth=20%,family-growth=10%,"
    "new-big-keys,lost-ttl=0'. Rules: " + ", ".join(D.FAIL_RULES) + ".",
)
@click.option(
    "--instance",
    metavar="NAME",
    help="With one database of many snapshots: the instance to compare.",
)
@click.option(
    "--from",
    "from_",
    metavar="ID|TIME",
    help="With one database of many snapshots: the old snapshot, by id or as the last one "
    "taken at or before a time (2026-11-20, 2026-11-20T08:00); default: the one before --to.",
)
@click.option("--to", metavar="ID|TIME", help="The new snapshot (default: the latest).")
@delimiters_option
@memory_limit_option
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="redis.conf / valkey.conf with the compact-encoding thresholds the conversions "
    "are explained with (default: the new snapshot's server defaults).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override a threshold or query parameter, e.g. --set collection_length=1000, "
    "--set hash-max-listpack-entries=256. Repeatable.",
)
@click.option(
    "--target",
    metavar="VERSION",
    callback=checked_target,
    help="Memory model used when loading dumps (see `rdbscan load`).",
)
@click.option(
    "-q", "--quiet", is_flag=True, help="No progress display and no load summary on standard error."
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Dumps loaded at once, each in its own process, as `rdbscan load -j` (default: the "
    "number of cores).",
)
@filter_options
@redact_options
def diff_cmd(
    inputs,
    old_patterns,
    new_patterns,
    output,
    db_path,
    fmt,
    html_path,
    top,
    fail_on,
    instance,
    from_,
    to,
    delimiters,
    config_path,
    sets,
    target,
    quiet,
    jobs,
    redact,
    **flt,
):
    """What changed between two snapshots: totals per db and type, families ranked by growth,
    keys added, removed and changed, the keys that grew most, big keys, type changes, encoding
    conversions, expiry.

    OLD and NEW are dumps (anything `rdbscan load` reads) or databases written by rdbscan: a
    database holding one snapshot, or DB.duckdb#N for dump N in it.  A cluster compares as a
    whole: --old 'old/shard*.rdb' --new 'new/shard*.rdb'.  One database holding many snapshots
    (`rdbscan load --instance NAME`) compares two of them: its last two, or --from/--to.  Every
    figure comes from a SQL file of diff/queries/.  Exit codes: 0 ok, 3 a --fail-on threshold
    exceeded, 4 a dump that could not be read to the end (nothing compared), 5 checksum mismatch.

    Example: rdbscan diff monday.rdb tuesday.rdb --fail-on growth=20%,new-big-keys
    """
    key_filter = key_filter_from(flt)
    try:
        checks = D.parse_fail_on(fail_on)
    except D.DiffError as e:
        raise click.BadParameter(str(e), param_hint="--fail-on") from None
    outs = targets.resolve(output, db_path, fmt, html_path, formats=tuple(FORMAT.choices))
    targets.check(outs, new_database=True)
    fmt, db_path = outs.fmt, outs.database
    html_path = (outs.report if fmt == "html" else None) or outs.html
    options = D.DiffOptions(
        top=top, delimiters=delimiters, config_path=config_path, settings=_settings(sets)
    )
    try:
        D.check_options(options)  # a bad --set or --config before a dump is read
    except ValueError as e:
        raise CommandError(str(e), getattr(e, "code", EXIT_USAGE)) from None
    old_specs, new_specs, history = _snapshot_specs(
        inputs, old_patterns, new_patterns, from_, to, instance
    )
    show = shown(redact, delimiters)
    load_code, result = _compare(
        old_specs,
        new_specs,
        history,
        (instance, from_, to),
        db_path,
        options,
        checks,
        _LoadSettings(target, quiet, jobs or os.cpu_count() or 1, key_filter, show),
    )
    if redact is not None:
        from ..export.redact import redact_data

        result = redact_data(result, redact, delimiters)
    _write_diff(result, fmt, html_path, outs.report, quiet)
    sys.exit(load_code or (EXIT_FINDINGS if _says_failed(result) else 0))


def _snapshot_specs(
    inputs: tuple[str, ...],
    old_patterns: tuple[str, ...],
    new_patterns: tuple[str, ...],
    from_: str | None,
    to: str | None,
    instance: str | None,
) -> tuple[list[str], list[str], str | None]:
    """The two snapshots as the command line gives them, checked before anything is loaded:
    (old specs, new specs, None) from OLD NEW or --old/--new, or ([], [], HISTORY) for one
    database of snapshots.  A usage error names the mistake (--from/--to/--instance pick
    snapshots of one database only)."""
    history = None
    if old_patterns or new_patterns:
        if not (old_patterns and new_patterns):
            raise click.UsageError("give both --old and --new")
        if inputs:
            raise click.UsageError(
                f"--old/--new take the snapshots; {inputs[0]!r} is one argument too many "
                f"(quote patterns, --old 'old/shard*.rdb', so that rdbscan expands them)"
            )
        old_specs, new_specs = list(old_patterns), list(new_patterns)
    elif len(inputs) == 2:
        old_specs, new_specs = [inputs[0]], [inputs[1]]
    elif len(inputs) == 1 and D.is_database_spec(inputs[0]):
        history = inputs[0]
        old_specs = new_specs = []
    else:
        raise click.UsageError("give OLD and NEW, --old and --new, or one database of snapshots")
    if history is None and (from_ or to or instance):
        raise click.UsageError(
            "--from, --to and --instance pick snapshots of one database: "
            "rdbscan diff HISTORY.duckdb --from ID --to ID"
        )
    return old_specs, new_specs, history


class _LoadSettings(NamedTuple):
    """How the dumps of a diff are loaded (_load_sides' arguments besides where)."""

    target: str | None
    quiet: bool
    jobs: int
    key_filter: KeyFilter | None
    show: Callable[[str], str]


def _compare(
    old_specs: list[str],
    new_specs: list[str],
    history: str | None,
    pick: tuple[str | None, str | None, str | None],
    db_path: str | None,
    options: D.DiffOptions,
    checks,
    how: _LoadSettings,
) -> tuple[int, DiffData]:
    """Load the dumps among the snapshots, resolve both snapshots (pick: --instance, --from,
    --to of one database of snapshots) and build the diff.  Returns the load's exit code (0 or
    5) and the diff.  The temporary databases are removed whatever happens; a library error
    becomes its one line and exit code."""
    tmpdir = None
    ws = None
    try:
        old_specs, new_specs = expand_dumps(old_specs), expand_dumps(new_specs)
        dumps = _dump_sides(history, old_specs, new_specs, how.key_filter)
        loaded: dict[str, tuple[str, list[int]]] = {}
        load_code = 0
        if dumps:
            tmpdir = tempfile.mkdtemp(prefix="rdbscan-diff-")
            load_code, loaded = _load_sides(
                dumps, db_path, tmpdir, how.target, how.quiet, how.jobs, how.key_filter, how.show
            )
            _release_load_memory()
        elif db_path:
            raise click.UsageError("--database applies when loading dumps, not to databases")
        ws = D.Workspace()
        if history is not None:
            old, new = D.history_pair(ws, history, *pick)
        else:
            by_side = {
                w: D.snapshot_of_dumps(ws, where, ids, " ".join(dumps[w]))
                for w, (where, ids) in loaded.items()
            }
            old = D.resolve_side(ws, old_specs, by_side.get("old"), "OLD")
            new = D.resolve_side(ws, new_specs, by_side.get("new"), "NEW")
        _refuse_incomplete(old, new)
        result = D.build_diff(ws, old, new, options, fail_on=checks)
        if how.key_filter is not None:  # the figures cover the keys the filter kept
            result["filter"] = how.key_filter.describe()
            if not how.quiet:
                click.echo(
                    how.show(
                        f"rdbscan: both snapshots loaded with a filter "
                        f"({how.key_filter.describe()}): the diff covers the filtered keys only"
                    ),
                    err=True,
                )
        return load_code, result
    except D.DiffError as e:
        raise CommandError(str(e), e.code) from None
    finally:
        if ws is not None:
            ws.close()
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


def _dump_sides(
    history: str | None, old_specs: list[str], new_specs: list[str], key_filter
) -> dict[str, list[str]]:
    """The sides given as dumps, to load ({"old": [...], "new": [...]}, a side given as a
    database left out).  A key filter on a database is refused (its rows are loaded already),
    and so is a side of several databases."""
    sides = {"old": old_specs, "new": new_specs}
    dumps = {
        w: specs
        for w, specs in sides.items()
        if specs and not any(D.is_database_spec(s) for s in specs)
    }
    for spec in ([history] if history else []) + old_specs + new_specs:
        if key_filter is not None and D.is_database_spec(spec):
            refuse_on_database(key_filter, spec)
    mixed = [w for w, specs in sides.items() if w not in dumps and len(specs) > 1]
    if mixed:
        raise click.UsageError(
            f"--{mixed[0]}: give one database (or DB#N), or dumps, not several databases"
        )
    return dumps


def _refuse_incomplete(old, new) -> None:
    """Exit with 4 when a snapshot holds a dump that could not be read to the end: its missing
    keys would show as removed or added."""
    for what, snap in (("old", old), ("new", new)):
        if not snap.complete:
            click.echo(
                f"rdbscan: error: {snap.label}: the {what} snapshot holds a dump that could not be "
                f"read to the end: not compared",
                err=True,
            )
            sys.exit(EXIT_DAMAGED)


def _write_diff(
    result: DiffData, fmt: str, html_path: str | None, report: str | None, quiet: bool
) -> None:
    """The diff as HTML to html_path (when asked), and in fmt (unless html) to report or
    standard output."""
    if fmt == "html" or html_path:
        from ..reports.diff.html import render_diff_html

        targets.write_output(render_diff_html(result), html_path, quiet, "HTML diff")
    if fmt != "html":
        from ..reports.diff.render import diff_document, render_diff

        _write_rendered(result, fmt, report, quiet, "diff", render_diff, diff_document)


def _says_failed(result: DiffData) -> bool:
    """Whether a --fail-on threshold was exceeded; if so the exceeded ones are said on
    standard error, with the measured value."""
    failed = "fail_on" in result and result["fail_on"]["failed"]
    if failed:
        names = ", ".join(
            f"{c['rule']} {_measured(c)} > {c['threshold']}"
            for c in result["fail_on"]["checks"]
            if c["failed"]
        )
        click.echo(f"rdbscan: the change exceeds --fail-on thresholds: {names}", err=True)
    return bool(failed)


def _write_rendered(
    result: DiffData | TrendData,
    fmt: str,
    path: str | None,
    quiet: bool,
    what: str,
    render,
    document,
) -> None:
    """A diff or trend in `fmt` (`render(result, fmt)`: markdown and json returned, text
    printed) to the file `path`, replacing only a file rdbscan wrote, else to standard output."""
    if fmt == "text" and path is None:
        render(result, "text")  # the terminal's width and colours
        return
    if fmt == "text":  # a text file says what it is on its first line (targets.py)
        text = f"rdbscan {what}, generated {result['generated_at']}\n" + text_page(
            lambda console: draw_text(document(result), console)
        )
    else:
        text = render(result, fmt) or ""
        text += "" if text.endswith("\n") else "\n"
    names = {"text": "text", "json": "JSON", "markdown": "Markdown"}
    targets.write_output(text, path, quiet, f"{names[fmt]} {what}")


def _measured(check: FailCheck) -> str:
    """A failed check's value as its threshold is written (growth=20%: a percentage)."""
    if check["rule"] == "growth" and check["threshold"].endswith("%"):
        return "inf%" if check["growth"] is None else f"{check['growth'] * 100:.1f}%"
    return str(check["value"])


@click.command("trend")
@click.argument("database", metavar="HISTORY.duckdb")
@click.option(
    "--instance",
    metavar="NAME",
    help="Only this instance (default: every instance in the database).",
)
@click.option(
    "--from",
    "from_",
    metavar="ID|TIME",
    help="First snapshot (by id, or the last taken at or before a time).",
)
@click.option("--to", metavar="ID|TIME", help="Last snapshot (default: the latest).")
@click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    help="Write the trend here, in the format its name says (.txt, .md, .json, .html; another "
    "name needs --format); default: standard output.  An existing file is replaced only if "
    "rdbscan wrote it.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=FORMAT,
    default=None,
    help="text (the default), json (documented in docs/diff.md), markdown, or html (one "
    "self-contained page with charts).  Default: from -o FILE's name, else text.",
)
@_html_option("trend")
@top_option("Families per instance, fastest growth first (0: all).", zero_means_all=True)
@delimiters_option
@click.option(
    "-q", "--quiet", is_flag=True, help="No line on standard error naming the files written."
)
@memory_limit_option
@redact_options
def trend_cmd(
    database, instance, from_, to, output, fmt, html_path, top, delimiters, quiet, redact
):
    """Per instance, the keys and memory of each family at each snapshot of a database written by
    `rdbscan load --instance NAME ... -o HISTORY.duckdb`, the growth per day (least squares over
    the snapshots), and the families that grow fastest.

    Example: rdbscan trend history.duckdb --instance cache-1 --from 2026-11-01
    """
    from ..reports.diff.trend import build_trend
    from ..reports.diff.trend_render import render_trend, trend_document

    outs = targets.resolve(output, None, fmt, html_path, formats=tuple(FORMAT.choices))
    if outs.database:
        raise CommandError(f"-o {outs.database}: trend writes no database", EXIT_USAGE)
    targets.check(outs)
    fmt = outs.fmt
    html_path = (outs.report if fmt == "html" else None) or outs.html
    ws = D.Workspace()
    try:
        result = build_trend(
            ws, database, instance=instance, top=top, delimiters=delimiters, from_=from_, to=to
        )
    except D.DiffError as e:
        raise CommandError(str(e), e.code) from None
    finally:
        ws.close()
    if redact is not None:
        from ..export.redact import redact_data

        result = redact_data(result, redact, delimiters)
    if fmt == "html" or html_path:
        from ..reports.diff.html import render_trend_html

        targets.write_output(render_trend_html(result), html_path, quiet, "HTML trend")
    if fmt != "html":
        _write_rendered(result, fmt, outs.report, quiet, "trend", render_trend, trend_document)
