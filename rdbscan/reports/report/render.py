"""The text, markdown and JSON reports.

`document(report)` lays the report out once as a list of blocks (rdbscan/reports/document.py:
headings, key/value lines, tables, advice); the text and markdown renderers only differ in how
they draw blocks.  JSON is the dict itself (docs/json.md).
"""

from __future__ import annotations

from ..document import Block, advice, draw_markdown, draw_text, render_json, table
from ..format import (
    fmt_bytes,
    fmt_db_key,
    fmt_duration_ms,
    fmt_int,
    fmt_key,
    fmt_list,
    fmt_pct,
    fmt_seconds,
    fmt_time,
)

__all__ = ["document", "render_json", "render_markdown", "render_text"]


def document(report: dict) -> list[Block]:
    out: list[Block] = _doc_findings(report) if "findings" in report else []
    for name, builder in (
        ("overview", _doc_overview),
        ("big_keys", _doc_big_keys),
        ("patterns", _doc_patterns),
        ("ttl", _doc_ttl),
        ("encodings", _doc_encodings),
        ("values", _doc_values),
        ("naming", _doc_naming),
        ("cold", _doc_cold),
        ("slots", _doc_slots),
        ("streams", _doc_streams),
        ("schema", _doc_schema),
        ("fail_on", _doc_fail_on),
    ):
        if name in report and (
            name != "overview"
            or "overview" in report.get("options", {}).get("sections", ["overview"])
        ):
            out.extend(builder(report[name], report))
    return out


def _doc_findings(report: dict) -> list[Block]:
    """One summary line, then the findings (docs/findings.md): the verdict before the sections."""
    o = report.get("overview") or {}
    dumps = o.get("dumps") or []
    who = f"{o.get('server') or '?'} {o.get('server_version') or ''}".strip()
    head = (
        f"{len(dumps)} dumps, " if len(dumps) > 1 else ""
    ) + f"{who}, {fmt_int(o.get('keys'))} keys, {fmt_bytes(o.get('memory_bytes'))} (estimate)"
    found = report.get("findings") or []
    blocks = [Block("section", f"Findings: {head}")]
    if not found:
        return blocks + [Block("note", "Nothing to report: no check found a problem.")]
    return blocks + [
        Block("finding", items=[f["severity"], f["message"], f["advice"]]) for f in found
    ]


def _doc_overview(o, report):
    blocks = [Block("section", "Overview")]
    dumps = o.get("dumps", [])
    speed = ""
    if o.get("parse_seconds"):
        speed = (
            f"{o['parse_seconds']:.2f} s ({fmt_bytes(o.get('bytes_per_second'))}/s, "
            f"{fmt_int(o.get('keys_per_second'))} keys/s)"
        )
    kv = [
        (
            "Server",
            f"{o.get('server') or '?'} {o.get('server_version') or '(version not recorded)'}",
        ),
        ("RDB version", str(o.get("rdb_version"))),
        (
            "Snapshot",
            f"{fmt_time(o.get('snapshot_time') or o.get('snapshot_ms'))}"
            f" ({o.get('snapshot_source') or '?'})",
        ),
        ("Keys", f"{fmt_int(o['keys'])} ({fmt_int(o.get('keys_with_ttl'))} with TTL)"),
        ("Memory (estimate)", fmt_bytes(o.get("memory_bytes"))),
        ("Memory model", (o.get("memory_model") or "-").removeprefix("memory model: ")),
        ("used-mem at save", fmt_bytes(o.get("used_mem")) if o.get("used_mem") else "-"),
        (
            "Gap to used-mem",
            "-"
            if o.get("used_mem_gap") is None
            else f"{fmt_bytes(o['used_mem_gap'])} not explained by the keys (estimate with keyspace "
            f"overhead {fmt_bytes(o.get('memory_total_bytes'))}; the rest is startup memory, "
            f"buffers, fragmentation)",
        ),
        ("Input", o.get("input") or "-"),
        ("Checksum", o.get("checksum") or "-"),
        (
            "Complete",
            (
                "NO: the dump is damaged, figures are partial"
                if not o.get("complete")
                else f"read to the end, but {fmt_int(o['skipped_keys'])} damaged keys left out "
                f"(--skip-bad)"
                if o.get("skipped_keys")
                else "yes"
            ),
        ),
        (
            "After the RDB",
            f"{fmt_int(o['tail_bytes'])} bytes not read" if o.get("tail_bytes") else "-",
        ),
        ("Parse", speed or "-"),
    ]
    if len(dumps) > 1:
        kv.insert(0, ("Dumps", str(len(dumps))))
    blocks.append(Block("kv", items=kv))
    if len(dumps) > 1:
        blocks.append(
            table(
                "Dumps",
                ["id", "path", "server", "rdb", "snapshot", "keys", "checksum", "complete"],
                [
                    [
                        str(d["dump_id"]),
                        fmt_key(d["path"], 50),
                        f"{d['server']} {d['server_version']}",
                        str(d["rdb_version"]),
                        fmt_time(d["snapshot_time"]),
                        fmt_int(d["keys"]),
                        d["checksum"] or "not reached",
                        "yes" if d["complete"] else "no",
                    ]
                    for d in dumps
                ],
                (5,),
            )
        )
    rest = o.get("dbs_not_listed") or {}
    more = (
        [
            [
                f"({fmt_int(rest['databases'])} more)",
                fmt_int(rest["keys"]),
                fmt_int(rest["keys_with_ttl"]),
                fmt_bytes(rest["memory_bytes"]),
            ]
        ]
        if rest.get("databases")
        else []
    )
    blocks.append(
        table(
            "Keys per database" + (" (most keys)" if more else ""),
            ["db", "keys", "with TTL", "memory"],
            [
                [
                    str(d["db"]),
                    fmt_int(d["keys"]),
                    fmt_int(d["keys_with_ttl"]),
                    fmt_bytes(d["memory_bytes"]),
                ]
                for d in o.get("dbs", [])
            ]
            + more,
            (0, 1, 2, 3),
        )
    )
    blocks.append(
        table(
            "Keys and memory by type and encoding",
            ["type", "encoding", "keys", "memory", "share"],
            [
                [
                    t["type"],
                    t["encoding"],
                    fmt_int(t["keys"]),
                    fmt_bytes(t["memory_bytes"]),
                    fmt_pct(t["memory_share"]),
                ]
                for t in o.get("types", [])
            ],
            (2, 3, 4),
        )
    )
    blocks += [Block("note", n) for n in o.get("notes", [])]
    return blocks + advice(o)


def _doc_big_keys(b, report):
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
    blocks.append(
        table(
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
    )
    if b["items"]:
        blocks.append(
            table(
                "Big keys, critical first",
                ["key", "type", "length", "memory", "severity", "TTL"],
                [
                    [
                        fmt_db_key(i),
                        i["type"],
                        fmt_int(i["length"]),
                        fmt_bytes(i["memory_bytes"]),
                        i["severity"],
                        "yes" if i["has_ttl"] else "",
                    ]
                    for i in b["items"]
                ],
                (2, 3),
            )
        )
    if b["top_by_memory"]:
        blocks.append(
            table(
                "Top keys by memory, per type",
                ["type", "#", "key", "encoding", "length", "memory"],
                [
                    [
                        r["type"],
                        str(r["rank"]),
                        fmt_db_key(r),
                        r["encoding"],
                        fmt_int(r["length"]),
                        (">= " if r.get("memory_is_lower_bound") else "")
                        + fmt_bytes(r["memory_bytes"]),
                    ]
                    for r in b["top_by_memory"]
                    if r["rank"] <= 3
                ],
                (1, 4, 5),
            )
        )
    if b["top_by_length"]:
        blocks.append(
            table(
                "Top collections by element count, per type",
                ["type", "#", "key", "length", "memory"],
                [
                    [
                        r["type"],
                        str(r["rank"]),
                        fmt_db_key(r),
                        fmt_int(r["length"]),
                        (">= " if r.get("memory_is_lower_bound") else "")
                        + fmt_bytes(r["memory_bytes"]),
                    ]
                    for r in b["top_by_length"]
                    if r["rank"] <= 3
                ],
                (1, 3, 4),
            )
        )
    return blocks + advice(b)


def _doc_patterns(p, report):
    blocks = [Block("section", "Key families")]
    blocks.append(
        Block(
            "note",
            f"{fmt_int(p['families'])} families; id-like segments (numbers, dates, UUIDs, "
            f"hex, random tokens) become {{id}}/{{date}}; delimiters {p['delimiters']!r}.",
        )
    )
    blocks.append(
        table(
            "Families by memory",
            ["family", "keys", "memory", "share", "types", "avg", "largest key", "TTL coverage"],
            [
                [
                    fmt_key(r["pattern"], 50)
                    + (f" ({r['families']} families)" if r["pattern"] == "(other)" else ""),
                    fmt_int(r["keys"]),
                    fmt_bytes(r["memory_bytes"]),
                    fmt_pct(r["memory_share"]),
                    ",".join(r["types"]),
                    fmt_bytes(r["avg_memory_bytes"]),
                    f"{fmt_key(r['largest_key'], 40)} ({fmt_bytes(r['largest_memory_bytes'])})",
                    fmt_pct(r["ttl_share"]),
                ]
                for r in p["items"]
            ],
            (1, 2, 3, 5, 7),
        )
    )
    if p.get("prefixes"):
        blocks.append(
            table(
                "Prefix rollup",
                ["depth", "prefix", "keys", "memory", "share", "TTL coverage"],
                [
                    [
                        str(r["depth"]),
                        fmt_key(r["prefix"], 50),
                        fmt_int(r["keys"]),
                        fmt_bytes(r["memory_bytes"]),
                        fmt_pct(r["memory_share"]),
                        fmt_pct(r["ttl_share"]),
                    ]
                    for r in p["prefixes"]
                ],
                (0, 2, 3, 4, 5),
            )
        )
    return blocks + advice(p)


def _doc_ttl(t, report):
    blocks = [Block("section", "TTL")]
    blocks.append(
        Block(
            "kv",
            items=[
                ("Measured from", f"{fmt_time(t.get('snapshot_ms'))} (snapshot time, not now)"),
                (
                    "Without TTL",
                    f"{fmt_int(t['keys_without_ttl'])} keys ({fmt_pct(t['key_share_without_ttl'])}), "
                    f"{fmt_bytes(t['memory_without_ttl'])} ({fmt_pct(t['memory_share_without_ttl'])} of memory)",
                ),
                ("With TTL", fmt_int(t["keys_with_ttl"])),
                (
                    "Expired at snapshot",
                    f"{fmt_int(t['expired_at_snapshot'])} keys ({fmt_bytes(t['memory_expired_at_snapshot'])})",
                ),
                ("Expiring within 1 h", fmt_int(t["expiring_within_1h"])),
                ("Hashes with field TTLs", fmt_int(t["hashes_with_field_ttl"])),
            ],
        )
    )
    if t["families"]:
        blocks.append(
            table(
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
        )
    herd = t["herd"]["seconds"] + t["herd"]["minutes"]
    if herd:
        blocks.append(
            table(
                "Expiries bunched in one second / minute (unlikely under uniform spreading)",
                ["moment", "per", "family", "keys", "expected", "x expected", "p"],
                [
                    [
                        fmt_time(h["moment_ms"]),
                        h["granularity"],
                        fmt_key(h["pattern"], 40),
                        fmt_int(h["keys"]),
                        f"{h['expected_keys']:.3g}",
                        f"{h['ratio_to_expected']:,.0f}",
                        f"{h['p_value']:.1e}" if h["p_value"] else f"1e{h['log10_p_value']:.0f}",
                    ]
                    for h in herd
                ],
                (3, 4, 5, 6),
            )
        )
    blocks.append(
        table(
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
    )
    return blocks + advice(t)


def _doc_encodings(e, report):
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
    if e["candidates"]:
        blocks.append(
            table(
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
                [
                    [
                        fmt_db_key(c),
                        c["type"],
                        c["encoding"],
                        c["target_encoding"],
                        fmt_int(c["length"]),
                        fmt_bytes(c["max_elem_bytes"]),
                        fmt_bytes(c["memory_bytes"]),
                        fmt_bytes(c["savings_bytes"]),
                    ]
                    for c in e["candidates"]
                ],
                (4, 5, 6, 7),
            )
        )
    if e["near_threshold"]:
        blocks.append(
            table(
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
                [
                    [
                        fmt_db_key(c),
                        c["type"],
                        fmt_int(c["length"]),
                        fmt_bytes(c["max_elem_bytes"]),
                        c["blocked_by"],
                        fmt_bytes(c["memory_bytes"]),
                        fmt_bytes(c["savings_bytes"]),
                    ]
                    for c in e["near_threshold"]
                ],
                (2, 3, 5, 6),
            )
        )
    if e["what_if"]:
        blocks.append(
            table(
                "What if thresholds were raised",
                ["type", "change", "keys convert", "saves ~"],
                [
                    [w["type"], w["change"], fmt_int(w["keys"]), fmt_bytes(w["savings_bytes"])]
                    for w in e["what_if"]
                ],
                (2, 3),
            )
        )
    if e["strings_to_hashes"]:
        blocks.append(
            table(
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
        )
    blocks.append(
        Block(
            "note",
            "Savings are estimates: listpack size from the serialized size and the longest "
            "element, memory from the 7.x MEMORY USAGE model.",
        )
    )
    return blocks + advice(e)


def _doc_values(v, report):
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
        blocks.append(
            table(
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
        )
    if be["items"]:
        blocks.append(
            table(
                f"Collections with an element over {fmt_bytes(be['threshold_bytes'])}",
                ["key", "type", "length", "longest element", "memory"],
                [
                    [
                        fmt_db_key(r),
                        r["type"],
                        fmt_int(r["length"]),
                        fmt_bytes(r["max_elem_bytes"]),
                        fmt_bytes(r["memory_bytes"]),
                    ]
                    for r in be["items"]
                ],
                (2, 3, 4),
            )
        )
    if cp["families"]:
        blocks.append(
            table(
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
        )
    return blocks + advice(v)


def _doc_naming(n, report):
    blocks = [Block("section", "Naming")]
    blocks.append(
        Block(
            "kv",
            items=[
                (
                    "Keys breaking a rule",
                    f"{fmt_int(n['keys'])} of {fmt_int(n['keys_checked'])} ({fmt_bytes(n['memory_bytes'])})",
                ),
                ("Disabled rules", ", ".join(n["config"]["disabled"]) or "none"),
            ],
        )
    )
    blocks.append(
        table(
            "Rules",
            ["rule", "checks", "keys", "memory", "examples"],
            [
                [
                    r["rule"],
                    r["description"],
                    fmt_int(r["keys"]),
                    fmt_bytes(r["memory_bytes"]),
                    fmt_list(r["examples"][:3], 30),
                ]
                for r in n["rules"]
            ],
            (2, 3),
        )
    )
    if n["families"]:
        blocks.append(
            table(
                "Families breaking rules",
                ["family", "rule", "keys", "memory", "example"],
                [
                    [
                        fmt_key(f["pattern"], 40),
                        f["rule"],
                        fmt_int(f["keys"]),
                        fmt_bytes(f["memory_bytes"]),
                        fmt_key(f["example"], 40),
                    ]
                    for f in n["families"]
                ],
                (2, 3),
            )
        )
    return blocks + advice(n)


def _doc_cold(c, report):
    blocks = [Block("section", "Cold keys")]
    if not c["available"]:
        return blocks + [Block("note", c["reason"])]
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
    blocks.append(
        table(
            "Coldest keys",
            ["key", "type", "memory", "idle", "LFU", "TTL"],
            [
                [
                    fmt_db_key(i),
                    i["type"],
                    fmt_bytes(i["memory_bytes"]),
                    fmt_seconds(i["idle_seconds"]),
                    "-" if i["lfu_freq"] is None else str(i["lfu_freq"]),
                    "yes" if i["has_ttl"] else "",
                ]
                for i in c["items"]
            ],
            (2, 3, 4),
        )
    )
    if c.get("hot"):
        blocks.append(
            table(
                "Hottest keys (LFU)",
                ["key", "type", "memory", "LFU", "TTL"],
                [
                    [
                        fmt_db_key(i),
                        i["type"],
                        fmt_bytes(i["memory_bytes"]),
                        str(i["lfu_freq"]),
                        "yes" if i["has_ttl"] else "",
                    ]
                    for i in c["hot"]
                ],
                (2, 3),
            )
        )
    if c.get("hot_families"):
        blocks.append(
            table(
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
        )
    return blocks + advice(c)


def _doc_slots(s, report):
    blocks = [Block("section", "Cluster slots")]
    if not s.get("announced_slots") and not s.get("hashtags"):
        # a standalone dump without hashtags: how it would spread over a cluster, in one line
        return blocks + [
            Block(
                "note",
                f"Standalone dump: its {fmt_int(s.get('keys'))} keys would use "
                f"{fmt_int(s.get('slots_used'))} of 16384 slots (at most "
                f"{fmt_int(s.get('max_keys_in_slot'))} keys in one); no hashtags.",
            )
        ]
    kv = [
        ("Slots used", f"{fmt_int(s.get('slots_used'))} of 16384"),
        (
            "Keys per used slot",
            f"average {s.get('avg_keys_per_slot') or 0:.1f}, max {fmt_int(s.get('max_keys_in_slot'))}",
        ),
    ]
    if s.get("announced_slots"):
        kv.append(
            (
                "Announced in dump",
                f"{fmt_int(s['announced_slots'])} slots, "
                f"{fmt_int(s['announced_mismatches'])} disagree with the keys read",
            )
        )
    blocks.append(Block("kv", items=kv))
    blocks.append(
        table(
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
    )
    blocks.append(
        table(
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
    )
    if s["hashtags"]:
        blocks.append(
            table(
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
        )
    return blocks + advice(s)


def _doc_streams(s, report):
    blocks = [Block("section", "Streams and hash field TTLs")]
    if not s["items"] and not s["hash_field_ttl"]:
        return blocks + [Block("note", "No streams and no hashes with field TTLs.")]
    if s["items"]:
        blocks.append(
            table(
                "Largest streams",
                ["stream", "entries", "memory", "groups", "consumers", "pending", "groups detail"],
                [
                    [
                        fmt_db_key(r),
                        fmt_int(r["length"]),
                        fmt_bytes(r["memory_bytes"]),
                        fmt_int(r["groups"]),
                        fmt_int(r["consumers"]),
                        fmt_int(r["pending"]),
                        fmt_list(r["group_details"][:3], 45),
                    ]
                    for r in s["items"]
                ],
                (1, 2, 3, 4, 5),
            )
        )
    else:
        blocks.append(Block("note", "No streams."))
    if s["hash_field_ttl"]:
        blocks.append(
            table(
                "Hashes with field TTLs",
                [
                    "key",
                    "encoding",
                    "fields",
                    "with TTL",
                    "first field expires",
                    "after snapshot",
                    "memory",
                ],
                [
                    [
                        fmt_db_key(r),
                        r["encoding"],
                        fmt_int(r["length"]),
                        fmt_int(r["fields_with_ttl"]),
                        fmt_time(r["min_field_expire_ms"]),
                        fmt_duration_ms(r["min_field_ttl_ms"]),
                        fmt_bytes(r["memory_bytes"]),
                    ]
                    for r in s["hash_field_ttl"]
                ],
                (2, 3, 5, 6),
            )
        )
    else:
        blocks.append(Block("note", "No hashes with field TTLs."))
    return blocks + advice(s)


def _doc_schema(s, report):
    return document_blocks(s, report)


def _doc_fail_on(f, report):
    blocks = [Block("section", "Checks (--fail-on)")]
    blocks.append(
        table(
            "",
            ["check", "measured", "threshold", "result"],
            [
                [
                    c["rule"],
                    f"{fmt_int(c['value'])} ({fmt_pct(c['share'])})"
                    if c["rule"] != "no-ttl-share"
                    else fmt_pct(c["share"]),
                    c["threshold"],
                    "FAIL" if c["failed"] else "ok",
                ]
                for c in f["checks"]
            ],
            (1, 2),
        )
    )
    return blocks


def render_markdown(report: dict) -> str:
    return draw_markdown(document(report), "rdbscan report")


def render_text(report: dict, console=None) -> None:
    """Print the report with rich to `console` (default: stdout)."""
    draw_text(document(report), console)


def document_blocks(s: dict, report: dict) -> list:
    """The Schema section of the text and markdown reports."""

    blocks = [Block("section", "Schema")]
    blocks.append(
        Block(
            "kv",
            items=[
                ("Schema file", f"{s['file']} ({s['families_declared']} families)"),
                (
                    "Keys documented",
                    f"{fmt_int(s['keys_documented'])} of {fmt_int(s['keys'])} "
                    f"({fmt_pct(s['memory_documented'] / s['memory_bytes'] if s['memory_bytes'] else 0)} "
                    "of the memory)",
                ),
                ("Violations", fmt_int(s["violations"])),
            ],
        )
    )
    blocks.append(
        table(
            "Checks",
            ["check", "counts", "count", "memory"],
            [
                [c["check"], c["description"], fmt_int(c["count"]), fmt_bytes(c["memory_bytes"])]
                for c in s["checks"]
            ],
            (2, 3),
        )
    )

    def shown(row, value):
        if value is None:
            return "-"
        if row["check"] in ("max-ttl", "ttl-none"):
            return fmt_duration_ms(value)
        if row["check"] in ("max-value-bytes", "max-memory", "max-family-memory"):
            return fmt_bytes(value)
        return fmt_int(value) if isinstance(value, int) else str(value)

    if s["items"]:
        blocks.append(
            table(
                "Breaks",
                ["check", "declared", "family", "keys", "memory", "found", "limit", "example"],
                [
                    [
                        r["check"],
                        fmt_key(r["pattern"], 30),
                        fmt_key(r["family"], 30),
                        fmt_int(r["keys"]),
                        fmt_bytes(r["memory_bytes"]),
                        r["found"] or shown(r, r["measured"]),
                        shown(r, r["declared"]) if r["check"] in _LIMIT else (r["declared"] or "-"),
                        fmt_key(r["example"], 30),
                    ]
                    for r in s["items"]
                ],
                (3, 4),
            )
        )
    return blocks + advice(s)


_LIMIT = {
    "max-ttl": "max_ttl_ms",
    "max-length": "max_length",
    "max-value-bytes": "max_value_bytes",
    "max-memory": "max_memory",
    "max-family-memory": "max_family_memory",
}
