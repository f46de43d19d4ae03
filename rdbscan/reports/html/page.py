"""HTML pages: one self-contained file (no network) of a report, a diff or a trend.

Everything is inline: the style sheets and the script of `assets/` (sortable tables, the
drill-down treemap of key families, the slot heat map, tooltips) and the data, embedded as JSON.
The tables are the blocks of the text report (rdbscan/reports/document.py), drawn here as HTML,
so the two never disagree; the charts are SVG (svg.py).  No chart library: docs/html-report.md
says why.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

from ..document import SEVERITY_MARK, Block
from ..format import fmt_key

GENERATOR = "rdbscan"
_ASSETS = Path(__file__).resolve().parent / "assets"


class HtmlOutputError(Exception):
    """The HTML file cannot be written where the user asked (it would overwrite another file)."""


def esc(text) -> str:
    """Text from a dump, escaped for HTML (control bytes shown as \\xNN as in the text report)."""
    return html.escape(fmt_key(text, 10_000) if text is not None else "-", quote=True)


_e = esc


def json_for_script(data) -> str:
    """JSON that cannot end its <script> element early or open a comment."""
    text = json.dumps(data, ensure_ascii=True, default=str, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def anchor(title: str) -> str:
    """The id of a section's heading (the table of contents links to it)."""
    return "s-" + (re.sub(r"[^a-z0-9]+", "-", str(title).lower()).strip("-") or "section")


def toc(entries: list[tuple[str, str]]) -> str:
    """A table of contents: (id, title) links, in page order."""
    items = "".join(f'<li><a href="#{_e(i)}">{_e(t)}</a></li>' for i, t in entries)
    return f'<nav class="toc" aria-label="Contents"><b>Contents</b><ol>{items}</ol></nav>'


# A table cell whose text is one word this short is never broken (class "nw"): the cells may
# break anywhere (report.css), so that a long key name does not widen its table, and a narrow
# page would otherwise cut "converts" or "listpack" where the column's header ends.
NOWRAP_CHARS = 24


def _cell_class(numeric: bool, value) -> str:
    """The class attribute of a table cell: `num` (right-aligned), `nw` (one short word)."""
    text = str(value)
    names = ["num"] if numeric else []
    if len(text) <= NOWRAP_CHARS and not any(ch.isspace() for ch in text):
        names.append("nw")
    return f' class="{" ".join(names)}"' if names else ""


def _block_html(b: Block) -> str:
    if b.kind == "section":
        return f'<h2 id="{_e(anchor(b.text))}">{_e(b.text)}</h2>'
    if b.kind == "kv":
        return "<dl>" + "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in b.items) + "</dl>"
    if b.kind == "table":
        t = b.table
        assert t is not None
        title = f"<caption>{_e(t.title)}</caption>" if t.title else ""
        if not t.rows:
            return f'<p class="note">{_e(t.title or "Table")}: none</p>'
        head = "".join(
            f'<th class="{"num" if i in t.numeric else ""}" title="click to sort">{_e(h)}</th>'
            for i, h in enumerate(t.headers)
        )
        body = "".join(
            "<tr>"
            + "".join(
                f"<td{_cell_class(i in t.numeric, c)}>{_e(c)}</td>" for i, c in enumerate(row)
            )
            + "</tr>"
            for row in t.rows
        )
        return f'<table class="sortable">{title}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
    if b.kind == "advice":
        return f'<p class="advice"><b>What to do:</b> {_e(b.text)}</p>'
    if b.kind == "note":
        return f'<p class="note">{_e(b.text)}</p>'
    if b.kind == "finding":
        sev, message, advice = b.items
        return (
            f'<li class="finding {sev}"><span class="sev">{_e(SEVERITY_MARK[sev])}</span> '
            f'{_e(message)} <span class="todo">→ {_e(advice)}</span></li>'
        )
    return ""


def blocks_html(blocks: list[Block]) -> str:
    """Blocks (report.render.document, diff.render.diff_document, ...) as HTML; consecutive findings
    form one list."""
    parts, in_list = [], False
    for b in blocks:
        if b.kind == "finding" and not in_list:
            parts.append('<ul class="findings">')
            in_list = True
        elif b.kind != "finding" and in_list:
            parts.append("</ul>")
            in_list = False
        parts.append(_block_html(b))
    if in_list:
        parts.append("</ul>")
    return "".join(parts)


def page(
    title: str,
    header: str,
    body: str,
    data: dict,
    data_id: str = "rdbscan-report",
    assets: tuple[str, ...] = (),
) -> str:
    """One self-contained HTML document: the style sheets (report.css, then `assets`), `header`,
    `body`, `data` embedded as JSON in <script id=data_id>, and the report's script."""
    style = "".join(
        (_ASSETS / name).read_text(encoding="utf-8") for name in ("report.css",) + assets
    )
    script = (_ASSETS / "report.js").read_text(encoding="utf-8")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="generator" content="{GENERATOR}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{style}</style></head><body>"
        + header
        + "<main>"
        + body
        + "</main>"
        + f'<script type="application/json" id="{data_id}">{json_for_script(data)}</script>'
        + f"<script>{script}</script></body></html>\n"
    )


def write_html(path: str, text: str) -> None:
    """Write the report; never overwrite a file that is not an rdbscan HTML report."""
    check_target(path)
    p = Path(path)
    tmp = p.with_name(p.name + ".rdbscan-tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError:  # a full disk: no half-written file left beside it
        tmp.unlink(missing_ok=True)
        raise


def check_target(path: str) -> None:
    """HtmlOutputError when `path` is a directory or a file rdbscan did not write (checked before
    long work, and again when writing)."""
    p = Path(path)
    if p.exists():
        if p.is_dir():
            raise HtmlOutputError(f"{path}: is a directory")
        with open(p, "rb") as fh:
            head = fh.read(4096)
        if f'<meta name="generator" content="{GENERATOR}">'.encode() not in head:
            raise HtmlOutputError(
                f"{path}: exists and is not an rdbscan HTML report; not overwritten"
            )
