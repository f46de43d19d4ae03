"""Lays out the diff and trend dicts (rdbscan.reports.diff, rdbscan.reports.trend) as the
report's blocks, which rdbscan.reports.document draws as text or markdown; JSON is the dict itself
(docs/diff.md)."""

from __future__ import annotations

from .document import Block, draw_markdown, draw_text, render_json, table
from .format import (
    fmt_bytes,
    fmt_db_key,
    fmt_duration_ms,
    fmt_int,
    fmt_key,
    fmt_pct,
    fmt_time,
)

__all__ = ["diff_document", "trend_document", "render_json", "render_diff", "render_trend"]


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


def _side(s: dict) -> str:
    where = ", ".join(s.get("paths") or []) or s.get("database") or "?"
    if len(s.get("paths") or []) > 3:
        where = f"{s['paths'][0]} ... ({len(s['paths'])} dumps)"
    inst = f"instance {s['instance']}, " if s.get("instance") else ""
    return (
        f"{fmt_time(s.get('snapshot_ms'))} ({s.get('snapshot_source')}), {inst}"
        f"{fmt_int(s.get('keys'))} keys: {where}"
    )


def _growthtable(title: str, first: str, rows: list[dict]) -> Block:
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


def _metric_rows(t: dict, with_used_mem: bool = False) -> list[list[str]]:
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
    if with_used_mem and t.get("old_used_mem") is not None and t.get("new_used_mem") is not None:
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


VERDICT_LINES = 10


def diff_verdict(d: dict) -> list[Block]:
    """The verdict before the sections: one line of totals, then at most VERDICT_LINES lines, the
    failed --fail-on checks first (critical), then what needs a look (warning: keys past a
    critical big-key threshold, new big keys, keys that lost their expiry), then the biggest
    changes (info: the families that changed most, keys added/removed/changed, conversions)."""
    t = d["totals"]["all"]
    head = (
        f"Verdict: memory {fmt_signed_bytes(t['delta_memory_bytes'])} "
        f"({fmt_growth(t['memory_growth'])}) to {fmt_bytes(t['new_memory_bytes'])}, keys "
        f"{fmt_signed_int(t['delta_keys'])} to {fmt_int(t['new_keys'])}"
    )
    lines: list[tuple[str, str, str]] = []
    checks = (d.get("fail_on") or {}).get("checks") or []
    for c in checks:
        if c["failed"]:
            lines.append(
                (
                    "critical",
                    f"--fail-on {c['rule']} failed: {_measured(c)} (threshold {c['threshold']})",
                    "see Checks (--fail-on)",
                )
            )
    k = d["keys"]
    b = k["big_keys"]
    for kind, n, what, advice in (
        (
            "past-critical",
            b["past_critical"],
            "big keys grew past a critical threshold",
            "split them or delete with UNLINK",
        ),
        ("new", b["new"], "new big keys", "check that they are meant to be this big"),
    ):
        if n:
            names = [r["key"] for r in b["items"] if r["kind"] == kind][:3]
            lines.append(
                (
                    "warning",
                    f"{fmt_int(n)} {what}"
                    + (f": {', '.join(fmt_key(x, 40) for x in names)}" if names else "")
                    + (" ..." if n > len(names) else ""),
                    f"{advice}; see Keys",
                )
            )
    ttl = d["ttl"]
    if ttl["lost_expiry"]:
        fams = [fmt_key(r["pattern"], 40) for r in ttl["lost_expiry_families"][:2]]
        lines.append(
            (
                "warning",
                f"{fmt_int(ttl['lost_expiry'])} keys lost their expiry "
                f"({fmt_bytes(ttl['lost_expiry_memory_bytes'])})"
                + (f": {', '.join(fams)}" if fams else ""),
                "set the expiry where these keys are written; see Expiry",
            )
        )
    for r in [r for r in d["families"]["items"] if r["delta_memory_bytes"]][:3]:
        status = {"new": " (new family)", "vanished": " (vanished)"}.get(r["status"], "")
        lines.append(
            (
                "info",
                f"{fmt_key(r['pattern'], 40)}{status}: {fmt_signed_bytes(r['delta_memory_bytes'])} "
                f"({fmt_bytes(r['old_memory_bytes'])} -> {fmt_bytes(r['new_memory_bytes'])}), "
                f"keys {fmt_int(r['old_keys'])} -> {fmt_int(r['new_keys'])}",
                "see Families",
            )
        )
    lines.append(
        (
            "info",
            f"{fmt_int(k['added'])} keys added, {fmt_int(k['removed'])} removed, "
            f"{fmt_int(k['changed'])} changed, {fmt_int(k['unchanged'])} unchanged",
            "see Keys",
        )
    )
    ec = k["encoding_conversions"]
    if ec["total"]:
        parts = [
            f"{fmt_int(c['keys'])} {c['type']} {c['old_encoding']} -> {c['new_encoding']}"
            + (f" ({c['threshold']})" if c.get("threshold") else "")
            for c in ec["conversions"][:2]
        ]
        lines.append(
            (
                "info",
                f"{fmt_int(ec['total'])} encoding conversions: {', '.join(parts)}"
                + (" ..." if len(ec["conversions"]) > 2 else ""),
                "see Keys",
            )
        )
    tc = k["type_changes"]
    if tc["total"]:
        lines.append(("info", f"{fmt_int(tc['total'])} keys changed type", "see Keys"))
    if checks and not any(c["failed"] for c in checks):
        lines.append(
            (
                "info",
                f"every --fail-on check passed ({', '.join(c['rule'] for c in checks)})",
                "see Checks (--fail-on)",
            )
        )
    order = {"critical": 0, "warning": 1, "info": 2}
    lines.sort(key=lambda x: order[x[0]])  # stable: within a severity, the order above
    return [Block("section", head)] + [
        Block("finding", items=list(line)) for line in lines[:VERDICT_LINES]
    ]


def diff_document(d: dict) -> list[Block]:
    """The verdict, then the sections."""
    return diff_verdict(d) + diff_sections(d)


def diff_sections(d: dict) -> list[Block]:
    blocks = [Block("section", "Snapshots")]
    interval = d.get("interval_seconds")
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
    t = d["totals"]
    blocks.append(Block("section", "Totals"))
    blocks.append(
        table(
            "", ["", "old", "new", "change", "growth"], _metric_rows(t["all"], True), (1, 2, 3, 4)
        )
    )
    if len(t["by_db"]) > 1:
        blocks.append(_growthtable("Per database", "db", t["by_db"]))
    blocks.append(_growthtable("Per type", "type", t["by_type"]))

    f = d["families"]
    blocks.append(Block("section", "Families"))
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
    per_day = d.get("interval_days") is not None
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

    k = d["keys"]
    blocks.append(Block("section", "Keys"))
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

    ttl = d["ttl"]
    blocks.append(Block("section", "Expiry"))
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
    if "fail_on" in d:
        blocks += _fail_on(d["fail_on"])
    return blocks


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


def _measured(c: dict) -> str:
    """What a --fail-on check measured, in words."""
    if c["rule"] == "growth":
        return f"{fmt_signed_bytes(c['value'])} ({fmt_growth(c.get('growth'))})"
    if c["rule"] == "family-growth":
        return f"{fmt_int(c['value'])} families" + (
            f": {', '.join(c['families'][:3])}" if c["families"] else ""
        )
    return f"{fmt_int(c['value'])} keys"


def _fail_on(f: dict) -> list[Block]:
    rows = []
    for c in f["checks"]:
        rows.append([c["rule"], _measured(c), c["threshold"], "FAIL" if c["failed"] else "ok"])
    return [
        Block("section", "Checks (--fail-on)"),
        table("", ["check", "measured", "threshold", "result"], rows, (2,)),
    ]


def render_diff(d: dict, fmt: str) -> str | None:
    """text is printed (rich); markdown and json are returned."""
    if fmt == "json":
        return render_json(d)
    if fmt == "markdown":
        return draw_markdown(diff_document(d), "rdbscan diff")
    draw_text(diff_document(d))
    return None


# --- trend -----------------------------------------------------------------------------------


def trend_verdict(t: dict) -> list[Block]:
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
        span = (
            f" in {fmt_duration_ms(inst['days'] * 86400000)}"
            if inst.get("days") is not None
            else ""
        )
        lines.append(
            Block(
                "finding",
                items=[
                    "info",
                    f"{name}: memory {fmt_bytes(s[0]['memory_bytes'])} -> "
                    f"{fmt_bytes(s[-1]['memory_bytes'])}, keys {fmt_int(s[0]['keys'])} -> "
                    f"{fmt_int(s[-1]['keys'])} over {len(s)} snapshots{span} "
                    f"({fmt_per_day_bytes(inst.get('memory_per_day'))})",
                    f"see Instance {name}",
                ],
            )
        )
        growing = [f for f in inst["families"] if (f.get("memory_per_day") or 0) > 0]
        for f in growing[:TREND_VERDICT_FAMILIES]:
            lines.append(
                Block(
                    "finding",
                    items=[
                        "info",
                        f"{name}: {fmt_key(f['pattern'], 40)} grows "
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


def trend_document(t: dict) -> list[Block]:
    """The verdict, then one section per instance."""
    return trend_verdict(t) + trend_sections(t)


def trend_sections(t: dict) -> list[Block]:
    blocks: list[Block] = []
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
        if inst.get("days") is not None:
            blocks.append(
                Block(
                    "kv",
                    items=[
                        (
                            "Span",
                            f"{fmt_duration_ms(inst['days'] * 86400000)} over "
                            f"{len(snaps)} snapshots",
                        ),
                        ("Memory growth", fmt_per_day_bytes(inst.get("memory_per_day"))),
                        (
                            "Key growth",
                            "-"
                            if inst.get("keys_per_day") is None
                            else f"{inst['keys_per_day']:+,.1f}/d",
                        ),
                    ],
                )
            )
        ids = [s["snapshot_id"] for s in snaps]
        shown = ids[-6:]  # the last snapshots fit a terminal; JSON has all of them
        headers = ["family"] + [f"#{i} memory" for i in shown] + ["keys now", "per day", "growth"]
        rows = []
        for fam in inst["families"]:
            by = {p["snapshot_id"]: p for p in fam["points"]}
            rows.append(
                [fmt_key(fam["pattern"])]
                + [fmt_bytes(by[i]["memory_bytes"]) if i in by else "-" for i in shown]
                + [
                    fmt_int(fam["last_keys"]),
                    fmt_per_day_bytes(fam["memory_per_day"]),
                    fmt_growth(fam["memory_growth"]),
                ]
            )
        blocks.append(
            table(
                "Families growing fastest (memory per day, least squares over the snapshots)",
                headers,
                rows,
                range(1, len(headers)),
            )
        )
    if not t["instances"]:
        blocks.append(Block("note", "The database holds no snapshot."))
    return blocks


def render_trend(t: dict, fmt: str) -> str | None:
    if fmt == "json":
        return render_json(t)
    if fmt == "markdown":
        return draw_markdown(trend_document(t), "rdbscan trend")
    draw_text(trend_document(t))
    return None
