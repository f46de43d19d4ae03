"""The cluster-slots section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_int,
    fmt_key,
    fmt_list,
    fmt_pct,
)

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import SlotsData


def layout(s: SlotsData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Cluster slots")]
    if not s["announced_slots"] and not s["hashtags"]:
        # a standalone dump without hashtags: how it would spread over a cluster, in one line
        return blocks + [
            Block(
                "note",
                f"Standalone dump: its {fmt_int(s['keys'])} keys would use "
                f"{fmt_int(s['slots_used'])} of 16384 slots (at most "
                f"{fmt_int(s['max_keys_in_slot'])} keys in one); no hashtags.",
            )
        ]
    kv = [
        ("Slots used", f"{fmt_int(s['slots_used'])} of 16384"),
        (
            "Keys per used slot",
            f"average {s['avg_keys_per_slot'] or 0:.1f}, max {fmt_int(s['max_keys_in_slot'])}",
        ),
    ]
    if s["announced_slots"]:
        kv.append(
            (
                "Announced in dump",
                f"{fmt_int(s['announced_slots'])} slots, "
                f"{fmt_int(s['announced_mismatches'])} disagree with the keys read",
            )
        )
    blocks.append(Block("kv", items=kv))
    blocks.append(_hottest(s))
    blocks.append(_by_memory(s))
    if s["hashtags"]:
        blocks.append(_hashtags(s))
    return blocks + advice(s)


def _hottest(s: SlotsData) -> Block:
    return table(
        "Hottest slots",
        ["slot", "keys", "memory", "share of keys", "hashtags"],
        [
            [
                str(r["slot"]),
                fmt_int(r["keys"]),
                fmt_bytes(r["memory_bytes"]),
                fmt_pct(r["key_share"]),
                fmt_list(r["hashtags"], 30),
            ]
            for r in s["hottest"]
        ],
        (0, 1, 2, 3),
    )


def _by_memory(s: SlotsData) -> Block:
    return table(
        "Slots by memory",
        ["slot", "keys", "memory", "share", "largest key"],
        [
            [
                str(r["slot"]),
                fmt_int(r["keys"]),
                fmt_bytes(r["memory_bytes"]),
                fmt_pct(r["memory_share"]),
                fmt_key(r["largest_key"], 40),
            ]
            for r in s["by_memory"]
        ],
        (0, 1, 2, 3),
    )


def _hashtags(s: SlotsData) -> Block:
    return table(
        "Hashtags",
        ["hashtag", "slot", "keys", "memory", "share of slot"],
        [
            [
                fmt_key(h["hashtag"], 40),
                str(h["slot"]),
                fmt_int(h["keys"]),
                fmt_bytes(h["memory_bytes"]),
                fmt_pct(h["share_of_slot"]),
            ]
            for h in s["hashtags"]
        ],
        (1, 2, 3, 4),
    )
