"""The trend as text, markdown and JSON (docs/diff.md): per instance, the keys and memory of each
family at each snapshot and their growth per day."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..document import Block, draw_markdown, draw_text, render_json, table
from ..format import (
    fmt_bytes,
    fmt_duration_ms,
    fmt_int,
    fmt_key,
    fmt_time,
)
from .blocks import fmt_growth, fmt_per_day_bytes
from .render import VERDICT_LINES

if TYPE_CHECKING:
    from .trend_data import TrendData, TrendFamily

__all__ = ["render_trend", "trend_document"]


def trend_verdict(t: TrendData) -> list[Block]:
    """One line per instance (memory first -> last, growth per day), then the families that grow
    fastest (TREND_VERDICT_FAMILIES per instance), at most VERDICT_LINES lines."""
    insts = t["instances"]
    snaps = sum(len(i["snapshots"]) for i in insts)
    lines: list[Block] = []
    for inst in insts:
        name = inst["instance"] if inst["instance"] is not None else "(no instance)"
        s = inst["snapshots"]
        if not s:
            continue
        span = f" in {fmt_duration_ms(inst['days'] * 86400000)}" if inst["days"] is not None else ""
        lines.append(
            Block(
                "finding",
                items=[
                    "info",
                    f"{name}: memory {fmt_bytes(s[0]['memory_bytes'])} -> "
                    f"{fmt_bytes(s[-1]['memory_bytes'])}, keys {fmt_int(s[0]['keys'])} -> "
                    f"{fmt_int(s[-1]['keys'])} over {len(s)} snapshots{span} "
                    f"({fmt_per_day_bytes(inst['memory_per_day'])})",
                    f"see Instance {name}",
                ],
            )
        )
        growing = [f for f in inst["families"] if (f["memory_per_day"] or 0) > 0]
        shrinking = inst["shrinking"]
        for f, verb in [(f, "grows") for f in growing[:TREND_VERDICT_FAMILIES]] + [
            (f, "vanished" if f["vanished"] else "shrinks")
            for f in shrinking[:TREND_VERDICT_FAMILIES]
        ]:
            lines.append(
                Block(
                    "finding",
                    items=[
                        "info",
                        f"{name}: {fmt_key(f['pattern'], 40)} {verb} "
                        f"{fmt_per_day_bytes(f['memory_per_day'])} "
                        f"({fmt_bytes(f['first_memory_bytes'])} -> "
                        f"{fmt_bytes(f['last_memory_bytes'])})",
                        f"see Instance {name}",
                    ],
                )
            )
    head = f"Trend: {_count(len(insts), 'instance')}, {_count(snaps, 'snapshot')}"
    return [Block("section", head)] + lines[:VERDICT_LINES]


TREND_VERDICT_FAMILIES = 3


def _count(n: int, noun: str) -> str:
    return f"{fmt_int(n)} {noun}{'' if n == 1 else 's'}"


def trend_document(t: TrendData) -> list[Block]:
    """The verdict, then one section per instance."""
    return trend_verdict(t) + trend_sections(t)


def trend_sections(t: TrendData) -> list[Block]:
    blocks: list[Block] = []
    if t.get("redaction"):  # --redact (docs/redact.md)
        blocks.append(Block("note", t["redaction"]["note"]))
    for inst in t["instances"]:
        name = inst["instance"] if inst["instance"] is not None else "(no instance)"
        blocks.append(Block("section", f"Instance {name}"))
        snaps = inst["snapshots"]
        blocks.append(
            table(
                "Snapshots",
                ["id", "taken", "keys", "memory", "used-mem", "dumps"],
                [
                    [
                        str(s["snapshot_id"]),
                        fmt_time(s["snapshot_ms"]),
                        fmt_int(s["keys"]),
                        fmt_bytes(s["memory_bytes"]),
                        fmt_bytes(s["used_mem"]),
                        fmt_int(s["dumps"]),
                    ]
                    for s in snaps
                ],
                (2, 3, 4, 5),
            )
        )
        days = inst["days"]
        if days is not None:
            blocks.append(
                Block(
                    "kv",
                    items=[
                        (
                            "Span",
                            f"{fmt_duration_ms(days * 86400000)} over {len(snaps)} snapshots",
                        ),
                        ("Memory growth", fmt_per_day_bytes(inst["memory_per_day"])),
                        (
                            "Key growth",
                            "-"
                            if inst["keys_per_day"] is None
                            else f"{inst['keys_per_day']:+,.1f}/d",
                        ),
                    ],
                )
            )
        ids = [s["snapshot_id"] for s in snaps]
        shown = ids[-6:]  # the last snapshots fit a terminal; JSON has all of them
        blocks.append(
            _families_table(
                "Families growing fastest (memory per day, least squares over the snapshots)",
                inst["families"],
                shown,
            )
        )
        blocks.append(
            _families_table(
                "Families shrinking fastest (vanished: no key at the last snapshot)",
                inst["shrinking"],
                shown,
            )
        )
    if not t["instances"]:
        blocks.append(Block("note", "The database holds no snapshot."))
    return blocks


def _families_table(title: str, families: list[TrendFamily], shown: list[int]) -> Block:
    """Families, their memory at the last snapshots shown, keys now, growth per day and in
    all."""
    headers = ["family"] + [f"#{i} memory" for i in shown] + ["keys now", "per day", "growth"]
    rows = []
    for fam in families:
        by = {p["snapshot_id"]: p for p in fam["points"]}
        rows.append(
            [fmt_key(fam["pattern"])]
            + [fmt_bytes(by[i]["memory_bytes"]) if i in by else "-" for i in shown]
            + [
                "vanished" if fam["vanished"] else fmt_int(fam["last_keys"]),
                fmt_per_day_bytes(fam["memory_per_day"]),
                fmt_growth(fam["memory_growth"]),
            ]
        )
    return table(title, headers, rows, range(1, len(headers)))


def render_trend(t: TrendData, fmt: str) -> str | None:
    if fmt == "json":
        return render_json(dict(t))
    if fmt == "markdown":
        return draw_markdown(trend_document(t), "rdbscan trend")
    draw_text(trend_document(t))
    return None
