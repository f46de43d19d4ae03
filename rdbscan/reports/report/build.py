"""`rdbscan report` as a library: run the bundled queries over a database and assemble one dict.

The dict is the JSON contract (docs/json.md): each section's object (its builder, in the order of
`sections.SECTIONS`), `fail_on`, `charts` for the HTML report, and the findings first; the
renderers (render.py, html.py) only lay it out.  Every number comes from a bundled SQL file;
Python here only picks parameters (thresholds by server version, config file, rules file).
"""

from __future__ import annotations

import datetime as _dt
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

from ..engine import querylib, relations
from ..engine.relations import Runner
from ..engine.thresholds import (
    BIG_KEY_DEFAULTS,
    NEWEST_THRESHOLDS,
    set_query_params,
    thresholds_for,
)
from . import findings
from .fail_on import evaluate_fail_on
from .rules import NamingConfig
from .sections import SECTION_NAMES, SECTIONS

if TYPE_CHECKING:
    from .data import ReportData

REPORT_FORMAT = 1


# --- options ---------------------------------------------------------------------------------


@dataclass
class ReportOptions:
    dump_id: int = 0
    top: int = 10
    delimiters: str = ":"
    sections: tuple[str, ...] = SECTION_NAMES
    config_path: str | None = None  # redis.conf with encoding thresholds
    settings: dict[str, str] = field(default_factory=dict)  # --set name=value
    naming: NamingConfig = field(default_factory=NamingConfig)
    big_keys: dict = field(default_factory=dict)  # overrides of BIG_KEY_DEFAULTS
    idle_days: float = 30
    max_freq: int = 0
    examples: int = 5
    schema: object = (
        None  # rdbscan.reports.schema.Schema: adds the `schema` section (--schema, docs/schema.md)
    )
    note: str = ""  # the report's first line: what it covers, when that is not plain (run.py)


def query_values(con, options: ReportOptions) -> tuple[dict, dict]:
    """All query parameter values for a report, plus where the encoding thresholds came from."""
    dump = con.execute(
        "SELECT server, server_version, rdb_version FROM dumps "
        f"WHERE dump_id IN ({relations.REPORTED_DUMPS}) "
        "ORDER BY rdb_version DESC NULLS LAST, dump_id LIMIT 1",
        {"dump_id": options.dump_id},
    ).fetchone()
    if dump is None:
        raise ValueError(
            f"no dump with id {options.dump_id}"
            if options.dump_id
            else "the database holds no dump"
        )
    return values_for(options, *dump)


def check_options(options: ReportOptions) -> None:
    """Raise ValueError for a --set or --config the report cannot use, before any dump is read
    (names and values do not depend on the dump's server; its defaults do)."""
    values_for(options, None, None, None)


def values_for(
    options: ReportOptions, server: str | None, version: str | None, rdb_version: int | None
) -> tuple[dict, dict]:
    """query_values for a dump of that server."""
    thresholds, sources, extra, rest = thresholds_for(
        server, version, rdb_version, options.config_path, options.settings
    )
    big = {**BIG_KEY_DEFAULTS, **options.big_keys}
    values = {
        "dump_id": options.dump_id,
        "delimiters": options.delimiters,
        "top": options.top,
        "examples": options.examples,
        "idle_days": options.idle_days,
        "max_freq": options.max_freq,
        **big,
        **thresholds,
        **options.naming.query_values(options.delimiters),
    }
    # --set for any other query parameter (e.g. min_keys=20, margin=0.1, max_depth=2)
    queries = querylib.bundled_queries(include_base=True).values()
    unknown = set_query_params(values, big, rest, queries)
    # what --config and --set fix for every dump; the rest comes from each dump's own server
    values["threshold_overrides"] = {
        p: values[p]
        for p in NEWEST_THRESHOLDS
        if sources.get(p, "").startswith(("config ", "--set"))
        or any(n.replace("-", "_") == p for n in rest if n not in unknown)
    }
    for name, value in unknown.items():
        if name.lower() == "lazyfree-lazy-expire":
            extra[name.lower()] = value
        else:
            raise ValueError(
                f"--set {name}: not a compact-encoding setting or query parameter "
                f"(see `rdbscan queries -v`)"
            )
    lazy = (
        extra.get("lazyfree-lazy-expire") or rest.get("lazyfree-lazy-expire") or ""
    ).lower() or None
    meta = {
        "sources": sources,
        "big": big,
        "lazyfree_lazy_expire": lazy,
        "server": server,
        "server_version": version,
        "rdb_version": rdb_version,
    }
    return values, meta


# Above findings.MAX_DUMPS_ALONE dumps, each dump's report is not built alone: findings.grouped
MAX_DUMPS_ALONE = findings.MAX_DUMPS_ALONE


def _reported_dumps(con) -> int:
    """How many dumps the report covers (rsnap: made by the report's first query)."""
    return con.execute("SELECT count(*) FROM rsnap").fetchone()[0]


def _each_dump_alone(
    con, options: ReportOptions, on_section: Callable[[str], None] | None = None
) -> dict[int, dict]:
    """dump id -> the report of that dump alone (its sections' objects), when the report covers
    several dumps (at most MAX_DUMPS_ALONE): what each dump's findings are, to say which dumps a
    finding concerns and to open with one line per dump (docs/report.md, "Several dumps")."""
    if options.dump_id:
        return {}
    ids = [
        r[0]
        for r in con.execute(
            f"SELECT dump_id FROM dumps WHERE dump_id IN ({relations.REPORTED_DUMPS}) "
            "ORDER BY dump_id",
            {"dump_id": 0},
        ).fetchall()
    ]
    if not 1 < len(ids) <= MAX_DUMPS_ALONE:
        return {}
    out = {}
    for d in ids:
        step = None
        if on_section is not None:
            step = lambda name, d=d: on_section(f"dump {d} alone, {name}")  # noqa: E731
        report = build_report(con, replace(options, dump_id=d), on_section=step)
        # what the line per dump says, whatever --section leaves out of the overview
        row = con.execute(
            "SELECT dump_id, path, server, server_version, keys, memory_bytes, complete "
            "FROM dumps WHERE dump_id = ?",
            [d],
        ).fetchone()
        cols = ("dump_id", "path", "server", "server_version", "keys", "memory_bytes", "complete")
        report["dump"] = dict(zip(cols, row))
        out[d] = report
    return out


def build_report(
    con,
    options: ReportOptions | None = None,
    fail_on: list[tuple[str, str]] | None = None,
    on_section: Callable[[str], None] | None = None,
    charts: bool = False,
) -> dict:
    """Run every section's queries and return the report dict (the `--format json` object).

    charts: also add `charts`, the aggregates the HTML report draws (docs/html-report.md).

    fail_on: parsed `--fail-on` checks (parse_fail_on); adds the `fail_on` object.
    on_section: called with each section's name before its queries run (progress display).
    """
    options = options or ReportOptions()
    started = time.perf_counter()
    # each dump alone first (the temporary relations are made again for the whole report)
    alone = _each_dump_alone(con, options, on_section)
    values, meta = query_values(con, options)
    run = Runner(con, values)
    report: dict = {
        "rdbscan_report": REPORT_FORMAT,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "options": {
            "dump_id": options.dump_id,
            "top": options.top,
            "delimiters": options.delimiters,
            "sections": list(options.sections),
        },
        **({"note": options.note} if options.note else {}),
    }
    step = on_section or (lambda name: None)
    for section in SECTIONS:
        if section.always or section.wanted(options):
            step(section.name)
            report[section.name] = section.build(run, options, meta)
    for section in SECTIONS:  # built for the other parts only: what they read
        if section.always and not section.wanted(options):
            report[section.name] = {k: report[section.name][k] for k in section.always}
    typed = cast("ReportData", report)  # (the same object: its sections' fields are typed)
    if fail_on:
        report["fail_on"] = evaluate_fail_on(run, typed, fail_on)
    if charts:
        step("charts")
        report["charts"] = {
            k: v
            for s in SECTIONS
            if s.chart_data is not None
            for k, v in s.chart_data(run, options).items()
        }
    # the verdict first: right after the options in the JSON object
    found = findings.build(typed)
    head: dict = {k: report[k] for k in ("rdbscan_report", "generated_at", "options")}
    if alone:
        found, head["dumps"] = findings.per_dump(typed, alone)
    elif not options.dump_id and _reported_dumps(con) > MAX_DUMPS_ALONE:
        rows = run.rows("dump_lines")
        lines = {r["dump_id"]: r for r in rows}
        per_section = {
            s.name: s.by_dump(run, report[s.name], lines)
            for s in findings.grouped_sections(typed)
            if s.by_dump is not None
        }
        found, head["dumps"] = findings.grouped(typed, rows, per_section)
    report = {**head, "findings": found, **report}
    report["report_seconds"] = round(time.perf_counter() - started, 3)
    return report
