"""What the HTML report's charts draw (docs/html-report.md): small aggregates, never per-key rows."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...engine.relations import Runner
    from ..build import ReportOptions


def build(run: Runner, options: ReportOptions) -> dict:
    idle = run.rows("chart_idle")
    return {
        "family_tree": run.rows("chart_family_tree"),
        "slots": run.rows("chart_slots"),
        "expiry_timeline": run.rows("chart_expiry_timeline"),
        "idle": [r for r in idle if r["measure"] == "idle"],
        "lfu": [r for r in idle if r["measure"] == "lfu"],
    }
