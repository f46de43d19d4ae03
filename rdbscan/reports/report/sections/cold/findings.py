"""The cold-keys finding."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int
from ...section import finding, share, total_memory

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import ColdData


def findings(c: ColdData, report: ReportData) -> list[Finding]:
    if not c["available"]:
        return []
    out: list[Finding] = []
    if c["policy"] == "lru" and c.get("cold_idle_keys"):
        keys, mem = c["cold_idle_keys"], c.get("cold_idle_memory")
        what = f"idle for more than {c.get('idle_days'):g} days"
    elif c["policy"] == "lfu" and c.get("cold_freq_keys"):
        keys, mem = c["cold_freq_keys"], c.get("cold_freq_memory")
        what = f"with an LFU counter <= {c.get('max_freq')}"
    else:
        keys = 0
    if keys:
        out.append(
            finding(
                "cold-keys",
                "info",
                "cold",
                f"{fmt_int(keys)} keys {what} hold {fmt_bytes(mem)}{share(mem, total_memory(report))}"
                f"; {fmt_int(c.get('cold_without_ttl'))} of them without TTL",
                "review them for deletion or give them an expiry; see Cold keys",
                memory=mem,
                keys=keys,
            )
        )
    return out
