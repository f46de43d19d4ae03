"""The TTL findings: cache/session-like families without TTL, expiry herds, keys expired at snapshot time, most memory without TTL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int, fmt_key, fmt_keys, fmt_time
from ...section import finding
from .words import expected_words

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import TtlData


def chance_words(h: dict) -> str:
    """How likely such a bunch is by chance alone (its p-value), in words."""
    log10 = h.get("log10_p_value")
    if log10 is None:
        return "-"
    if log10 < -6:
        return "practically none"
    return f"1 in {10**-log10:,.0f}"


def findings(t: TtlData, report: ReportData) -> list[Finding]:
    out: list[Finding] = []
    # (`families`: absent in a dump's object, by_dump)
    for f in [f for f in t.get("families") or [] if f.get("looks_ephemeral")][:2]:
        out.append(
            finding(
                "no-ttl-ephemeral",
                "warning",
                "ttl",
                f"{fmt_key(f['pattern'], 50)}: {fmt_bytes(f['memory_without_ttl'])}, "
                f"{fmt_int(f['keys_without_ttl'])} cache/session-like keys without TTL",
                "set an expiry (SET ... EX, EXPIRE); see TTL",
                memory=f["memory_without_ttl"],
                keys=f["keys_without_ttl"],
            )
        )
    herd = t["herd"]["seconds"] + t["herd"]["minutes"]
    if herd:
        worst = min(herd, key=lambda h: h["log10_p_value"])  # the least plausible
        out.append(
            finding(
                "ttl-herd",
                "warning",
                "ttl",
                f"{fmt_int(worst['keys'])} keys of {fmt_key(worst['pattern'], 50)} expire in the "
                f"same {worst['granularity']} ({fmt_time(worst.get('moment_ms'))}) "
                f"{expected_words(worst['expected_keys'])}; "
                f"{len(herd)} bunched moment{'s' if len(herd) != 1 else ''} in all",
                "add random jitter to TTLs; see TTL",
                memory=worst.get("memory_bytes"),
                keys=worst["keys"],
            )
        )
    if t["expired_at_snapshot"]:
        out.append(
            finding(
                "expired-at-snapshot",
                "info",
                "ttl",
                f"{fmt_int(t['expired_at_snapshot'])} keys were already expired at snapshot "
                f"time ({fmt_bytes(t['memory_expired_at_snapshot'])})",
                "active expiry is falling behind: raise hz or look for a blocked event loop",
                memory=t["memory_expired_at_snapshot"],
                keys=t["expired_at_snapshot"],
            )
        )
    share = t["memory_share_without_ttl"] or 0
    if share >= 0.5 and t["memory_without_ttl"]:
        out.append(
            finding(
                "no-ttl-share",
                "info",
                "ttl",
                f"{share:.0%} of the memory ({fmt_bytes(t['memory_without_ttl'])}) is in keys "
                f"without TTL ({fmt_keys(t['keys_without_ttl'])})",
                "check that these keys are meant to live forever; see TTL",
                memory=t["memory_without_ttl"],
                keys=t["keys_without_ttl"],
            )
        )
    return out
