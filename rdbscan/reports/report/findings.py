"""The verdict first: a short list of findings ranked by impact, built from a report dict.

Every number in a finding is read from a section of the report (which got it from SQL); each
section's `findings` chooses which of its facts are worth a line and words them (its
`findings.py`), and this module ranks them.  The same list is the JSON report's `findings[]` and
the first block of the text, markdown and HTML reports (docs/findings.md).

A finding: `id severity section memory_bytes keys message advice`.  Severity is `critical`
(damage, keys that block the server), `warning` (memory or load at stake that a change fixes) or
`info` (worth knowing).  Ranked by severity, then memory at stake, then keys affected.
"""

from __future__ import annotations

from ..document import Block
from ..format import fmt_bytes, fmt_int
from .sections import SECTIONS

MAX_FINDINGS = 10
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def build(report: dict, limit: int = MAX_FINDINGS) -> list[dict]:
    """The report's findings, most important first (at most `limit`)."""
    out: list[dict] = []
    for section in sorted(SECTIONS, key=lambda s: s.finding_order):
        data = report.get(section.name)
        if data and section.findings is not None:
            out += section.findings(data, report)
    out.sort(
        key=lambda f: (SEVERITY_ORDER[f["severity"]], -(f["memory_bytes"] or 0), -(f["keys"] or 0))
    )
    return out[:limit]


def _nothing_found(report: dict) -> str:
    """The verdict without findings: which checks ran (`--section` may leave most out)."""
    checks = [s.name for s in SECTIONS if s.findings is not None and s.name != "overview"]
    ran = [name for name in checks if report.get(name)]
    if len(ran) == len(checks):
        return "Nothing to report: no check found a problem."
    if not ran:
        return "No check ran beyond the dump itself (--section): run without it for a verdict."
    return (
        f"Nothing to report in the sections computed ({', '.join(ran)}); the other checks did "
        f"not run (--section)."
    )


def layout(report: dict) -> list[Block]:
    """One summary line, then the findings (docs/findings.md): the verdict before the sections."""
    o = report.get("overview") or {}
    dumps = o.get("dumps") or []
    who = f"{o.get('server') or '?'} {o.get('server_version') or ''}".strip()
    head = (
        f"{len(dumps)} dumps, " if len(dumps) > 1 else ""
    ) + f"{who}, {fmt_int(o.get('keys'))} keys, {fmt_bytes(o.get('memory_bytes'))} (estimate)"
    found = report.get("findings") or []
    blocks = [Block("section", f"Findings: {head}")]
    if not found:
        return blocks + [Block("note", _nothing_found(report))]
    return blocks + [
        Block("finding", items=[f["severity"], f["message"], f["advice"]]) for f in found
    ]
