"""The key-families section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_int,
    fmt_key,
    fmt_pct,
)

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import PatternsData


def layout(p: PatternsData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Key families")]
    blocks.append(
        Block(
            "note",
            f"{fmt_int(p['families'])} {'family' if p['families'] == 1 else 'families'}; "
            "id-like segments (numbers, dates, UUIDs, hex, random tokens, IPv4 and e-mail "
            f"addresses) become {{id}}/{{date}}/{{ip}}/{{email}}; delimiters {p['delimiters']!r}.",
        )
    )
    blocks.append(
        table(
            "Families by memory",
            ["family", "keys", "memory", "share", "types", "avg", "largest key", "TTL coverage"],
            [
                [
                    fmt_key(r["pattern"], 50)
                    + (f" ({r['families']} families)" if r["pattern"] == "(other)" else ""),
                    fmt_int(r["keys"]),
                    fmt_bytes(r["memory_bytes"]),
                    fmt_pct(r["memory_share"]),
                    ",".join(r["types"]),
                    fmt_bytes(r["avg_memory_bytes"]),
                    f"{fmt_key(r['largest_key'], 40)} ({fmt_bytes(r['largest_memory_bytes'])})",
                    fmt_pct(r["ttl_share"]),
                ]
                for r in p["items"]
            ],
            (1, 2, 3, 5, 7),
        )
    )
    if p["prefixes"]:
        blocks.append(
            table(
                "Prefix rollup",
                ["depth", "prefix", "keys", "memory", "share", "TTL coverage"],
                [
                    [
                        str(r["depth"]),
                        fmt_key(r["prefix"], 50),
                        fmt_int(r["keys"]),
                        fmt_bytes(r["memory_bytes"]),
                        fmt_pct(r["memory_share"]),
                        fmt_pct(r["ttl_share"]),
                    ]
                    for r in p["prefixes"]
                ],
                (0, 2, 3, 4, 5),
            )
        )
    return blocks + advice(p)
