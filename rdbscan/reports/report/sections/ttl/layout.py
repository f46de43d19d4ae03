"""The TTL section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_int,
    fmt_key,
    fmt_keys,
    fmt_pct,
    fmt_time,
)
from ...section import key_table
from .findings import chance_words

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import TtlData


def layout(t: TtlData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "TTL")]
    blocks.append(
        Block(
            "kv",
            items=[
                ("Measured from", f"{fmt_time(t['snapshot_ms'])} (snapshot time, not now)"),
                (
                    "Without TTL",
                    f"{fmt_keys(t['keys_without_ttl'])} ({fmt_pct(t['key_share_without_ttl'])}), "
                    f"{fmt_bytes(t['memory_without_ttl'])} ({fmt_pct(t['memory_share_without_ttl'])} of memory)",
                ),
                ("With TTL", fmt_int(t["keys_with_ttl"])),
                (
                    "Expired at snapshot",
                    f"{fmt_keys(t['expired_at_snapshot'])} ({fmt_bytes(t['memory_expired_at_snapshot'])})",
                ),
                ("Expiring within 1 h", fmt_int(t["expiring_within_1h"])),
                ("Hashes with field TTLs", fmt_int(t["hashes_with_field_ttl"])),
            ],
        )
    )
    if t["families"]:
        blocks.append(_families(t))
    herd = t["herd"]["seconds"] + t["herd"]["minutes"]
    if herd:
        blocks.append(_herds(herd, report))
    blocks.append(_distribution(t))
    return blocks + advice(t)


def _herds(herd: list[dict], report: ReportData) -> Block:
    """The bunched expiries; over several dumps, first the dump whose keys they are (a herd is
    always one dump's)."""
    return key_table(
        report,
        "Expiries bunched in one second / minute (unlikely under uniform spreading)",
        ["moment", "per", "family", "keys", "evenly spread", "times that", "by chance"],
        herd,
        lambda h: [
            fmt_time(h["moment_ms"]),
            h["granularity"],
            fmt_key(h["pattern"], 40),
            fmt_int(h["keys"]),
            "<0.01" if h["expected_keys"] < 0.01 else f"{h['expected_keys']:,.2f}",
            f"{h['ratio_to_expected']:,.0f}",
            chance_words(h),
        ],
        (3, 4, 5, 6),
        at=0,
    )


def _families(t: TtlData) -> Block:
    return table(
        "Families with keys without TTL",
        ["family", "keys", "no TTL", "memory no TTL", "TTL coverage", "cache/session?"],
        [
            [
                fmt_key(f["pattern"], 50),
                fmt_int(f["keys"]),
                fmt_int(f["keys_without_ttl"]),
                fmt_bytes(f["memory_without_ttl"]),
                fmt_pct(f["ttl_share"]),
                "yes" if f["looks_ephemeral"] else "",
            ]
            for f in t["families"]
        ],
        (1, 2, 3, 4),
    )


def _distribution(t: TtlData) -> Block:
    return table(
        "TTL distribution",
        ["remaining TTL", "keys", "memory", "share of keys"],
        [
            [
                d["bucket"],
                fmt_int(d["keys"]),
                fmt_bytes(d["memory_bytes"]),
                fmt_pct(d["key_share"]),
            ]
            for d in t["distribution"]
        ],
        (1, 2, 3),
    )
