"""The HTML report: the verdict, the charts, then the sections' tables (the text report's blocks),
and the report dict (the JSON report, plus `charts`) embedded for the script's treemap and heat
map (docs/html-report.md)."""

from __future__ import annotations

import os

from ..document import Block
from ..format import fmt_bytes, fmt_duration_ms, fmt_int, fmt_pct, fmt_seconds, fmt_time
from ..html.page import blocks_html, page
from ..html.page import esc as _e
from ..html.svg import chart_box
from ..html.svg import columns as _columns
from ..html.svg import hbars as _hbars
from . import render

TIMELINE_BUCKETS = 120  # chart_expiry_timeline's default `buckets`


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


def render_html(report: dict) -> str:
    """The whole report as one HTML document (no external reference)."""
    title = "rdbscan report"
    dumps = (report.get("overview") or {}).get("dumps") or []
    if len(dumps) == 1:
        title += " · " + os.path.basename(str(dumps[0].get("path")))
    return page(title, _header_html(report), _body_html(report), report)
