"""The naming finding."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_int
from ...section import finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import NamingData


def findings(n: NamingData, report: ReportData) -> list[Finding]:
    if not n["keys"]:
        return []
    out: list[Finding] = []
    broken = sorted((r for r in n["rules"] or [] if r.get("keys")), key=lambda r: -r["keys"])
    names = ", ".join(f"{r['rule']} {fmt_int(r['keys'])}" for r in broken[:3])
    out.append(
        finding(
            "naming",
            "info",
            "naming",
            f"{fmt_int(n['keys'])} keys break a naming rule ({names})",
            "rename at write time, or disable rules that do not apply; see Naming",
            memory=n["memory_bytes"],
            keys=n["keys"],
        )
    )
    return out
