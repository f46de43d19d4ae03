"""The compact-encodings rule of `--fail-on`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...section import FailRule

if TYPE_CHECKING:
    from ...data import ReportData

FAIL_RULES = {"encodings": FailRule(0, "non-compact keys that fit the compact thresholds")}


def fail_value(run, report: ReportData, rule: str) -> tuple:
    if rule == "encodings":
        return sum(r["keys"] for r in run.rows("encoding_candidates_summary")), None, None
    raise ValueError(f"--fail-on: unknown rule {rule!r}")
