"""The Schema section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import fmt_bytes, fmt_duration_ms, fmt_int, fmt_key, fmt_pct
from ....schema.check import LIMIT

if TYPE_CHECKING:
    from ....schema.check import SchemaCheckData
    from ...data import ReportData


def layout(s: SchemaCheckData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Schema")]
    blocks.append(
        Block(
            "kv",
            items=[
                ("Schema file", f"{s['file']} ({s['families_declared']} families)"),
                (
                    "Keys documented",
                    f"{fmt_int(s['keys_documented'])} of {fmt_int(s['keys'])} "
                    f"({fmt_pct(s['memory_documented'] / s['memory_bytes'] if s['memory_bytes'] else 0)} "
                    "of the memory)",
                ),
                ("Violations", fmt_int(s["violations"])),
            ],
        )
    )
    blocks.append(
        table(
            "Checks",
            ["check", "counts", "count", "memory"],
            [
                [c["check"], c["description"], fmt_int(c["count"]), fmt_bytes(c["memory_bytes"])]
                for c in s["checks"]
            ],
            (2, 3),
        )
    )

    def shown(row, value):
        if value is None:
            return "-"
        if row["check"] in ("max-ttl", "ttl-none"):
            return fmt_duration_ms(value)
        if row["check"] in ("max-value-bytes", "max-memory", "max-family-memory"):
            return fmt_bytes(value)
        return fmt_int(value) if isinstance(value, int) else str(value)

    if s["items"]:
        blocks.append(
            table(
                "Breaks",
                ["check", "declared", "family", "keys", "memory", "found", "limit", "example"],
                [
                    [
                        r["check"],
                        fmt_key(r["pattern"], 30),
                        fmt_key(r["family"], 30),
                        fmt_int(r["keys"]),
                        fmt_bytes(r["memory_bytes"]),
                        r["found"] or shown(r, r["measured"]),
                        shown(r, r["declared"]) if r["check"] in LIMIT else (r["declared"] or "-"),
                        fmt_key(r["example"], 30),
                    ]
                    for r in s["items"]
                ],
                (3, 4),
            )
        )
    return blocks + advice(s)
