"""The HTML report: the verdict, the charts, then the sections' tables (the text report's blocks),
and the report dict (the JSON report, plus `charts`) embedded for the script's treemap and heat
map (docs/html-report.md).  Each section draws its own charts (its `charts`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, cast

from ..format import fmt_bytes, fmt_int, fmt_time
from ..html.page import anchor, blocks_html, page, toc
from ..html.page import esc as _e
from . import render
from .sections import SECTIONS

if TYPE_CHECKING:
    from .data import ReportData


def _charts_html(report: ReportData) -> str:
    out = [c for s in SECTIONS if s.charts is not None for c in s.charts(report)]
    return (
        '<section id="charts"><h2>Charts</h2><div class="grid">' + "".join(out) + "</div></section>"
    )


def _body_html(report: ReportData) -> str:
    """The verdict, then the charts, then the sections; a report without its first section
    (`--section` left the overview out) shows every block under the verdict, and no chart."""
    verdict, parts = render.document_parts(report)
    sections = [b for _, blocks in parts for b in blocks]
    if not (verdict and parts and parts[0][0] == SECTIONS[0].name):
        return '<section id="verdict">' + blocks_html(verdict + sections) + "</section>"
    # a long page (every section, a dozen charts): links to each part first
    contents = [("verdict", "Findings"), ("charts", "Charts")] + [
        (anchor(b.text), b.text) for b in sections if b.kind == "section"
    ]
    return (
        toc(contents)
        + '<section id="verdict">'
        + blocks_html(verdict)
        + "</section>"
        + _charts_html(report)
        + '<section id="sections">'
        + blocks_html(sections)
        + "</section>"
    )


# Up to this many dumps the page opens with their table; beyond, it is folded (one click away)
# so that the findings, which have a line per dump, are on the first screen.
OPEN_DUMPS_TABLE = 4


def _header_html(report: ReportData) -> str:
    o = report["overview"]
    rows = []
    for d in o.get("dumps") or []:  # (--section left the overview out: its `always` only)
        model = d.get("memory_model") or d.get("memory_profile") or ""
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{_e(v)}</td>"
                for v in (
                    d.get("path"),
                    f"{d.get('server') or '?'} {d.get('server_version') or ''}",
                    d.get("rdb_version"),
                    fmt_time(d.get("snapshot_time") or d.get("snapshot_ms")),
                    fmt_int(d.get("keys")),
                    fmt_bytes(d.get("memory_bytes")),
                    model or "-",
                )
            )
            + "</tr>"
        )
    table = (
        '<table class="dumps"><thead><tr><th>dump</th><th>server</th><th>RDB</th><th>snapshot</th>'
        "<th>keys</th><th>memory (estimate)</th><th>memory model</th></tr></thead><tbody>"
        + "".join(rows)
        + "</tbody></table>"
    )
    count = ""
    if len(rows) > OPEN_DUMPS_TABLE:  # the findings first: the list of dumps folded away
        count = f"{fmt_int(len(rows))} dumps · "
        table = (
            f"<details><summary>The {fmt_int(len(rows))} dumps: server, RDB version, snapshot, "
            f"keys, memory</summary>{table}</details>"
        )
    return (
        f'<header><h1>rdbscan report</h1><p class="sub">generated {_e(report["generated_at"])} · '
        f"{count}{fmt_int(o['keys'])} keys · {fmt_bytes(o['memory_bytes'])} estimated</p>"
        f"{table}</header>"
    )


def render_html(report: dict) -> str:
    """The whole report (the JSON object plus `charts`, ReportData) as one HTML document (no
    external reference)."""
    typed = cast("ReportData", report)
    title = "rdbscan report"
    dumps = typed["overview"].get("dumps") or []  # (its `always` only: --section)
    if len(dumps) == 1:
        title += " · " + os.path.basename(str(dumps[0].get("path")))
    return page(title, _header_html(typed), _body_html(typed), report)
