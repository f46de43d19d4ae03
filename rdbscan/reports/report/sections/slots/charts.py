"""The cluster-slots chart: the heat map of keys per slot, drawn by the page's script from
the data the overview gathers (`charts.slots`); for cluster dumps only (a dump that announces
its slots): a standalone dump's keys land on slots no server owns, and the map would be noise."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...data import ReportData


def charts(report: ReportData) -> list[str]:
    data = report.get("charts")  # the HTML report's
    out: list[str] = []
    if data and data["slots"] and "slots" in report and report["slots"]["announced_slots"]:
        out.append(
            '<figure class="box"><figcaption>Cluster slots: keys per slot (128 x 128, slot 0 top left; '
            'hover for the slot)</figcaption><canvas id="slotmap" width="384" height="384"></canvas>'
            '<div class="legend" id="slotlegend"></div></figure>'
        )
    return out
