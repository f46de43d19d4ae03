"""The Value design section's blocks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....document import Block, advice, table
from ....format import (
    fmt_bytes,
    fmt_db_key,
    fmt_int,
    fmt_key,
)
from ...section import key_table

if TYPE_CHECKING:
    from ...data import ReportData
    from .build import BigElements, Compressible, SplitKeys, ValuesData


def layout(v: ValuesData, report: ReportData) -> list[Block]:
    """The "Value design" section (rdbscan/reports/values.py)."""
    sk, be, cp = v["split_keys"], v["big_elements"], v["compressible"]
    blocks = [Block("section", "Value design")]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Split keys",
                    f"{fmt_int(sk['logical_keys'])} logical keys in {fmt_int(sk['shards'])} shards "
                    f"(#N suffixes, >= {sk['min_shards']} shards), {fmt_bytes(sk['memory_bytes'])}"
                    + (
                        f"; {fmt_int(sk['big_when_joined'])} big once joined"
                        if sk["big_when_joined"]
                        else ""
                    ),
                ),
                (
                    "Big elements",
                    f"{fmt_int(be['keys'])} collections with an element over "
                    f"{fmt_bytes(be['threshold_bytes'])} ({fmt_bytes(be['memory_bytes'])})",
                ),
                (
                    "Compressible",
                    f"{fmt_int(cp['keys'])} strings over {fmt_bytes(cp['min_bytes'])}: "
                    f"{fmt_bytes(cp['raw_bytes'])}, {fmt_bytes(cp['stored_bytes'])} LZF-compressed "
                    f"in the RDB (ratio {cp['ratio'] if cp['ratio'] is not None else '-'}), "
                    f"about {fmt_bytes(cp['savings_bytes'])} to save",
                ),
            ],
        )
    )
    if sk["items"]:
        blocks.append(_split_keys(sk))
    if be["items"]:
        blocks.append(_big_elements(be, report))
    if cp["families"]:
        blocks.append(_compressible(cp))
    return blocks + advice(v)


def _split_keys(sk: SplitKeys) -> Block:
    return table(
        "Keys split into shards, by memory",
        ["logical key", "type", "shards", "memory", "largest", "median", "balance"],
        [
            [
                fmt_db_key({"key": r["logical_key"], "db": r["db"]})
                + (" (big once joined)" if r["big_when_joined"] else ""),
                r["type"],
                fmt_int(r["shards"]),
                fmt_bytes(r["memory_bytes"]),
                fmt_bytes(r["largest_shard_bytes"]),
                fmt_bytes(r["median_shard_bytes"]),
                f"{r['balance']:g}" if r["balance"] is not None else "-",
            ]
            for r in sk["items"]
        ],
        (2, 3, 4, 5, 6),
    )


def _big_elements(be: BigElements, report: ReportData) -> Block:
    return key_table(
        report,
        f"Collections with an element over {fmt_bytes(be['threshold_bytes'])}",
        ["key", "type", "length", "longest element", "memory"],
        be["items"],
        lambda r: [
            fmt_db_key(r),
            r["type"],
            fmt_int(r["length"]),
            fmt_bytes(r["max_elem_bytes"]),
            fmt_bytes(r["memory_bytes"]),
        ],
        (2, 3, 4),
    )


def _compressible(cp: Compressible) -> Block:
    return table(
        f"Strings over {fmt_bytes(cp['min_bytes'])} by family: LZF in the RDB",
        ["family", "keys", "raw", "stored", "ratio", "memory", "to save"],
        [
            [
                fmt_key(r["pattern"]),
                fmt_int(r["keys"]),
                fmt_bytes(r["raw_bytes"]),
                fmt_bytes(r["stored_bytes"]),
                f"{r['ratio']:g}" if r["ratio"] is not None else "-",
                fmt_bytes(r["memory_bytes"]),
                fmt_bytes(r["savings_bytes"]),
            ]
            for r in cp["families"]
        ],
        (1, 2, 3, 4, 5, 6),
    )
