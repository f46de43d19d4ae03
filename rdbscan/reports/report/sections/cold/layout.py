"""The cold-keys section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_db_key,
    fmt_int,
    fmt_key,
    fmt_seconds,
)
from ...section import key_table

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import ColdData


def layout(c: ColdData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Cold keys")]
    if not c["available"]:
        return blocks + [Block("note", c["reason"] or "")]
    if c["policy"] == "lru":
        blocks.append(
            Block(
                "kv",
                items=[
                    ("Data", "LRU idle times (maxmemory-policy *-lru)"),
                    (
                        f"Idle > {c['idle_days']:g} days",
                        f"{fmt_int(c['cold_idle_keys'])} keys ({fmt_bytes(c['cold_idle_memory'])})",
                    ),
                    (
                        "Idle time",
                        f"median {fmt_seconds(c['median_idle_seconds'])}, max {fmt_seconds(c['max_idle_seconds'])}",
                    ),
                ],
            )
        )
    else:
        blocks.append(
            Block(
                "kv",
                items=[
                    ("Data", "LFU counters (maxmemory-policy *-lfu)"),
                    (
                        f"Counter <= {c['max_freq']}",
                        f"{fmt_int(c['cold_freq_keys'])} keys ({fmt_bytes(c['cold_freq_memory'])})",
                    ),
                    (
                        "Counters",
                        f"min {c['min_freq']}, median {c['median_freq']}, max {c['max_freq_seen']}",
                    ),
                ],
            )
        )
    blocks.append(_coldest(c, report))
    if c["hot"]:
        blocks.append(_hottest(c, report))
    if c["hot_families"]:
        blocks.append(_hottest_families(c))
    return blocks + advice(c)


def _coldest(c: ColdData, report: ReportData) -> Block:
    return key_table(
        report,
        "Coldest keys",
        ["key", "type", "memory", "idle", "LFU", "TTL"],
        c["items"],
        lambda i: [
            fmt_db_key(i),
            i["type"],
            fmt_bytes(i["memory_bytes"]),
            fmt_seconds(i["idle_seconds"]),
            "-" if i["lfu_freq"] is None else str(i["lfu_freq"]),
            "yes" if i["has_ttl"] else "",
        ],
        (2, 3, 4),
    )


def _hottest(c: ColdData, report: ReportData) -> Block:
    return key_table(
        report,
        "Hottest keys (LFU)",
        ["key", "type", "memory", "LFU", "TTL"],
        c["hot"],
        lambda i: [
            fmt_db_key(i),
            i["type"],
            fmt_bytes(i["memory_bytes"]),
            str(i["lfu_freq"]),
            "yes" if i["has_ttl"] else "",
        ],
        (2, 3),
    )


def _hottest_families(c: ColdData) -> Block:
    return table(
        "Hottest families (LFU)",
        ["family", "keys", "max LFU", "median LFU", "hot keys", "hottest key"],
        [
            [
                fmt_key(f["pattern"], 40),
                fmt_int(f["keys"]),
                str(f["max_freq"]),
                str(f["median_freq"]),
                fmt_int(f["hot_keys"]),
                fmt_key(f["hottest_key"], 40),
            ]
            for f in c["hot_families"]
        ],
        (1, 2, 3, 4),
    )
