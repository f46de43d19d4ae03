"""The naming finding."""

from __future__ import annotations

from ....format import fmt_int
from ...section import finding


def findings(n: dict, report: dict) -> list[dict]:
    if not n.get("keys"):
        return []
    out: list[dict] = []
    broken = sorted((r for r in n.get("rules") or [] if r.get("keys")), key=lambda r: -r["keys"])
    names = ", ".join(f"{r['rule']} {fmt_int(r['keys'])}" for r in broken[:3])
    out.append(
        finding(
            "naming",
            "info",
            "naming",
            f"{fmt_int(n['keys'])} keys break a naming rule ({names})",
            "rename at write time, or disable rules that do not apply; see Naming",
            memory=n.get("memory_bytes"),
            keys=n["keys"],
        )
    )
    return out
