"""The cluster-slots findings: slot counts that disagree with the dump, a hot slot."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_int, fmt_keys
from ...section import examples, finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import SlotsData


def findings(s: SlotsData, report: ReportData) -> list[Finding]:
    out: list[Finding] = []
    if s["announced_mismatches"]:
        out.append(
            finding(
                "slot-count-mismatch",
                "critical",
                "slots",
                f"{fmt_int(s['announced_mismatches'])} slots hold a different number of keys "
                "than the dump announced",
                "the dump may be damaged or truncated; take a new snapshot",
            )
        )
    if (
        s.get("hottest")  # absent in a dump's object (by_dump: its slot announcements only)
        and s["hottest"][0].get("hashtags")
        and s["hottest"][0]["keys"] >= 10
        and (s["hottest"][0].get("key_share") or 0) >= 0.05
    ):
        h = s["hottest"][0]
        out.append(
            finding(
                "hot-slot",
                "info",
                "slots",
                f"Slot {h['slot']} holds {fmt_keys(h['keys'])} ({h['key_share']:.0%}) because of "
                f"hashtag {examples(h['hashtags'], 1)}",
                "keep hashtags for multi-key operations; see Cluster slots",
                memory=h.get("memory_bytes"),
                keys=h["keys"],
            )
        )
    return out
