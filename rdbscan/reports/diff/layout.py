"""The diff's sections as blocks (after the verdict, render.py): the snapshots, totals, families,
keys (big keys, type changes, encoding conversions), expiry, and the `--fail-on` checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..document import Block, table
from ..format import (
    fmt_bytes,
    fmt_db_key,
    fmt_duration_ms,
    fmt_int,
    fmt_key,
    fmt_pct,
)
from .blocks import (
    _arrow,
    _fail_on,
    _growth_table,
    _metric_rows,
    _side,
    _threshold,
    fmt_growth,
    fmt_per_day_bytes,
    fmt_signed_bytes,
    fmt_signed_int,
)

if TYPE_CHECKING:
    from .data import DiffData, KeyChanges


def diff_sections(d: DiffData) -> list[Block]:
    k = d["keys"]
    blocks = _snapshots(d) + _totals(d) + _families(d) + _keys(k) + _big_keys(k) + _changes(k)
    blocks += _expiry(d)
    if "fail_on" in d:
        blocks += _fail_on(d["fail_on"])
    return blocks


def _snapshots(d: DiffData) -> list[Block]:
    """Old, new, the interval."""
    blocks = [Block("section", "Snapshots")]
    interval = d["interval_seconds"]
    blocks.append(
        Block(
            "kv",
            items=[
                ("Old", _side(d["old"])),
                ("New", _side(d["new"])),
                (
                    "Interval",
                    fmt_duration_ms(interval * 1000)
                    if interval is not None
                    else "unknown (a snapshot time is the load time)",
                ),
            ],
        )
    )
    if d["reordered"]:
        blocks.append(Block("note", REORDERED))
    if d.get("filter"):  # loaded with filters at parse time (docs/export.md)
        blocks.append(
            Block(
                "note",
                f"Both snapshots loaded with a filter ({d['filter']}): the "
                "figures cover the filtered keys only.",
            )
        )
    if d.get("redaction"):  # --redact (docs/redact.md)
        blocks.append(Block("note", d["redaction"]["note"]))
    return blocks


REORDERED = (
    "The snapshots were given newest first: the diff compares them in time order "
    "(old = the earlier snapshot)."
)


def _totals(d: DiffData) -> list[Block]:
    """Keys and memory, old and new, in all, per database, per type."""
    blocks = [Block("section", "Totals")]
    t = d["totals"]
    blocks.append(
        table(
            "", ["", "old", "new", "change", "growth"], _metric_rows(t["all"], True), (1, 2, 3, 4)
        )
    )
    if len(t["by_db"]) > 1:
        blocks.append(_growth_table("Per database", "db", t["by_db"]))
    blocks.append(_growth_table("Per type", "type", t["by_type"]))
    return blocks


def _families(d: DiffData) -> list[Block]:
    """The families whose memory changed most, and whose expiry changed."""
    blocks = [Block("section", "Families")]
    f = d["families"]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Families",
                    f"{fmt_int(f['total'])} ({fmt_int(f['new'])} new, "
                    f"{fmt_int(f['vanished'])} vanished)",
                )
            ],
        )
    )
    per_day = d["interval_days"] is not None
    # (keys added, removed and changed per family: the Keys section)
    headers = [
        "family",
        "status",
        "keys old",
        "keys new",
        "memory old",
        "memory new",
        "change",
        "growth",
    ] + (["per day"] if per_day else [])
    blocks.append(
        table(
            "Largest changes of memory",
            headers,
            [
                [
                    fmt_key(r["pattern"]),
                    r["status"],
                    fmt_int(r["old_keys"]),
                    fmt_int(r["new_keys"]),
                    fmt_bytes(r["old_memory_bytes"]),
                    fmt_bytes(r["new_memory_bytes"]),
                    fmt_signed_bytes(r["delta_memory_bytes"]),
                    fmt_growth(r["memory_growth"]),
                ]
                + ([fmt_per_day_bytes(r["memory_per_day"])] if per_day else [])
                for r in f["items"]
            ],
            range(2, len(headers)),
        )
    )
    if f["ttl_changes"]:
        blocks.append(
            table(
                "Families whose expiry changed",
                ["family", "with TTL old", "with TTL new", "median TTL old", "median TTL new"],
                [
                    [
                        fmt_key(r["pattern"]),
                        f"{fmt_pct(r['old_ttl_coverage'])} of {fmt_int(r['old_keys'])}",
                        f"{fmt_pct(r['new_ttl_coverage'])} of {fmt_int(r['new_keys'])}",
                        fmt_duration_ms(r["old_median_ttl_ms"]),
                        fmt_duration_ms(r["new_median_ttl_ms"]),
                    ]
                    for r in f["ttl_changes"]
                ],
                (1, 2, 3, 4),
            )
        )
    return blocks


def _keys(k: KeyChanges) -> list[Block]:
    """Keys added, removed, changed: per family, and the keys that grew most."""
    blocks = [Block("section", "Keys")]
    blocks.append(
        Block(
            "kv",
            items=[
                ("Added", fmt_int(k["added"])),
                ("Removed", fmt_int(k["removed"])),
                ("Changed", fmt_int(k["changed"])),
                ("Unchanged", fmt_int(k["unchanged"])),
            ],
        )
    )
    blocks.append(
        table(
            "Per family",
            [
                "family",
                "added",
                "removed",
                "changed",
                "memory added",
                "memory removed",
                "change of changed keys",
            ],
            [
                [
                    fmt_key(r["pattern"]),
                    fmt_int(r["added"]),
                    fmt_int(r["removed"]),
                    fmt_int(r["changed"]),
                    fmt_bytes(r["added_memory_bytes"]),
                    fmt_bytes(r["removed_memory_bytes"]),
                    fmt_signed_bytes(r["changed_delta_memory_bytes"]),
                ]
                for r in k["by_family"]
            ],
            range(1, 7),
        )
    )
    blocks.append(
        table(
            "Keys that grew most",
            ["key", "type", "encoding", "length", "memory old", "memory new", "change"],
            [
                [
                    fmt_db_key(r) + (" (new)" if r["change"] == "added" else ""),
                    _arrow(r["old_type"], r["new_type"]),
                    _arrow(r["old_encoding"], r["new_encoding"]),
                    _arrow(
                        fmt_int(r["old_length"]) if r["old_length"] is not None else None,
                        fmt_int(r["new_length"]),
                    ),
                    fmt_bytes(r["old_memory_bytes"]),
                    fmt_bytes(r["new_memory_bytes"]),
                    fmt_signed_bytes(r["delta_memory_bytes"]),
                ]
                for r in k["top_growers"]
            ],
            (3, 4, 5, 6),
        )
    )
    return blocks


def _big_keys(k: KeyChanges) -> list[Block]:
    """Big keys new, past a critical threshold, gone."""
    blocks: list[Block] = []
    b = k["big_keys"]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Big keys",
                    f"{fmt_int(b['new'])} new, {fmt_int(b['past_critical'])} past a "
                    f"critical threshold, {fmt_int(b['gone'])} gone",
                )
            ],
        )
    )
    blocks.append(
        table(
            "Big keys that changed",
            ["", "key", "type", "length", "memory", "severity"],
            [
                [
                    r["kind"],
                    fmt_db_key(r),
                    _arrow(r["old_type"], r["new_type"]),
                    _arrow(
                        fmt_int(r["old_length"]) if r["old_length"] is not None else None,
                        fmt_int(r["new_length"]) if r["new_length"] is not None else None,
                    ),
                    _arrow(
                        fmt_bytes(r["old_memory_bytes"])
                        if r["old_memory_bytes"] is not None
                        else None,
                        fmt_bytes(r["new_memory_bytes"])
                        if r["new_memory_bytes"] is not None
                        else None,
                    ),
                    _arrow(r["old_severity"] or "-", r["new_severity"] or "-"),
                ]
                for r in b["items"]
            ],
            (3, 4),
        )
    )
    return blocks


def _changes(k: KeyChanges) -> list[Block]:
    """Keys that changed type, and encoding conversions."""
    blocks: list[Block] = []
    tc = k["type_changes"]
    if tc["total"]:
        blocks.append(
            table(
                f"Type changes ({fmt_int(tc['total'])})",
                ["key", "old type", "new type", "memory"],
                [
                    [
                        fmt_db_key(r),
                        r["old_type"],
                        r["new_type"],
                        _arrow(fmt_bytes(r["old_memory_bytes"]), fmt_bytes(r["new_memory_bytes"])),
                    ]
                    for r in tc["items"]
                ],
                (3,),
            )
        )
    ec = k["encoding_conversions"]
    if ec["total"]:
        blocks.append(
            table(
                f"Encoding conversions ({fmt_int(ec['total'])})",
                ["type", "encoding", "threshold crossed", "keys"],
                [
                    [
                        c["type"],
                        _arrow(c["old_encoding"], c["new_encoding"]),
                        _threshold(c["threshold"]),
                        fmt_int(c["keys"]),
                    ]
                    for c in ec["conversions"]
                ],
                (3,),
            )
        )
        blocks.append(
            table(
                "",
                ["key", "encoding", "threshold", "measured", "memory"],
                [
                    [
                        fmt_db_key(r),
                        _arrow(r["old_encoding"], r["new_encoding"]),
                        _threshold(r["threshold"], r["threshold_value"]),
                        fmt_int(r["measured"]) if r["measured"] is not None else "-",
                        _arrow(fmt_bytes(r["old_memory_bytes"]), fmt_bytes(r["new_memory_bytes"])),
                    ]
                    for r in ec["items"]
                ],
                (3, 4),
            )
        )
    return blocks


def _expiry(d: DiffData) -> list[Block]:
    """Keys that lost or gained an expiry, the remaining TTLs."""
    blocks = [Block("section", "Expiry")]
    ttl = d["ttl"]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Lost their expiry",
                    f"{fmt_int(ttl['lost_expiry'])} keys ({fmt_bytes(ttl['lost_expiry_memory_bytes'])})",
                ),
                ("Gained an expiry", fmt_int(ttl["gained_expiry"])),
                ("Expiry time moved", fmt_int(ttl["expiry_moved"])),
                (
                    "Expired at snapshot time",
                    f"{fmt_int(ttl['old_expired_at_snapshot'])} -> "
                    f"{fmt_int(ttl['new_expired_at_snapshot'])}",
                ),
            ],
        )
    )
    if ttl["lost_expiry_families"]:
        blocks.append(
            table(
                "Keys that lost their expiry, per family",
                ["family", "keys", "memory", "example"],
                [
                    [
                        fmt_key(r["pattern"]),
                        fmt_int(r["keys"]),
                        fmt_bytes(r["memory_bytes"]),
                        fmt_key(r["example"]),
                    ]
                    for r in ttl["lost_expiry_families"]
                ],
                (1, 2),
            )
        )
    blocks.append(
        table(
            "Remaining TTL at each snapshot",
            ["TTL", "keys old", "keys new", "change"],
            [
                [
                    r["bucket"],
                    fmt_int(r["old_keys"]),
                    fmt_int(r["new_keys"]),
                    fmt_signed_int(r["delta_keys"]),
                ]
                for r in ttl["distribution"]
            ],
            (1, 2, 3),
        )
    )
    return blocks
