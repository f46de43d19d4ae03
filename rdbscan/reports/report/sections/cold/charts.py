"""The cold-keys charts: idle times (LRU) and LFU counters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int, fmt_seconds
from ....html.svg import chart_box
from ....html.svg import columns as _columns

if TYPE_CHECKING:
    from ...data import ReportData


def chart_data(run, options) -> dict:
    idle = run.rows("chart_idle")
    return {
        "idle": [r for r in idle if r["measure"] == "idle"],
        "lfu": [r for r in idle if r["measure"] == "lfu"],
    }


def charts(report: ReportData) -> list[str]:
    data = report.get("charts")  # the HTML report's
    out: list[str] = []
    if data and data["idle"]:
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
                        for r in data["idle"]
                    ],
                    values=True,
                ),
            )
        )
    if data and data["lfu"]:
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
                        for r in data["lfu"]
                    ],
                    label_every=max(1, len(data["lfu"]) // 10),
                    values=True,
                ),
            )
        )
    return out
