"""The HTML report: one self-contained file (no network), with charts and sortable tables.

Everything is inline: the style sheet, a small script (sortable tables, the drill-down treemap of
key families, the slot heat map, tooltips) and the data.  Bar charts and histograms are SVG drawn
here; the report dict (the JSON report, plus `charts`) is embedded as JSON, and the treemap and
the heat map are drawn from it in the browser.  No chart library: docs/html-report.md says why.
The tables are the text report's tables (`render.document`), so the two never disagree.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

from . import render
from .render import fmt_bytes, fmt_int, fmt_key, fmt_pct, fmt_time

GENERATOR = "rdbscan"
TIMELINE_BUCKETS = 120  # chart_expiry_timeline's default `buckets`
_ASSETS = Path(__file__).resolve().parent / "html_assets"


class HtmlOutputError(Exception):
    """The HTML file cannot be written where the user asked (it would overwrite another file)."""


def _e(text) -> str:
    """Text from a dump, escaped for HTML (control bytes shown as \\xNN as in the text report)."""
    return html.escape(fmt_key(text, 10_000) if text is not None else "-", quote=True)


def _json_for_script(data) -> str:
    """JSON that cannot end its <script> element early or open a comment."""
    text = json.dumps(data, ensure_ascii=True, default=str, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --- SVG charts ------------------------------------------------------------------------------

_PALETTE = [
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
]


def _hbars(title: str, rows: list[tuple[str, float, str]], width: int = 580) -> str:
    """Horizontal bars: (label, value, value text); the label shown left, the value right."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 18, 4, 190, 190
    height = len(rows) * (bar_h + gap) + 8
    top = max(v for _, v, _ in rows) or 1
    span = width - label_w - value_w - 10
    parts = [
        f'<svg class="chart" role="img" aria-label="{_e(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    ]
    for i, (label, value, text) in enumerate(rows):
        y = 4 + i * (bar_h + gap)
        w = max(1.0, span * value / top) if value else 0
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
            f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{bar_h}" '
            f'fill="{_PALETTE[i % len(_PALETTE)]}"/>'
            f'<text x="{label_w + w + 4:.1f}" y="{y + 13}">{_e(text)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _columns(
    title: str,
    rows: list[tuple[str, float, str]],
    width: int = 580,
    height: int = 180,
    marks: list[tuple[float, str]] | None = None,
    label_every: int = 1,
) -> str:
    """Vertical bars (a histogram or a timeline); marks: (x position 0..1, tooltip) drawn as red lines."""
    if not rows:
        return ""
    pad_b, pad_t = 34, 8
    n = len(rows)
    step = (width - 10) / n
    top = max(v for _, v, _ in rows) or 1
    span = height - pad_b - pad_t
    parts = [
        f'<svg class="chart" role="img" aria-label="{_e(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    ]
    for i, (label, value, text) in enumerate(rows):
        h = span * value / top if value else 0
        if value and h < 1:
            h = 1
        x = 5 + i * step
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<rect x="{x + 1:.1f}" y="{pad_t + span - h:.1f}" width="{max(step - 2, 1):.1f}" '
            f'height="{h:.1f}" fill="#4e79a7"/></g>'
        )
        if i % label_every == 0:
            parts.append(
                f'<text class="tick" x="{x + step / 2:.1f}" y="{height - pad_b + 14}" '
                f'text-anchor="middle">{_e(_short(label, 14))}</text>'
            )
    for pos, tip in marks or []:
        x = 5 + pos * (width - 10)
        parts.append(
            f'<g class="mark"><title>{_e(tip)}</title><line x1="{x:.1f}" x2="{x:.1f}" y1="{pad_t}" '
            f'y2="{pad_t + span}" stroke="#e15759" stroke-width="2"/></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _short(text: str, n: int) -> str:
    text = fmt_key(text, 10_000)
    return text if len(text) <= n else text[: n - 1] + "…"


def _chart_box(title: str, body: str, note: str = "") -> str:
    if not body:
        return ""
    note_html = f'<p class="note">{_e(note)}</p>' if note else ""
    return f'<figure class="box"><figcaption>{_e(title)}</figcaption>{body}{note_html}</figure>'


def _charts_html(report: dict) -> str:
    o = report.get("overview") or {}
    charts = report.get("charts") or {}
    out = []
    # memory by key family: the treemap (drawn by the script from the embedded data)
    if charts.get("family_tree"):
        out.append(
            '<figure class="box wide"><figcaption>Memory by key family (click a block to drill '
            "down the prefixes; hover for keys, memory, share and TTL coverage)</figcaption>"
            '<div id="crumbs"></div><div id="treemap" role="img" aria-label="treemap"></div></figure>'
        )
    # several dumps: one bar per shard
    dumps = o.get("dumps") or []
    if len(dumps) > 1:
        out.append(
            _chart_box(
                "Memory per dump (shard)",
                _hbars(
                    "Memory per dump",
                    [
                        (
                            f"#{d['dump_id']} {os.path.basename(str(d['path']))}",
                            d.get("memory_bytes") or 0,
                            f"{fmt_bytes(d.get('memory_bytes'))}, {fmt_int(d.get('keys'))} keys",
                        )
                        for d in dumps
                    ],
                ),
            )
        )
    # memory by type and encoding
    types = o.get("types") or []
    out.append(
        _chart_box(
            "Memory by type and encoding",
            _hbars(
                "Memory by type and encoding",
                [
                    (
                        f"{t['type']} / {t['encoding']}",
                        t.get("memory_bytes") or 0,
                        f"{fmt_bytes(t.get('memory_bytes'))} ({fmt_pct(t.get('memory_share'))}), "
                        f"{fmt_int(t.get('keys'))} keys",
                    )
                    for t in types
                ],
            ),
        )
    )
    big = report.get("big_keys") or {}
    if big.get("items"):
        out.append(
            _chart_box(
                "Big keys by memory",
                _hbars(
                    "Big keys by memory",
                    [
                        (
                            str(i["key"]),
                            i.get("memory_bytes") or 0,
                            f"{fmt_bytes(i.get('memory_bytes'))} {i['severity']}",
                        )
                        for i in big["items"]
                    ],
                ),
            )
        )
    ttl = report.get("ttl") or {}
    if ttl.get("distribution"):
        out.append(
            _chart_box(
                "Remaining TTL at snapshot (keys)",
                _columns(
                    "TTL distribution",
                    [
                        (
                            d["bucket"],
                            d.get("keys") or 0,
                            f"{fmt_int(d.get('keys'))} keys, {fmt_bytes(d.get('memory_bytes'))}",
                        )
                        for d in ttl["distribution"]
                    ],
                ),
            )
        )
    timeline = charts.get("expiry_timeline") or []
    if timeline:
        width_ms = timeline[0]["bucket_ms"]
        n = TIMELINE_BUCKETS
        by = {r["bucket"]: r for r in timeline}
        rows = []
        for b in range(n + 1):
            r = by.get(b)
            if b == n and not r:
                break
            label = "later" if b == n else "+" + render.fmt_duration_ms(b * width_ms)
            rows.append(
                (
                    label,
                    r["keys"] if r else 0,
                    f"{fmt_int(r['keys'] if r else 0)} keys, {fmt_bytes(r['memory_bytes'] if r else 0)}",
                )
            )
        herd = (ttl.get("herd") or {}).get("seconds", []) + (ttl.get("herd") or {}).get(
            "minutes", []
        )
        snap = ttl.get("snapshot_ms")
        marks = []
        if snap is not None:
            for h in herd:
                pos = (h["moment_ms"] - snap) / (width_ms * n)
                if 0 <= pos <= 1:
                    marks.append(
                        (
                            pos,
                            f"herd: {h['keys']} keys in one {h['granularity']} at "
                            f"{fmt_time(h['moment_ms'])}",
                        )
                    )
        out.append(
            _chart_box(
                "Expiry timeline after the snapshot (keys per bucket; red: bunched expiries)",
                _columns("Expiry timeline", rows, label_every=max(1, n // 8), marks=marks),
            )
        )
    if charts.get("idle"):
        out.append(
            _chart_box(
                "Idle time (LRU), keys",
                _columns(
                    "Idle time",
                    [
                        (
                            (
                                "< 1 s"
                                if r["bucket"] == 0
                                else f"≥ {render.fmt_seconds(2 ** (r['bucket'] - 1))}"
                            ),
                            r["keys"],
                            f"{fmt_int(r['keys'])} keys, {fmt_bytes(r['memory_bytes'])}",
                        )
                        for r in charts["idle"]
                    ],
                ),
            )
        )
    if charts.get("lfu"):
        out.append(
            _chart_box(
                "LFU counter, keys",
                _columns(
                    "LFU counter",
                    [
                        (
                            str(r["bucket"]),
                            r["keys"],
                            f"{fmt_int(r['keys'])} keys, {fmt_bytes(r['memory_bytes'])}",
                        )
                        for r in charts["lfu"]
                    ],
                    label_every=max(1, len(charts["lfu"]) // 10),
                ),
            )
        )
    if charts.get("slots"):
        out.append(
            '<figure class="box"><figcaption>Cluster slots: keys per slot (128 x 128, slot 0 top left; '
            'hover for the slot)</figcaption><canvas id="slotmap" width="384" height="384"></canvas>'
            '<div class="legend" id="slotlegend"></div></figure>'
        )
    return (
        '<section id="charts"><h2>Charts</h2><div class="grid">' + "".join(out) + "</div></section>"
    )


# --- tables and findings -----------------------------------------------------------------------


def _block_html(b: render.Block) -> str:
    if b.kind == "section":
        return f"<h2>{_e(b.text)}</h2>"
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
                f'<td class="{"num" if i in t.numeric else ""}">{_e(c)}</td>'
                for i, c in enumerate(row)
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
            f'<li class="finding {sev}"><span class="sev">{_e(render.SEVERITY_MARK[sev])}</span> '
            f'{_e(message)} <span class="todo">→ {_e(advice)}</span></li>'
        )
    return ""


def _body_html(report: dict) -> str:
    parts, in_list = [], False
    for b in render.document(report):
        if b.kind == "finding" and not in_list:
            parts.append('<ul class="findings">')
            in_list = True
        elif b.kind != "finding" and in_list:
            parts.append("</ul>")
            in_list = False
        if b.kind == "section" and not parts:
            parts.append('<section id="verdict">')
        elif b.kind == "section" and b.text == "Overview":
            parts.append("</section>" + _charts_html(report) + '<section id="sections">')
        parts.append(_block_html(b))
    if in_list:
        parts.append("</ul>")
    parts.append("</section>")
    return "".join(parts)


def _header_html(report: dict) -> str:
    o = report.get("overview") or {}
    rows = []
    for d in o.get("dumps") or []:
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
    return (
        f'<header><h1>rdbscan report</h1><p class="sub">generated {_e(report.get("generated_at"))} · '
        f"{fmt_int(o.get('keys'))} keys · {fmt_bytes(o.get('memory_bytes'))} estimated</p>{table}</header>"
    )


def render_html(report: dict) -> str:
    """The whole report as one HTML document (no external reference)."""
    style = (_ASSETS / "report.css").read_text(encoding="utf-8")
    script = (_ASSETS / "report.js").read_text(encoding="utf-8")
    title = "rdbscan report"
    dumps = (report.get("overview") or {}).get("dumps") or []
    if len(dumps) == 1:
        title += " · " + os.path.basename(str(dumps[0].get("path")))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta name="generator" content="{GENERATOR}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{style}</style></head><body>"
        + _header_html(report)
        + "<main>"
        + _body_html(report)
        + "</main>"
        + f'<script type="application/json" id="rdbscan-report">{_json_for_script(report)}</script>'
        + f"<script>{script}</script></body></html>\n"
    )


def write_html(path: str, text: str) -> None:
    """Write the report; never overwrite a file that is not an rdbscan HTML report."""
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
    tmp = p.with_name(p.name + ".rdbscan-tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    except OSError:  # a full disk: no half-written file left beside it
        tmp.unlink(missing_ok=True)
        raise
