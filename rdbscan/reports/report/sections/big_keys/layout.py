"""The big-keys section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_db_key,
    fmt_int,
)
from ...section import key_table

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import BigKeysData


def layout(b: BigKeysData, report: ReportData) -> list[Block]:
    t = b["thresholds"]
    blocks = [Block("section", "Big keys")]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Big keys",
                    f"{fmt_int(b['keys'])} ({fmt_int(b['critical'])} critical, "
                    f"{fmt_int(b['keys_with_ttl'])} with TTL)",
                ),
                (
                    "Thresholds",
                    f"string > {fmt_bytes(t['string_bytes'])} (critical > {fmt_bytes(t['string_critical_bytes'])}); "
                    f"collection > {fmt_int(t['collection_length'])} elements (critical > "
                    f"{fmt_int(t['collection_critical_length'])}) or > {fmt_bytes(t['collection_memory'])}",
                ),
            ],
        )
    )
    blocks.append(_rules(b))
    if b["items"]:
        blocks.append(_items(b, report))
    if b["top_by_memory"]:
        blocks.append(_top_by_memory(b, report))
    if b["top_by_length"]:
        blocks.append(_top_by_length(b, report))
    return blocks + advice(b)


def _rules(b: BigKeysData) -> Block:
    return table(
        "Keys over each threshold",
        ["rule", "severity", "threshold", "keys", "memory", "with TTL"],
        [
            [
                r["rule"],
                r["severity"],
                fmt_bytes(r["threshold"])
                if r["measure"] != "elements"
                else f"{fmt_int(r['threshold'])} el.",
                fmt_int(r["keys"]),
                fmt_bytes(r["memory_bytes"]),
                fmt_int(r["keys_with_ttl"]),
            ]
            for r in b["rules"]
        ],
        (2, 3, 4, 5),
    )


def _items(b: BigKeysData, report: ReportData) -> Block:
    return key_table(
        report,
        "Big keys, critical first",
        ["key", "type", "length", "memory", "severity", "TTL"],
        b["items"],
        lambda i: [
            fmt_db_key(i),
            i["type"],
            fmt_int(i["length"]),
            fmt_bytes(i["memory_bytes"]),
            i["severity"],
            "yes" if i["has_ttl"] else "",
        ],
        (2, 3),
    )


def _top_by_memory(b: BigKeysData, report: ReportData) -> Block:
    return key_table(
        report,
        "Top keys by memory, per type",
        ["type", "#", "key", "encoding", "length", "memory"],
        (r for r in b["top_by_memory"] if r["rank"] <= 3),
        lambda r: [
            r["type"],
            str(r["rank"]),
            fmt_db_key(r),
            r["encoding"],
            fmt_int(r["length"]),
            (">= " if r.get("memory_is_lower_bound") else "") + fmt_bytes(r["memory_bytes"]),
        ],
        (1, 4, 5),
        at=3,
    )


def _top_by_length(b: BigKeysData, report: ReportData) -> Block:
    return key_table(
        report,
        "Top collections by element count, per type",
        ["type", "#", "key", "length", "memory"],
        (r for r in b["top_by_length"] if r["rank"] <= 3),
        lambda r: [
            r["type"],
            str(r["rank"]),
            fmt_db_key(r),
            fmt_int(r["length"]),
            (">= " if r.get("memory_is_lower_bound") else "") + fmt_bytes(r["memory_bytes"]),
        ],
        (1, 3, 4),
        at=3,
    )
