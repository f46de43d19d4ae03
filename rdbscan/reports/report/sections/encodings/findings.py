"""The compact-encoding findings: non-compact keys small enough to be compact, strings cheaper as hash fields."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int, fmt_key
from ...section import examples, finding

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import EncodingsData


def findings(e: EncodingsData, report: ReportData) -> list[Finding]:
    out: list[Finding] = []
    c = e["candidates_total"]
    if c["keys"]:
        out.append(
            finding(
                "encodings",
                "warning",
                "encodings",
                f"{fmt_int(c['keys'])} key{'s are' if c['keys'] != 1 else ' is'} non-compact although small "
                f"enough; about "
                f"{fmt_bytes(c['savings_bytes'])} to save: "
                f"{examples(x['key'] for x in e['candidates'] or [])}",
                "rewrite them (DUMP + RESTORE REPLACE); see Compact encodings",
                memory=c["savings_bytes"],
                keys=c["keys"],
            )
        )
    s2h = e["strings_to_hashes"] or []
    if s2h:
        saved = sum(s["savings_bytes"] or 0 for s in s2h)
        keys = sum(s["keys"] or 0 for s in s2h)
        out.append(
            finding(
                "strings-to-hashes",
                "info",
                "encodings",
                f"{fmt_int(keys)} small string keys in {len(s2h)} "
                f"famil{'ies' if len(s2h) != 1 else 'y'} (e.g. {fmt_key(s2h[0]['family'], 40)}) would "
                f"save about {fmt_bytes(saved)} as hash fields",
                f"HSET {fmt_key(s2h[0]['example_parent'], 40)} <field> <value>; see Compact encodings",
                memory=saved,
                keys=keys,
            )
        )
    return out
