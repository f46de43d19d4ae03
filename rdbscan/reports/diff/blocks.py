"""What the diff's and the trend's blocks share: signed sizes and counts, growth, the side of a
diff in one line, old -> new, the tables of totals, the `--fail-on` checks."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..document import Block, table
from ..format import (
    fmt_bytes,
    fmt_int,
    fmt_time,
)

if TYPE_CHECKING:
    from .data import FailCheck, FailOn, SideData, TotalsAll, TotalsPart


def fmt_signed_bytes(n) -> str:
    if n is None:
        return "-"
    return ("+" if n > 0 else "-" if n < 0 else "") + fmt_bytes(abs(n))


def fmt_signed_int(n) -> str:
    if n is None:
        return "-"
    return f"{int(n):+,}" if n else "0"


def fmt_growth(x) -> str:
    """A growth fraction as a signed percentage; '-' when the old value was 0."""
    if x is None:
        return "-"
    return ("+" if x > 0 else "") + f"{x * 100:.1f}%"


def fmt_per_day_bytes(x) -> str:
    return "-" if x is None else fmt_signed_bytes(x) + "/d"


def _side(s: SideData) -> str:
    where = ", ".join(s["paths"]) or s["database"] or "?"
    if len(s["paths"]) > 3:
        where = f"{s['paths'][0]} ... ({len(s['paths'])} dumps)"
    inst = f"instance {s['instance']}, " if s["instance"] else ""
    return (
        f"{fmt_time(s['snapshot_ms'])} ({s['snapshot_source']}), {inst}"
        f"{fmt_int(s['keys'])} keys: {where}"
    )


def _growth_table(title: str, first: str, rows: list[TotalsPart]) -> Block:
    """Keys and memory, old and new, of each database or type (totals.by_db, totals.by_type)."""
    return table(
        title,
        [first, "keys old", "keys new", "change", "memory old", "memory new", "change", "growth"],
        [
            [
                r["name"],
                fmt_int(r["old_keys"]),
                fmt_int(r["new_keys"]),
                fmt_signed_int(r["delta_keys"]),
                fmt_bytes(r["old_memory_bytes"]),
                fmt_bytes(r["new_memory_bytes"]),
                fmt_signed_bytes(r["delta_memory_bytes"]),
                fmt_growth(r["memory_growth"]),
            ]
            for r in rows
        ],
        range(1, 8),
    )


def _metric_rows(t: TotalsAll, with_used_mem: bool = False) -> list[list[str]]:
    rows = [
        [
            "keys",
            fmt_int(t["old_keys"]),
            fmt_int(t["new_keys"]),
            fmt_signed_int(t["delta_keys"]),
            fmt_growth(t["keys_growth"]),
        ],
        [
            "memory",
            fmt_bytes(t["old_memory_bytes"]),
            fmt_bytes(t["new_memory_bytes"]),
            fmt_signed_bytes(t["delta_memory_bytes"]),
            fmt_growth(t["memory_growth"]),
        ],
        [
            "keys with TTL",
            fmt_int(t["old_keys_with_ttl"]),
            fmt_int(t["new_keys_with_ttl"]),
            fmt_signed_int(t["delta_keys_with_ttl"]),
            fmt_growth(t["keys_with_ttl_growth"]),
        ],
    ]
    if with_used_mem and t["old_used_mem"] is not None and t["new_used_mem"] is not None:
        rows.append(
            [
                "used-mem (at save)",
                fmt_bytes(t["old_used_mem"]),
                fmt_bytes(t["new_used_mem"]),
                fmt_signed_bytes(t["delta_used_mem"]),
                fmt_growth(t["used_mem_growth"]),
            ]
        )
    return rows


def _arrow(old, new) -> str:
    if old is None and new is None:
        return "-"
    if old is None:
        return f"(none) -> {new}"
    if new is None:
        return f"{old} -> (none)"
    return str(old) if old == new else f"{old} -> {new}"


def _threshold(name, value=None) -> str:
    if name is None:
        return "-"
    return name if value is None else f"{name} {fmt_int(value)}"


def _measured(c: FailCheck) -> str:
    """What a --fail-on check measured, in words."""
    if c["rule"] == "growth":
        return f"{fmt_signed_bytes(c['value'])} ({fmt_growth(c['growth'])})"
    if c["rule"] == "family-growth":
        return f"{fmt_int(c['value'])} families" + (
            f": {', '.join(c['families'][:3])}" if c["families"] else ""
        )
    return f"{fmt_int(c['value'])} keys"


def _fail_on(f: FailOn) -> list[Block]:
    rows = []
    for c in f["checks"]:
        rows.append([c["rule"], _measured(c), c["threshold"], "FAIL" if c["failed"] else "ok"])
    return [
        Block("section", "Checks (--fail-on)"),
        table("", ["check", "measured", "threshold", "result"], rows, (2,)),
    ]
