"""The overview's findings: the dump itself (read to the end? its checksum?)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_keys
from ...section import finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import OverviewData


def findings(o: OverviewData, report: ReportData) -> list[Finding]:
    out: list[Finding] = []
    total_keys = o["keys"] or 0
    # (`stopped_by`, `complete`, `checksum`: absent when --section leaves the overview out, its
    # `always` fields only)
    if o.get("stopped_by") == "rdbscan":  # a limit of rdbscan, not damage to the file
        out.append(
            finding(
                "rdbscan-older-than-dump",
                "warning",
                "overview",
                f"rdbscan is older than this dump: it read the {fmt_keys(total_keys)} before "
                f"the first record it does not know; the figures cover those keys. The file is "
                f"not damaged.",
                "upgrade rdbscan (pip install -U rdbscan) and run the report again",
                keys=total_keys,
            )
        )
    elif o.get("complete") is False:
        out.append(
            finding(
                "dump-incomplete",
                "critical",
                "overview",
                f"The dump could not be read to the end: the figures cover the "
                f"{fmt_keys(total_keys)} read before the damage.",
                "take a new snapshot; do not restore this file",
                keys=total_keys,
            )
        )
    if "mismatch" in str(o.get("checksum") or ""):
        out.append(
            finding(
                "checksum-mismatch",
                "critical",
                "overview",
                "The CRC64 checksum does not match: the file is damaged.",
                "do not restore it; take a new snapshot",
            )
        )
    return out
