"""The big-keys chart: big keys by memory."""

from __future__ import annotations

from ....format import fmt_bytes
from ....html.svg import chart_box
from ....html.svg import hbars as _hbars


def charts(report: dict) -> list[str]:
    out: list[str] = []
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
    return out
