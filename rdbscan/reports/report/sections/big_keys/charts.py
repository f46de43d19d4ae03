"""The big-keys chart: big keys by memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes
from ....html.svg import chart_box
from ....html.svg import hbars as _hbars

if TYPE_CHECKING:
    from ...data import ReportData


def charts(report: ReportData) -> list[str]:
    out: list[str] = []
    big = report.get("big_keys")  # --section may leave it out
    several = len(report.get("dumps") or []) > 1  # then each bar names its dump, as tables do
    if big and big["items"]:
        out.append(
            chart_box(
                "Big keys by memory",
                _hbars(
                    "Big keys by memory",
                    [
                        (
                            f"{i['key']} #{i['dump_id']}" if several else str(i["key"]),
                            i.get("memory_bytes") or 0,
                            f"{fmt_bytes(i.get('memory_bytes'))} {i['severity']}",
                        )
                        for i in big["items"]
                    ],
                ),
            )
        )
    return out
