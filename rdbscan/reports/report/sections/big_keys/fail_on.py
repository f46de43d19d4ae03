"""The big-keys rules of `--fail-on`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...section import FailRule

if TYPE_CHECKING:
    from ...data import ReportData

FAIL_RULES = {
    "big-keys": FailRule(0, "keys over any big-key threshold"),
    "big-keys-critical": FailRule(0, "keys over a critical big-key threshold"),
}


def fail_value(run, report: ReportData, rule: str) -> tuple:
    if rule in ("big-keys", "big-keys-critical"):
        rows = run.rows("big_keys", top=1)
        return (
            (rows[0]["total_keys" if rule == "big-keys" else "total_critical"] if rows else 0),
            None,
            None,
        )
    raise ValueError(f"--fail-on: unknown rule {rule!r}")
