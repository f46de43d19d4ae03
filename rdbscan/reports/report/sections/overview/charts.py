"""The overview's charts: memory by key family (the treemap), per dump, by type and encoding."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int, fmt_pct
from ....html.svg import chart_box
from ....html.svg import hbars as _hbars

if TYPE_CHECKING:
    from ...data import ReportData


def chart_data(run, options) -> dict:
    """The data of the two charts the page's script draws (assets/report.js): the treemap of
    key families and the slot heat map, which the slots section places."""
    return {
        "family_tree": run.rows("chart_family_tree"),
        "slots": run.rows("chart_slots"),
    }


def charts(report: ReportData) -> list[str]:
    o = report["overview"]
    data = report.get("charts")  # the HTML report's
    out: list[str] = []
    # memory by key family: the treemap (drawn by the script from the embedded data)
    if data and data["family_tree"]:
        out.append(
            '<figure class="box wide"><figcaption>Memory by key family (click a block to drill '
            "down the prefixes; hover for keys, memory, share and TTL coverage)</figcaption>"
            '<div id="crumbs"></div><div id="treemap" role="img" aria-label="treemap"></div></figure>'
        )
    # several dumps: one bar per shard
    dumps = o["dumps"]
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
    types = o["types"]
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
