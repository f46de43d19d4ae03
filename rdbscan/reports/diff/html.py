"""`rdbscan diff` and `rdbscan trend` as one self-contained HTML page each.

Drawn with the report's HTML machinery (rdbscan.reports.html: the page, the blocks as HTML, the SVG
charts): the verdict first (render.diff_verdict / trend_render.trend_verdict), then the charts,
then the tables of the text output (layout.diff_sections / trend_render.trend_sections), and the
diff or trend dict embedded as JSON.  No script draws a chart: they are SVG written here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from ..format import fmt_bytes, fmt_duration_ms, fmt_int, fmt_time
from ..html import page as P
from ..html import svg as S
from .blocks import fmt_growth, fmt_per_day_bytes, fmt_signed_bytes, fmt_signed_int
from .layout import diff_sections
from .render import diff_verdict
from .trend_render import trend_sections, trend_verdict

if TYPE_CHECKING:
    from .data import DiffData, FamilyChange, SideData
    from .trend_data import TrendData, TrendFamily, TrendSnapshot

ADDED, REMOVED, CHANGED = "#59a14f", "#e15759", "#f28e2b"
TREND_LINES = 10  # families drawn as lines per instance (the JSON's first ones: fastest growth)


def _body(verdict, charts: list[str], sections) -> str:
    charts_html = (
        '<section id="charts"><h2>Charts</h2><div class="grid">'
        + "".join(charts)
        + "</div></section>"
    )
    return (
        '<section id="verdict">'
        + P.blocks_html(verdict)
        + "</section>"
        + charts_html
        + '<section id="sections">'
        + P.blocks_html(sections)
        + "</section>"
    )


def _where(s: SideData) -> str:
    paths = s["paths"]
    if paths:
        return ", ".join(paths) if len(paths) <= 3 else f"{paths[0]} ... ({len(paths)} dumps)"
    return str(s["database"] or "?")


# --- diff ------------------------------------------------------------------------------------


def _diff_header(d: DiffData) -> str:
    t = d["totals"]["all"]
    rows = []
    for what, s, keys, memory, used_mem in (
        ("old", d["old"], t["old_keys"], t["old_memory_bytes"], t["old_used_mem"]),
        ("new", d["new"], t["new_keys"], t["new_memory_bytes"], t["new_used_mem"]),
    ):
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{P.esc(v)}</td>"
                for v in (
                    what,
                    _where(s),
                    s["instance"] or "-",
                    f"{s['server'] or '?'} {s['server_version'] or ''}",
                    f"{fmt_time(s['snapshot_ms'])} ({s['snapshot_source']})",
                    fmt_int(keys),
                    fmt_bytes(memory),
                    fmt_bytes(used_mem) if used_mem else "-",
                )
            )
            + "</tr>"
        )
    interval = d["interval_seconds"]
    when = (
        f"interval {fmt_duration_ms(interval * 1000)}"
        if interval is not None
        else "interval unknown"
    )
    return (
        f'<header><h1>rdbscan diff</h1><p class="sub">generated {P.esc(d["generated_at"])} · '
        f"{P.esc(when)} · keys {fmt_int(t['old_keys'])} → {fmt_int(t['new_keys'])} · memory "
        f"{P.esc(fmt_bytes(t['old_memory_bytes']))} → {P.esc(fmt_bytes(t['new_memory_bytes']))} "
        f"({P.esc(fmt_growth(t['memory_growth']))}, estimate)</p>"
        '<table class="dumps"><thead><tr><th>snapshot</th><th>dumps</th><th>instance</th>'
        "<th>server</th><th>taken</th><th>keys</th><th>memory (estimate)</th><th>used-mem</th>"
        "</tr></thead><tbody>" + "".join(rows) + "</tbody></table></header>"
    )


def _diff_charts(d: DiffData) -> list[str]:
    out = _family_charts(d["families"]["items"]) + [
        S.chart_box(
            "Keys added, removed and changed per family",
            S.stacked_bars(
                "Keys added, removed and changed",
                [
                    (
                        r["pattern"],
                        [r["added"], r["removed"], r["changed"]],
                        f"+{fmt_int(r['added'])} −{fmt_int(r['removed'])} ~{fmt_int(r['changed'])}",
                    )
                    for r in d["keys"]["by_family"]
                ],
                [("added", ADDED), ("removed", REMOVED), ("changed", CHANGED)],
            ),
        ),
        S.chart_box(
            "Memory by type, old and new",
            S.pair_bars(
                "Memory by type",
                [
                    (
                        r["name"],
                        r["old_memory_bytes"],
                        r["new_memory_bytes"],
                        f"{fmt_bytes(r['old_memory_bytes'])} → {fmt_bytes(r['new_memory_bytes'])}",
                    )
                    for r in d["totals"]["by_type"]
                ],
            ),
        ),
    ]
    dist = d["ttl"]["distribution"]
    if any(r["old_keys"] or r["new_keys"] for r in dist):
        out.append(
            S.chart_box(
                "Remaining TTL at each snapshot (keys)",
                S.pair_bars(
                    "Remaining TTL",
                    [
                        (
                            r["bucket"],
                            r["old_keys"],
                            r["new_keys"],
                            f"{fmt_int(r['old_keys'])} → {fmt_int(r['new_keys'])} "
                            f"({fmt_signed_int(r['delta_keys'])})",
                        )
                        for r in dist
                    ],
                ),
            )
        )
    return out


def _family_charts(fams: list[FamilyChange]) -> list[str]:
    """Memory by family, old and new; its growth."""
    return [
        S.chart_box(
            "Memory by family, old and new (the largest changes)",
            S.pair_bars(
                "Memory by family",
                [
                    (
                        r["pattern"],
                        r["old_memory_bytes"],
                        r["new_memory_bytes"],
                        f"{fmt_bytes(r['old_memory_bytes'])} → {fmt_bytes(r['new_memory_bytes'])}",
                    )
                    for r in fams
                ],
            ),
        ),
        S.chart_box(
            "Growth of memory per family",
            S.signed_bars(
                "Growth per family",
                [
                    (
                        r["pattern"],
                        r["delta_memory_bytes"],
                        f"{fmt_signed_bytes(r['delta_memory_bytes'])} ({fmt_growth(r['memory_growth'])})"
                        if r["status"] not in ("new", "vanished")
                        else f"{fmt_signed_bytes(r['delta_memory_bytes'])} ({r['status']})",
                    )
                    for r in fams
                ],
            ),
        ),
    ]


def render_diff_html(d: DiffData) -> str:
    """The diff (rdbscan.reports.diff.build_diff) as one HTML document (no external reference)."""
    title = f"rdbscan diff · {_where(d['old'])} → {_where(d['new'])}"
    return P.page(
        title,
        _diff_header(d),
        _body(diff_verdict(d), _diff_charts(d), diff_sections(d)),
        dict(d),
        data_id="rdbscan-diff",
        assets=("diff.css",),
    )


# --- trend -----------------------------------------------------------------------------------


def _ticks(snaps: list[TrendSnapshot]) -> list[tuple[float, str]]:
    """x of each snapshot: its time when the times differ and increase, else its rank."""
    times = [s["snapshot_ms"] or 0 for s in snaps]
    by_time = all(s["snapshot_ms"] is not None for s in snaps) and all(
        a < b for a, b in zip(times, times[1:])
    )
    return [
        (
            float(s["snapshot_ms"]) if by_time else float(i),
            f"#{s['snapshot_id']} {fmt_time(s['snapshot_ms'])[5:16]}",
        )
        for i, s in enumerate(snaps)
    ]


def _points(
    fam: TrendFamily, ids: list[int], field: Literal["keys", "memory_bytes"]
) -> list[float | None]:
    by = {p["snapshot_id"]: p[field] for p in fam["points"]}
    return [by.get(i, 0) for i in ids]  # no point: the family had no key at that snapshot


def _trend_charts(t: TrendData) -> list[str]:
    out = []
    for inst in t["instances"]:
        name = inst["instance"] if inst["instance"] is not None else "(no instance)"
        snaps = inst["snapshots"]
        ids = [s["snapshot_id"] for s in snaps]
        ticks = _ticks(snaps)
        fams = inst["families"][:TREND_LINES]
        fams += [f for f in inst["shrinking"][:TREND_LINES] if f not in fams]

        out.append(
            S.chart_box(
                f"{name}: memory and keys per snapshot",
                S.line_chart(
                    f"{name}: memory per snapshot",
                    ticks,
                    [("memory (estimate)", [s["memory_bytes"] for s in snaps])],
                )
                + S.line_chart(
                    f"{name}: keys per snapshot",
                    ticks,
                    [("keys", [s["keys"] for s in snaps])],
                    fmt=fmt_int,
                    height=160,
                ),
                f"growth {fmt_per_day_bytes(inst['memory_per_day'])} (least squares)",
            )
        )
        out.append(
            S.chart_box(
                f"{name}: memory by family per snapshot (the fastest growing and shrinking)",
                S.line_chart(
                    f"{name}: memory by family",
                    ticks,
                    [(f["pattern"], _points(f, ids, "memory_bytes")) for f in fams],
                    height=280,
                ),
            )
        )
        out.append(
            S.chart_box(
                f"{name}: keys by family per snapshot",
                S.line_chart(
                    f"{name}: keys by family",
                    ticks,
                    [(f["pattern"], _points(f, ids, "keys")) for f in fams],
                    fmt=fmt_int,
                    height=280,
                ),
            )
        )
        out.append(
            S.chart_box(
                f"{name}: growth per day by family",
                S.signed_bars(
                    f"{name}: growth per day",
                    [
                        (f["pattern"], f["memory_per_day"], fmt_per_day_bytes(f["memory_per_day"]))
                        for f in fams
                        if f["memory_per_day"] is not None
                    ],
                ),
            )
        )
    return out


def render_trend_html(t: TrendData) -> str:
    """The trend (rdbscan.reports.trend.build_trend) as one HTML document."""
    insts = t["instances"]
    sub = (
        f"generated {P.esc(t['generated_at'])} · {P.esc(t['database'])} · "
        f"{fmt_int(len(insts))} instance(s), "
        f"{fmt_int(sum(len(i['snapshots']) for i in insts))} snapshot(s)"
    )
    header = f'<header><h1>rdbscan trend</h1><p class="sub">{sub}</p></header>'
    return P.page(
        "rdbscan trend",
        header,
        _body(trend_verdict(t), _trend_charts(t), trend_sections(t)),
        dict(t),
        data_id="rdbscan-trend",
        assets=("diff.css",),
    )
