"""The key-families finding: one family holding most of the memory."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_key, fmt_keys
from ...section import finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import PatternsData


def findings(p: PatternsData, report: ReportData) -> list[Finding]:
    if not p["items"]:
        return []
    out: list[Finding] = []
    top = p["items"][0]
    if top["pattern"] != "(other)" and (top.get("memory_share") or 0) >= 0.5:
        out.append(
            finding(
                "dominant-family",
                "info",
                "patterns",
                f"One family, {fmt_key(top['pattern'], 50)}, holds {top['memory_share']:.0%} of the memory "
                f"({fmt_bytes(top['memory_bytes'])}, {fmt_keys(top['keys'])})",
                "start any clean-up or resizing there; see Key families",
                memory=top["memory_bytes"],
                keys=top["keys"],
            )
        )
    return out
