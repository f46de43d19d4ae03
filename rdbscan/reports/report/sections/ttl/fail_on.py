"""The TTL rules of `--fail-on`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...section import FailRule

if TYPE_CHECKING:
    from ...data import ReportData

FAIL_RULES = {
    "no-ttl": FailRule(0, "keys without TTL in cache/session-like families"),
    "no-ttl-share": FailRule("50%", "share of memory held by keys without TTL", share=True),
    "expired": FailRule(0, "keys already expired at snapshot time"),
}


def fail_value(run, report: ReportData, rule: str) -> tuple:
    if rule == "no-ttl":
        return run.one("ttl_ephemeral_without_ttl")["keys_without_ttl"], None, None
    if rule == "no-ttl-share":
        s = run.one("ttl_summary")
        return s["memory_without_ttl"], s["memory_share_without_ttl"], None
    if rule == "expired":
        return run.one("ttl_summary")["expired_at_snapshot"], None, None
    raise ValueError(f"--fail-on: unknown rule {rule!r}")
