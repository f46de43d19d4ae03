"""The naming rules of `--fail-on`: `naming` (any rule), `naming:<rule-id>` (one rule)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...section import FailRule

if TYPE_CHECKING:
    from ...data import ReportData

FAIL_RULES = {"naming": FailRule(0, "keys breaking any enabled naming rule", detail="<rule-id>")}


def fail_value(run, report: ReportData, rule: str) -> tuple:
    if rule.startswith("naming:"):
        rid = rule.split(":", 1)[1]
        by_rule = {r["rule"]: r for r in run.rows("naming_rules", examples=0)}
        if rid not in by_rule:
            raise ValueError(f"--fail-on: unknown or disabled naming rule {rid!r}")
        return (
            by_rule[rid]["keys"],
            None,
            f"keys breaking naming rule {rid}: {by_rule[rid]['description']}",
        )
    if rule == "naming":
        return run.one("naming_summary")["keys"], None, None
    raise ValueError(f"--fail-on: unknown rule {rule!r}")
