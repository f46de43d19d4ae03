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
from .document import SEVERITY_MARK, Block
from .format import fmt_bytes, fmt_duration_ms, fmt_int, fmt_key, fmt_pct, fmt_seconds, fmt_time

GENERATOR = "rdbscan"
TIMELINE_BUCKETS = 120  # chart_expiry_timeline's default `buckets`
_ASSETS = Path(__file__).resolve().parent / "html_assets"


class HtmlOutputError(Exception):
    """The HTML file cannot be written where the user asked (it would overwrite another file)."""


def esc(text) -> str:
    """Text from a dump, escaped for HTML (control bytes shown as \\xNN as in the text report)."""
    return html.escape(fmt_key(text, 10_000) if text is not None else "-", quote=True)


_e = esc


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


OLD_COLOR, NEW_COLOR = "#bab0ac", "#4e79a7"
GROW_COLOR, SHRINK_COLOR = "#e15759", "#59a14f"


def _svg_open(title: str, width: int, height: int) -> str:
    return (
        f'<svg class="chart" role="img" aria-label="{_e(title)}" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
    )


def legend(items: list[tuple[str, str]]) -> str:
    """A legend under a chart: (name, colour) swatches."""
    return (
        '<div class="keys">'
        + "".join(
            f'<span><i class="swatch" style="background:{color}"></i>{_e(name)}</span>'
            for name, color in items
        )
        + "</div>"
    )


def pair_bars(
    title: str,
    rows: list[tuple[str, float, float, str]],
    names: tuple[str, str] = ("old", "new"),
    width: int = 580,
) -> str:
    """Two horizontal bars per label, old (grey) over new (blue): (label, old, new, value text)."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 9, 7, 190, 190
    height = len(rows) * (2 * bar_h + gap) + 8
    top = max(max(o, n) for _, o, n, _ in rows) or 1
    span = width - label_w - value_w - 10
    parts = [_svg_open(title, width, height)]
    for i, (label, old, new, text) in enumerate(rows):
        y = 4 + i * (2 * bar_h + gap)
        wo = max(1.0, span * old / top) if old else 0
        wn = max(1.0, span * new / top) if new else 0
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
            f'<rect class="old" x="{label_w}" y="{y}" width="{wo:.1f}" height="{bar_h}" '
            f'fill="{OLD_COLOR}"><title>{_e(label)}, {_e(names[0])}</title></rect>'
            f'<rect class="new" x="{label_w}" y="{y + bar_h}" width="{wn:.1f}" height="{bar_h}" '
            f'fill="{NEW_COLOR}"><title>{_e(label)}, {_e(names[1])}</title></rect>'
            f'<text x="{label_w + max(wo, wn) + 4:.1f}" y="{y + 13}">{_e(text)}</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts) + legend([(names[0], OLD_COLOR), (names[1], NEW_COLOR)])


def signed_bars(title: str, rows: list[tuple[str, float, str]], width: int = 580) -> str:
    """Horizontal bars from a zero line: growth to the right (red), shrinking to the left
    (green); (label, signed value, value text), the text in a column on the right."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 18, 4, 190, 150
    height = len(rows) * (bar_h + gap) + 8
    neg = max([-v for _, v, _ in rows if v < 0], default=0)
    pos = max([v for _, v, _ in rows if v > 0], default=0)
    span = width - label_w - value_w - 10
    scale = span / ((neg + pos) or 1)
    zero = label_w + neg * scale
    parts = [_svg_open(title, width, height)]
    for i, (label, value, text) in enumerate(rows):
        y = 4 + i * (bar_h + gap)
        w = max(1.0, abs(value) * scale) if value else 0
        x = zero if value >= 0 else zero - w
        color = GROW_COLOR if value > 0 else SHRINK_COLOR
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"/>'
            f'<text x="{width - value_w + 4}" y="{y + 13}">{_e(text)}</text></g>'
        )
    parts.append(
        f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="2" y2="{height - 2}" stroke="#59636e"/></svg>'
    )
    return "".join(parts)


def stacked_bars(
    title: str,
    rows: list[tuple[str, list[float], str]],
    names: list[tuple[str, str]],
    width: int = 580,
) -> str:
    """Horizontal bars of several parts, (label, [part values], value text); names: (part name,
    colour) for each part, drawn as the legend."""
    if not rows:
        return ""
    bar_h, gap, label_w, value_w = 18, 4, 190, 190
    height = len(rows) * (bar_h + gap) + 8
    top = max(sum(v) for _, v, _ in rows) or 1
    span = width - label_w - value_w - 10
    parts = [_svg_open(title, width, height)]
    for i, (label, values, text) in enumerate(rows):
        y = 4 + i * (bar_h + gap)
        x = float(label_w)
        parts.append(
            f"<g><title>{_e(label)}: {_e(text)}</title>"
            f'<text x="{label_w - 6}" y="{y + 13}" text-anchor="end">{_e(_short(label, 34))}</text>'
        )
        for value, (name, color) in zip(values, names):
            if not value:
                continue
            w = max(1.0, span * value / top)
            parts.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}">'
                f"<title>{_e(label)}: {fmt_int(value)} {_e(name)}</title></rect>"
            )
            x += w
        parts.append(f'<text x="{x + 4:.1f}" y="{y + 13}">{_e(text)}</text></g>')
    parts.append("</svg>")
    return "".join(parts) + legend(names)


def line_chart(
    title: str,
    ticks: list[tuple[float, str]],
    series: list[tuple[str, list[float | None]]],
    fmt=fmt_bytes,
    width: int = 580,
    height: int = 240,
) -> str:
    """Lines over the x positions of `ticks` ((x, label), e.g. snapshot times); each series is
    (name, one value per tick, None where it has none); a point's tooltip names its value."""
    if not ticks or not series:
        return ""
    pad_l, pad_r, pad_t, pad_b = 70, 12, 10, 36
    xs = [x for x, _ in ticks]
    lo, hi = min(xs), max(xs)
    top = max((v for _, vals in series for v in vals if v is not None), default=0) or 1
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def px(x: float) -> float:
        return pad_l + (plot_w / 2 if hi == lo else (x - lo) / (hi - lo) * plot_w)

    def py(v: float) -> float:
        return pad_t + plot_h - v / top * plot_h

    parts = [_svg_open(title, width, height)]
    for k in range(5):  # y grid: 0, 1/4 ... of the largest value
        v = top * k / 4
        parts.append(
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{py(v):.1f}" y2="{py(v):.1f}" '
            f'stroke="#e6e9ed"/><text class="tick" x="{pad_l - 4}" y="{py(v) + 3:.1f}" '
            f'text-anchor="end">{_e(fmt(round(v)))}</text>'
        )
    every = max(1, -(-len(ticks) // 6))
    for i, (x, label) in enumerate(ticks):
        if i % every == 0 or i == len(ticks) - 1:
            anchor = "end" if i == len(ticks) - 1 and i else "middle"
            parts.append(
                f'<text class="tick" x="{px(x):.1f}" y="{height - pad_b + 14}" '
                f'text-anchor="{anchor}">{_e(_short(label, 18))}</text>'
            )
    for n, (name, values) in enumerate(series):
        color = _PALETTE[n % len(_PALETTE)]
        runs: list[list[str]] = [[]]
        dots = []
        for (x, label), val in zip(ticks, values):
            if val is None:
                runs.append([])
                continue
            runs[-1].append(f"{px(x):.1f},{py(val):.1f}")
            dots.append(
                f'<circle cx="{px(x):.1f}" cy="{py(val):.1f}" r="3" fill="{color}">'
                f"<title>{_e(name)} at {_e(label)}: {_e(fmt(val))}</title></circle>"
            )
        parts.append(f'<g class="series"><title>{_e(name)}</title>')
        parts += [
            f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{" ".join(r)}"/>'
            for r in runs
            if len(r) > 1
        ]
        parts += dots
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts) + legend(
        [(name, _PALETTE[n % len(_PALETTE)]) for n, (name, _) in enumerate(series)]
    )


def _short(text: str, n: int) -> str:
    text = fmt_key(text, 10_000)
    return text if len(text) <= n else text[: n - 1] + "…"


def chart_box(title: str, body: str, note: str = "") -> str:
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
            chart_box(
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
        chart_box(
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
            chart_box(
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
            chart_box(
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
            label = "later" if b == n else "+" + fmt_duration_ms(b * width_ms)
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
            chart_box(
                "Expiry timeline after the snapshot (keys per bucket; red: bunched expiries)",
                _columns("Expiry timeline", rows, label_every=max(1, n // 8), marks=marks),
            )
        )
    if charts.get("idle"):
        out.append(
            chart_box(
                "Idle time (LRU), keys",
                _columns(
                    "Idle time",
                    [
                        (
                            (
                                "< 1 s"
                                if r["bucket"] == 0
                                else f"≥ {fmt_seconds(2 ** (r['bucket'] - 1))}"
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
            chart_box(
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


def _block_html(b: Block) -> str:
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
            f'<li class="finding {sev}"><span class="sev">{_e(SEVERITY_MARK[sev])}</span> '
            f'{_e(message)} <span class="todo">→ {_e(advice)}</span></li>'
        )
    return ""


def blocks_html(blocks: list[Block]) -> str:
    """Blocks (render.document, diff_render.diff_document, ...) as HTML; consecutive findings
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


def sectioned_html(blocks: list[Block], first_section: str, charts: str) -> str:
    """The verdict (the blocks before the section titled `first_section`), then the charts, then
    the sections; without that section, every block is the verdict and no chart is shown."""
    at = next(
        (i for i, b in enumerate(blocks) if i and b.kind == "section" and b.text == first_section),
        None,
    )
    if at is None:
        return '<section id="verdict">' + blocks_html(blocks) + "</section>"
    return (
        '<section id="verdict">'
        + blocks_html(blocks[:at])
        + "</section>"
        + charts
        + '<section id="sections">'
        + blocks_html(blocks[at:])
        + "</section>"
    )


def _body_html(report: dict) -> str:
    return sectioned_html(render.document(report), "Overview", _charts_html(report))


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
        + f'<script type="application/json" id="{data_id}">{_json_for_script(data)}</script>'
        + f"<script>{script}</script></body></html>\n"
    )


def render_html(report: dict) -> str:
    """The whole report as one HTML document (no external reference)."""
    title = "rdbscan report"
    dumps = (report.get("overview") or {}).get("dumps") or []
    if len(dumps) == 1:
        title += " · " + os.path.basename(str(dumps[0].get("path")))
    return page(title, _header_html(report), _body_html(report), report)


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
