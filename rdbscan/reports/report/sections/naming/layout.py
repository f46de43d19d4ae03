"""The naming section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_int,
    fmt_key,
    fmt_list,
)

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import NamingData


def layout(n: NamingData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Naming")]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Keys breaking a rule",
                    f"{fmt_int(n['keys'])} of {fmt_int(n['keys_checked'])} ({fmt_bytes(n['memory_bytes'])})",
                ),
                ("Disabled rules", ", ".join(n["config"]["disabled"]) or "none"),
            ],
        )
    )
    blocks.append(
        table(
            "Rules",
            ["rule", "checks", "keys", "memory", "examples"],
            [
                [
                    r["rule"],
                    r["description"],
                    fmt_int(r["keys"]),
                    fmt_bytes(r["memory_bytes"]),
                    fmt_list(r["examples"][:3], 30),
                ]
                for r in n["rules"]
            ],
            (2, 3),
        )
    )
    if n["families"]:
        blocks.append(
            table(
                "Families breaking rules",
                ["family", "rule", "keys", "memory", "example"],
                [
                    [
                        fmt_key(f["pattern"], 40),
                        f["rule"],
                        fmt_int(f["keys"]),
                        fmt_bytes(f["memory_bytes"]),
                        fmt_key(f["example"], 40),
                    ]
                    for f in n["families"]
                ],
                (2, 3),
            )
        )
    return blocks + advice(n)
