"""Report commands (`report`, `queries`, `query`): thin click wrappers over rdbscan.reports.report,
rdbscan.reports.engine.querylib and rdbscan.reports.report.render."""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Callable
from pathlib import Path

import click

from ..db.connections import is_out_of_memory, with_room
from ..db.parquet import is_database_path
from ..errors import EXIT_DATABASE, EXIT_INPUT, EXIT_USAGE, CommandError, sql_error
from ..reports import report as rpt
from ..reports.engine import querylib, relations
from ..reports.engine.database import open_report_database
from ..reports.engine.sources import is_database, release_load_memory
from ..reports.format import wrapped
from ..reports.report import render
from ..reports.report.rules import RulesFile, load_rules
from ..reports.report.run import run_report
from . import targets
from .filters import filter_options, key_filter_from, refuse_on_database
from .options import (
    checked_target,
    delimiters_option,
    memory_limit_option,
    nonempty_delimiters,
    table_format_option,
    top_option,
)
from .output import for_a_terminal, make_progress, section_status, text_page, text_width
from .redact import redact_options, redacted_say


def _settings(pairs) -> dict[str, str]:
    out = {}
    for item in pairs or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--set")
        out[name.strip()] = value.strip()
    return out


def _params(pairs, query: querylib.Query) -> dict:
    out = {}
    for item in pairs or ():
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep:
            raise click.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--param")
        if name not in query.params:
            known = ", ".join(sorted(query.params)) or "none"
            raise click.BadParameter(
                f"{query.name} has no parameter {name!r} (parameters: {known})",
                param_hint="--param",
            )
        try:
            out[name] = querylib.coerce(value, query.params[name].default)
        except ValueError:
            raise click.BadParameter(
                f"{name}={value!r}: expected a value like {query.params[name].default!r}",
                param_hint="--param",
            ) from None
    return out


class _SectionChoice(click.Choice):
    """--section NAME: the section's name, or the spelling --fail-on uses (big-keys)."""

    def convert(self, value, param, ctx):
        return super().convert(str(value).replace("-", "_"), param, ctx)


SECTION_CHOICES = _SectionChoice(list(rpt.SECTION_NAMES))


@click.command("report")
@click.argument("sources", nargs=-1, required=True, metavar="DUMP... | FILE.duckdb")
@memory_limit_option
@click.option(
    "-o",
    "--output",
    "output",
    metavar="FILE",
    help="Write the report here, in the format its name says (.txt, .md, .json, .html, "
    ".prom/.om; another name needs --format); default: standard output.  An existing file is "
    "replaced only if rdbscan wrote it.  A name ending .duckdb is the database, as --database.",
)
@click.option(
    "--database",
    "db_path",
    metavar="FILE.duckdb",
    help="Load the dumps into this database and keep it (for `rdbscan sql` and `query`): a new "
    "file, or a database rdbscan wrote, whose dumps the report then covers too; default: a "
    "temporary database removed afterwards.",
)
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "markdown", "html", "openmetrics"]),
    default=None,
    help="text (the default): tables for a terminal; json: the stable object "
    "documented in docs/; markdown: for tickets and wikis; html: one "
    "self-contained file with charts; openmetrics: "
    "gauges for Prometheus (docs/export.md).  Default: from -o FILE's name, else text.",
)
@click.option(
    "--metrics-instance",
    metavar="NAME",
    help="With --format openmetrics: the rdb_instance label (default: the first dump's "
    "file name without its extensions).",
)
@filter_options
@redact_options
@click.option(
    "--html",
    "html_path",
    metavar="FILE.html",
    help="Also write the HTML report here (with any --format).",
)
@top_option("Rows per list (big keys, families, slots, ...).")
@click.option(
    "--dump-id",
    type=int,
    default=0,
    help="Report on one dump of a multi-dump database (default: all dumps together, but of "
    "an instance loaded night after night only its latest snapshot).",
)
@click.option(
    "--delimiters",
    default=None,
    callback=nonempty_delimiters,
    help="Characters that separate key segments for families "
    "and naming, e.g. ':#./|' (default ':').",
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="redis.conf / valkey.conf to read compact-encoding thresholds from "
    "(default: the dump's server version defaults).",
)
@click.option(
    "--set",
    "sets",
    multiple=True,
    metavar="NAME=VALUE",
    help="Override one threshold or query parameter, e.g. --set hash-max-listpack-entries=1024, "
    "--set collection_length=10000, --set lazyfree-lazy-expire=yes. Repeatable.",
)
@click.option(
    "--rules",
    "rules_path",
    type=click.Path(exists=True, dir_okay=False),
    help="TOML rules file: naming rules on/off and their settings, big-key thresholds, "
    "--fail-on defaults (format: docs/report.md).",
)
@click.option(
    "--schema",
    "schema_path",
    metavar="FILE.toml",
    help="Check the keys against this key schema (written by `rdbscan schema`, "
    "docs/schema.md): adds the Schema section; --fail-on schema gates on it.",
)
@click.option(
    "--fail-on",
    "fail_on",
    default=None,
    metavar="RULES",
    help="Exit with 3 when findings exceed thresholds, e.g. 'big-keys,no-ttl=100,"
    "no-ttl-share=30%,naming:uppercase=0'. Rules: " + ", ".join(rpt.FAIL_RULES) + ".",
)
@click.option(
    "--section",
    "sections",
    multiple=True,
    type=SECTION_CHOICES,
    metavar="SECTION",
    help=f"Only these sections (repeatable; default: all): {', '.join(SECTION_CHOICES.choices)}.",
)
@click.option(
    "--idle-days",
    type=click.FloatRange(0, 1e6),
    default=30,
    show_default=True,
    help="Keys idle longer than this are cold (dumps with LRU data).",
)
@click.option(
    "--target",
    metavar="VERSION",
    callback=checked_target,
    help="Memory model used when loading a dump (see `rdbscan load`).",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress display (load, then the section being computed) and no load summary on standard error.",
)
@click.option(
    "--replace",
    is_flag=True,
    help="Load a dump the --database already holds again, in place of "
    "the old one (default: report on the one loaded before).",
)
@click.option(
    "--allow-ratio",
    is_flag=True,
    help="Read compressed input that expands more than 200:1 (see `rdbscan load`).",
)
def report_cmd(
    sources,
    output,
    db_path,
    fmt,
    top,
    dump_id,
    delimiters,
    config_path,
    sets,
    rules_path,
    fail_on,
    sections,
    idle_days,
    target,
    quiet,
    html_path,
    replace,
    allow_ratio,
    schema_path,
    metrics_instance,
    redact,
    **flt,
):
    """Report on RDB dumps: overview, big keys, key families, TTL gaps, compact-encoding
    candidates, naming, cold keys, cluster slots, streams.

    Given dumps, rdbscan loads them first (into --database, or a temporary database removed
    afterwards); given a database written by `rdbscan load`, it reports on what is there.  Every
    figure comes from a SQL file listed by `rdbscan queries`.  A dump the --database already
    holds is not loaded twice: the report covers the one loaded before (--replace loads it
    again), and the dumps it held before, which the report's first line then names.  Every
    output (-o, --database, --html) is checked before any dump is read.  Exit codes
    (docs/exit-codes.md): 0 ok, 3 findings over --fail-on thresholds, 4 damaged dump (the
    report covers the keys read), 5 checksum mismatch or keys left out by --skip-bad, 6 an
    input missing or unreadable, 7 an output that cannot be written or is a file rdbscan did
    not write (left untouched), 9 a dump newer than rdbscan read up to the first record it
    does not know (not damaged), as `rdbscan load` says.

    Example: rdbscan report dump.rdb -o report.html --fail-on big-keys,naming
    """
    from .fleet import expand_dumps

    outs = targets.resolve(output, db_path, fmt, html_path)
    targets.check(outs)
    fmt, db_path = outs.fmt, outs.database
    html_path = (outs.report if fmt == "html" else None) or outs.html
    sources = expand_dumps(sources)
    key_filter = key_filter_from(flt)
    if is_database(sources):
        refuse_on_database(key_filter, sources[0])
    options, checks = _report_options(
        rules_path,
        fail_on,
        schema_path,
        delimiters,
        dump_id=dump_id,
        top=top,
        sections=sections,
        config_path=config_path,
        sets=sets,
        idle_days=idle_days,
    )
    done = _run_with_status(
        sources,
        options,
        quiet,
        output=db_path,
        fail_on=checks,
        charts=fmt == "html" or bool(html_path),
        say=redacted_say(redact, options.delimiters),
        progress=make_progress(quiet),
        target=target,
        replace=replace,
        allow_ratio=allow_ratio,
        key_filter=key_filter,
    )
    _deliver(done, outs, fmt, html_path, redact=redact, quiet=quiet, instance=metrics_instance)


def _report_options(
    rules_path,
    fail_on,
    schema_path,
    delimiters,
    *,
    dump_id,
    top,
    sections,
    config_path,
    sets,
    idle_days,
) -> tuple[rpt.ReportOptions, list[tuple[str, str]]]:
    """The report's options and --fail-on checks from the command line and the --rules file
    (whose settings the command line overrides); a bad rules file, --fail-on or --schema is a
    usage error (exit 2), said in one line."""
    rules = RulesFile()
    try:
        if rules_path:
            rules = load_rules(rules_path)
        fail_spec = (
            fail_on
            if fail_on is not None
            else (",".join(f"{k}={v}" for k, v in rules.fail_on.items()) if rules.fail_on else None)
        )
        checks = rpt.parse_fail_on(fail_spec, defaults=rules.fail_on)
        from ..reports.schema.check import load_for_report

        key_schema, delimiters = load_for_report(schema_path, checks, delimiters)
    except ValueError as e:
        raise CommandError(str(e), EXIT_USAGE) from None
    options = rpt.ReportOptions(
        dump_id=dump_id,
        top=top,
        delimiters=delimiters or rules.delimiters or ":",
        sections=tuple(sections) or rpt.SECTION_NAMES,
        config_path=config_path,
        settings=_settings(sets),
        naming=rules.naming,
        big_keys=rules.big_keys,
        idle_days=idle_days,
        schema=key_schema,
    )
    return options, checks


def _run_with_status(sources, options: rpt.ReportOptions, quiet: bool, **run):
    """run_report with the section spinner on standard error: it starts with the first section,
    once the load's progress display is gone, and stops when the report is done."""
    with contextlib.ExitStack() as stack:
        status: Callable[[str], None] | None = None

        def on_section(name: str) -> None:  # the spinner starts once the load's display is gone
            nonlocal status
            if status is None:
                status = stack.enter_context(section_status(quiet)) or (lambda name: None)
            status(name)

        done = run_report(
            sources,
            options,
            on_section=on_section,
            quiet=quiet,
            **run,
        )
    return done


def _deliver(done, outs, fmt, html_path, *, redact, quiet, instance) -> None:
    """Write the finished report where the command line asked (redacted first when asked), say
    which --fail-on checks failed, and exit with the run's code."""
    report = done.report
    if report is None:
        sys.exit(done.exit_code)  # nothing was read: the errors only
    if redact is not None:
        from ..export.redact import redact_report

        report = redact_report(report, redact)
    if fmt == "html" or html_path:
        _write_html(report, html_path, quiet)
    if fmt != "html":
        _write_report(report, fmt, outs.report, quiet, instance)
    failed = done.failed_checks()
    if failed:
        click.echo(f"rdbscan: findings exceed --fail-on thresholds: {', '.join(failed)}", err=True)
    sys.exit(done.exit_code)


FORMAT_NAMES = {
    "text": "text",
    "json": "JSON",
    "markdown": "Markdown",
    "html": "HTML",
    "openmetrics": "OpenMetrics",
}


def _write_report(
    report: dict, fmt: str, path: str | None, quiet: bool, metrics_instance: str | None
) -> None:
    """The report in `fmt` to the file `path` (replacing only a file rdbscan wrote), else to
    standard output."""
    if fmt == "text" and path is None:
        render.render_text(report)  # the terminal's width and colours
        return
    if fmt == "json":
        text = render.render_json(report) + "\n"
    elif fmt == "markdown":
        text = render.render_markdown(report)
    elif fmt == "openmetrics":
        from ..export.metrics import render_openmetrics

        text = render_openmetrics(report, metrics_instance)
    else:  # a text file says what it is on its first line (targets: rdbscan may replace it)
        text = f"rdbscan report, generated {report.get('generated_at')}\n" + text_page(
            lambda console: render.render_text(report, console)
        )
    targets.write_output(text, path, quiet, f"{FORMAT_NAMES[fmt]} report")


def _write_html(report: dict, html_path: str | None, quiet: bool) -> None:
    """The HTML report to `html_path` (else standard output); takes `charts` out of `report`."""
    from ..reports.report import html

    page = html.render_html(report)
    report.pop("charts", None)
    targets.write_output(page, html_path, quiet, "HTML report")


_release_load_memory = release_load_memory  # rdbscan/cli/diff.py takes it from here


@click.command("queries")
@click.option(
    "-v", "--verbose", is_flag=True, help="Also show each query's full description and parameters."
)
def queries_cmd(verbose):
    """List the bundled SQL queries, one line each: the name to give `rdbscan query` and the
    question it answers (on a terminal, the question wrapped to its width).

    Example: rdbscan queries -v
    """
    try:
        queries = querylib.bundled_queries()
    except FileNotFoundError as e:
        raise click.ClickException(str(e)) from None
    width = max(len(n) for n in queries)
    # a terminal's reader gets the text wrapped; a pipe (grep) one line per query or parameter
    columns = text_width(terminal=True) if for_a_terminal() else 0

    def echo(text: str, first: str, rest: str) -> None:
        fits = columns - len(rest) >= 30
        click.echo("\n".join(wrapped(text, columns, first, rest) if fits else [first + text]))

    for name, q in queries.items():
        if not verbose:
            echo(q.summary, f"{name:<{width}}  ", " " * (width + 2))
            continue
        click.echo(name)
        echo(q.answers, "  ", "  ")
        for p in q.params.values():
            echo(p.description, f"  --param {p.name}={p.default!r}  ", "      ")
        click.echo(f"  file: {q.path}\n")


@click.command("query")
@click.argument("database", metavar="FILE.duckdb")
@click.argument("name")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Set a query parameter (see `rdbscan queries -v`). Repeatable.",
)
@click.option(
    "--dump-id",
    type=int,
    default=0,
    help="Only this dump (default: all dumps, but of an instance only its latest snapshot).",
)
@delimiters_option
@memory_limit_option
@table_format_option
def query_cmd(database, name, params, dump_id, delimiters, fmt):
    """Run one bundled query (or your own .sql file with the same header) on a database
    written by rdbscan and print its rows.

    NAME is a name from `rdbscan queries`, or a path to a .sql file; queries read the TEMP
    VIEW `rkeys` (the `keys` view plus pattern, snapshot_ms, ttl_ms, ...).

    Example: rdbscan query dump.duckdb big_keys --param top=50 --param collection_length=1000
    """
    from .sqlout import print_result

    if name.endswith(".sql") and Path(name).is_file():
        try:
            q = querylib.parse_query(Path(name))
        except ValueError as e:
            raise CommandError(str(e), EXIT_USAGE) from None
    else:
        try:
            q = querylib.get_query(name)
        except KeyError:
            raise CommandError(
                f"no bundled query {name!r} (see `rdbscan queries`)", EXIT_USAGE
            ) from None
    values = {"dump_id": dump_id, "delimiters": delimiters}
    values.update(_params(params, q))
    if not Path(database).exists():
        raise CommandError(f"{database}: No such file or directory", EXIT_INPUT)
    if not is_database_path(database):
        raise CommandError(
            f"{database}: not a DuckDB database (load a dump with `rdbscan load` first)",
            EXIT_DATABASE,
        )
    con = open_report_database(database)
    created: set = set()

    def run():
        relations.prepare(con, values, needs=relations.relations_used(q), created=created)
        return querylib.run(con, q, values)

    try:
        cols, rows = with_room(con, run)
    except ValueError as e:
        raise CommandError(str(e), EXIT_USAGE) from None
    except Exception as e:  # duckdb.Error
        if is_out_of_memory(e):
            raise  # exit 8, the one line naming --memory-limit (cli/main.py)
        # a query of another command (`(rdbscan report --schema) ...`) reads what it makes
        made_by = re.match(r"\((rdbscan [^)]*)\)", q.answers or "")
        hint = f" ({q.name} is run by `{made_by.group(1)}`)" if made_by else ""
        raise sql_error(e, f"{q.name}: ", hint) from None
    finally:
        con.close()
    print_result(cols, rows, fmt)
