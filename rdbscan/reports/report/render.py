"""The text, markdown and JSON reports.

`document(report)` lays the report out once as a list of blocks (rdbscan/reports/document.py):
the verdict (findings.layout), then each section's blocks (its `layout`, in the order of
`sections.SECTIONS`), then the `--fail-on` checks; the text and markdown renderers only differ in
how they draw blocks.  JSON is the dict itself (docs/json.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ..document import Block, draw_markdown, draw_text, render_json
from . import fail_on, findings
from .sections import SECTIONS

if TYPE_CHECKING:
    from .data import ReportData

__all__ = ["document", "document_parts", "render_json", "render_markdown", "render_text"]


def document_parts(report: ReportData) -> tuple[list[Block], list[tuple[str, list[Block]]]]:
    """The verdict's blocks, and (section name, blocks) of each section shown, the `--fail-on`
    checks last (as `fail_on`)."""
    verdict = findings.layout(report) if "findings" in report else []
    if report.get("note"):  # what the report covers comes before what it found
        verdict = [Block("note", report["note"]), *verdict]
    selected = report["options"]["sections"]
    parts = []
    for section in SECTIONS:
        if section.name not in report:
            continue
        if section.always and section.name not in (selected or [section.name]):
            continue  # built for the other parts only (--section left it out)
        parts.append((section.name, section.layout(report[section.name], report)))  # type: ignore[literal-required]
    if "fail_on" in report:
        parts.append(("fail_on", fail_on.layout(report["fail_on"], report)))
    return verdict, parts


def document(report: ReportData) -> list[Block]:
    verdict, parts = document_parts(report)
    return verdict + [b for _, blocks in parts for b in blocks]


def render_markdown(report: dict) -> str:
    """The report (the JSON object, ReportData) as markdown."""
    return draw_markdown(document(cast("ReportData", report)), "rdbscan report")


def render_text(report: dict, console=None) -> None:
    """Print the report (the JSON object, ReportData) with rich to `console` (default: stdout)."""
    draw_text(document(cast("ReportData", report)), console)
