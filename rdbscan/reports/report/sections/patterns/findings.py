"""The key-families finding: one family holding most of the memory."""

from __future__ import annotations

from ....format import fmt_bytes, fmt_int, fmt_key
from ...section import finding


def findings(p: dict, report: dict) -> list[dict]:
    if not p.get("items"):
        return []
    out: list[dict] = []
    top = p["items"][0]
    if top["pattern"] != "(other)" and (top.get("memory_share") or 0) >= 0.5:
        out.append(
            finding(
                "dominant-family",
                "info",
                "patterns",
                f"One family, {fmt_key(top['pattern'], 50)}, holds {top['memory_share']:.0%} of the memory "
                f"({fmt_bytes(top['memory_bytes'])}, {fmt_int(top['keys'])} keys)",
                "start any clean-up or resizing there; see Key families",
                memory=top["memory_bytes"],
                keys=top["keys"],
            )
        )
    return out
