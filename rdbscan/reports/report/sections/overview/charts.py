"""The overview's charts: memory by key family (the treemap), per dump, by type and encoding."""

from __future__ import annotations

import os

from ....format import fmt_bytes, fmt_int, fmt_pct
from ....html.svg import chart_box
from ....html.svg import hbars as _hbars


def chart_data(run, options) -> dict:
    """The data of the two charts the page's script draws (assets/report.js): the treemap of
    key families and the slot heat map, which the slots section places."""
    return {
        "family_tree": run.rows("chart_family_tree"),
        "slots": run.rows("chart_slots"),
    }


def charts(report: dict) -> list[str]:
    o = report.get("overview") or {}
    data = report.get("charts") or {}
    out: list[str] = []
    # memory by key family: the treemap (drawn by the script from the embedded data)
    if data.get("family_tree"):
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
    return out
