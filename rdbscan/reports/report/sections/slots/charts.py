"""The cluster-slots chart: the heat map of keys per slot, drawn by the page's script from
the data the overview gathers (`charts.slots`); for cluster dumps only (a dump that announces
its slots): a standalone dump's keys land on slots no server owns, and the map would be noise."""

from __future__ import annotations


def charts(report: dict) -> list[str]:
    data = report.get("charts") or {}
    out: list[str] = []
    if data.get("slots") and (report.get("slots") or {}).get("announced_slots"):
        out.append(
            '<figure class="box"><figcaption>Cluster slots: keys per slot (128 x 128, slot 0 top left; '
            'hover for the slot)</figcaption><canvas id="slotmap" width="384" height="384"></canvas>'
            '<div class="legend" id="slotlegend"></div></figure>'
        )
    return out
