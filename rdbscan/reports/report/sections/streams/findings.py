"""The streams finding: pending entries nobody acknowledges."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_int, fmt_key
from ...section import finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import StreamsData


def findings(st: StreamsData, report: ReportData) -> list[Finding]:
    out: list[Finding] = []
    pel = [x for x in st["items"] or [] if (x.get("pending") or 0) >= 1000]
    if pel:
        out.append(
            finding(
                "stream-pending",
                "warning",
                "streams",
                f"Stream {fmt_key(pel[0]['key'], 50)} has {fmt_int(pel[0]['pending'])} pending entries",
                "consumers do not XACK: claim (XAUTOCLAIM) or acknowledge them",
                memory=pel[0].get("memory_bytes"),
                keys=len(pel),
            )
        )
    return out
