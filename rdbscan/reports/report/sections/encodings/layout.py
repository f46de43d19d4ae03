"""The compact-encodings section's blocks."""

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
    from .build import EncodingsData


def layout(e: EncodingsData, report: ReportData) -> list[Block]:
    blocks = [Block("section", "Compact encodings (listpack / ziplist / intset)")]
    th = e["thresholds"]
    srcs = sorted(set(e["threshold_sources"].values()))
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Thresholds",
                    ", ".join(
                        f"{k} {v}"
                        for k, v in th.items()
                        if not k.startswith("list-max-ziplist")
                        or e["list_compact_encoding"] == "ziplist"
                    ),
                ),
                ("From", "; ".join(srcs)),
                (
                    "Non-compact but eligible",
                    f"{fmt_int(e['candidates_total']['keys'])} keys, about "
                    f"{fmt_bytes(e['candidates_total']['savings_bytes'])} to save",
                ),
            ],
        )
    )
    if len(e.get("servers") or []) > 1:
        blocks[-1].items[:2] = [
            ("Thresholds", "each dump's own server's (below), then --config / --set")
        ]
        blocks.append(_servers(e))
    if e["candidates"]:
        blocks.append(_candidates(e, report))
    if e["near_threshold"]:
        blocks.append(_near_threshold(e, report))
    if e["what_if"]:
        blocks.append(_what_if(e))
    if e["strings_to_hashes"]:
        blocks.append(_strings_to_hashes(e))
    blocks.append(
        Block(
            "note",
            "Savings are estimates: listpack size from the serialized size and the longest "
            "element, memory from the 7.x MEMORY USAGE model.",
        )
    )
    return blocks + advice(e)


def _servers(e: EncodingsData) -> Block:
    """Several dumps: the thresholds each dump is judged by."""
    return table(
        "Thresholds per dump",
        ["dump", "server", "hash", "zset", "set listpack", "intset", "list", "field TTLs"],
        [
            [
                f"#{s['dump_id']}",
                f"{s['server'] or '?'} {s['server_version'] or ''}".strip(),
                f"{s['hash_max_listpack_entries']} / {s['hash_max_listpack_value']} B",
                f"{s['zset_max_listpack_entries']} / {s['zset_max_listpack_value']} B",
                f"{s['set_max_listpack_entries']} / {s['set_max_listpack_value']} B"
                if s["set_max_listpack_entries"]
                else "none",
                str(s["set_max_intset_entries"]),
                s["list_compact_encoding"],
                s["hash_field_ttl_encoding"] or "hashtable",
            ]
            for s in e["servers"]
        ],
        (5,),
    )


def _candidates(e: EncodingsData, report: ReportData) -> Block:
    return key_table(
        report,
        "Keys that would be compact",
        [
            "key",
            "type",
            "encoding",
            "-> target",
            "length",
            "longest elem",
            "memory",
            "saves ~",
        ],
        e["candidates"],
        lambda c: [
            fmt_db_key(c),
            c["type"],
            c["encoding"],
            c["target_encoding"],
            fmt_int(c["length"]),
            fmt_bytes(c["max_elem_bytes"]),
            fmt_bytes(c["memory_bytes"]),
            fmt_bytes(c["savings_bytes"]),
        ],
        (4, 5, 6, 7),
    )


def _near_threshold(e: EncodingsData, report: ReportData) -> Block:
    return key_table(
        report,
        "Just over a threshold",
        [
            "key",
            "type",
            "length",
            "longest elem",
            "blocked by",
            "memory",
            "saves ~ if raised",
        ],
        e["near_threshold"],
        lambda c: [
            fmt_db_key(c),
            c["type"],
            fmt_int(c["length"]),
            fmt_bytes(c["max_elem_bytes"]),
            c["blocked_by"],
            fmt_bytes(c["memory_bytes"]),
            fmt_bytes(c["savings_bytes"]),
        ],
        (2, 3, 5, 6),
    )


def _what_if(e: EncodingsData) -> Block:
    return table(
        "What if thresholds were raised",
        ["type", "change", "keys convert", "saves ~"],
        [
            [w["type"], w["change"], fmt_int(w["keys"]), fmt_bytes(w["savings_bytes"])]
            for w in e["what_if"]
        ],
        (2, 3),
        detail=(),  # the change names the row: too narrow a terminal lists the rows
    )


def _strings_to_hashes(e: EncodingsData) -> Block:
    return table(
        "Small strings that would be cheaper as hash fields",
        ["family", "hashes", "keys", "memory now", "as hashes", "saves ~", "e.g. HSET"],
        [
            [
                fmt_key(s["family"], 40),
                fmt_int(s["hashes"]),
                fmt_int(s["keys"]),
                fmt_bytes(s["memory_bytes"]),
                fmt_bytes(s["estimated_bytes"]),
                fmt_bytes(s["savings_bytes"]),
                fmt_key(s["example_parent"], 30),
            ]
            for s in e["strings_to_hashes"]
        ],
        (1, 2, 3, 4, 5),
    )
