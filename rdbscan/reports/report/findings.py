"""The verdict first: a short list of findings ranked by impact, built from a report dict.

Every number here is read from a section of the report (which got it from SQL); this module only
chooses which facts are worth a line, ranks them and words them.  The same list is the JSON
report's `findings[]` and the first block of the text, markdown and HTML reports (docs/findings.md).

A finding: `id severity section memory_bytes keys message advice`.  Severity is `critical`
(damage, keys that block the server), `warning` (memory or load at stake that a change fixes) or
`info` (worth knowing).  Ranked by severity, then memory at stake, then keys affected.
"""

from __future__ import annotations

from ..format import fmt_bytes, fmt_int, fmt_key, fmt_time

MAX_FINDINGS = 10
SEVERITY_ORDER = {"critical": 0, "warning": 1, "info": 2}


def _finding(fid, severity, section, message, advice, memory=None, keys=None) -> dict:
    return {
        "id": fid,
        "severity": severity,
        "section": section,
        "memory_bytes": int(memory) if memory is not None else None,
        "keys": int(keys) if keys is not None else None,
        "message": message,
        "advice": advice,
    }


def _share(part, whole) -> str:
    if not whole or part is None:
        return ""
    return f" ({part / whole:.0%})"


def _examples(names, n=2) -> str:
    names = [fmt_key(x, 40) for x in names if x is not None][:n]
    return ", ".join(names) + (" ..." if names else "")


def build(report: dict, limit: int = MAX_FINDINGS) -> list[dict]:
    """The report's findings, most important first (at most `limit`)."""
    out: list[dict] = []
    o = report.get("overview") or {}
    total_mem = o.get("memory_bytes") or 0
    total_keys = o.get("keys") or 0

    # --- the dump itself ---------------------------------------------------------------------
    if o.get("complete") is False:
        out.append(
            _finding(
                "dump-incomplete",
                "critical",
                "overview",
                f"The dump could not be read to the end: the figures cover the "
                f"{fmt_int(total_keys)} keys read before the damage.",
                "take a new snapshot; do not restore this file",
                keys=total_keys,
            )
        )
    if "mismatch" in str(o.get("checksum") or ""):
        out.append(
            _finding(
                "checksum-mismatch",
                "critical",
                "overview",
                "The CRC64 checksum does not match: the file is damaged.",
                "do not restore it; take a new snapshot",
            )
        )

    # --- big keys -----------------------------------------------------------------------------
    b = report.get("big_keys")
    if b and b.get("keys"):
        crit = b.get("critical") or 0
        items = b.get("items") or []
        crit_items = [i for i in items if i.get("severity") == "critical"]
        if crit:
            mem = b.get("critical_memory_bytes")
            if mem is None:
                mem = sum(i.get("memory_bytes") or 0 for i in crit_items)
            out.append(
                _finding(
                    "big-keys-critical",
                    "critical",
                    "big_keys",
                    f"{fmt_int(crit)} critical big key{'s' if crit != 1 else ''} hold "
                    f"{fmt_bytes(mem)}{_share(mem, total_mem)}: "
                    f"{_examples(i['key'] for i in crit_items)}",
                    "split or UNLINK them; see Big keys",
                    memory=mem,
                    keys=crit,
                )
            )
        rest = b["keys"] - crit
        if rest > 0:
            mem = b.get("memory_bytes")
            if mem is None:
                mem = sum(
                    i.get("memory_bytes") or 0 for i in items if i.get("severity") != "critical"
                )
            elif b.get("critical_memory_bytes") is not None:
                mem = mem - b["critical_memory_bytes"]
            out.append(
                _finding(
                    "big-keys",
                    "warning",
                    "big_keys",
                    f"{fmt_int(rest)} big key{'s' if rest != 1 else ''} "
                    f"(over {fmt_bytes(b['thresholds']['string_bytes'])} or "
                    f"{fmt_int(b['thresholds']['collection_length'])} elements) hold "
                    f"{fmt_bytes(mem)}{_share(mem, total_mem)}: "
                    f"{_examples(i['key'] for i in items if i.get('severity') != 'critical')}",
                    "split large collections into buckets; delete with UNLINK; see Big keys",
                    memory=mem,
                    keys=rest,
                )
            )

    # --- TTL ----------------------------------------------------------------------------------
    t = report.get("ttl")
    if t:
        for f in [f for f in t.get("families") or [] if f.get("looks_ephemeral")][:2]:
            out.append(
                _finding(
                    "no-ttl-ephemeral",
                    "warning",
                    "ttl",
                    f"{fmt_key(f['pattern'], 50)}: {fmt_bytes(f['memory_without_ttl'])}, "
                    f"{fmt_int(f['keys_without_ttl'])} cache/session-like keys without TTL",
                    "set an expiry (SET ... EX, EXPIRE); see TTL",
                    memory=f["memory_without_ttl"],
                    keys=f["keys_without_ttl"],
                )
            )
        herd = (t.get("herd") or {}).get("seconds", []) + (t.get("herd") or {}).get("minutes", [])
        if herd:
            worst = min(herd, key=lambda h: h["log10_p_value"])  # the least plausible
            out.append(
                _finding(
                    "ttl-herd",
                    "warning",
                    "ttl",
                    f"{fmt_int(worst['keys'])} keys of {fmt_key(worst['pattern'], 50)} expire in the "
                    f"same {worst['granularity']} ({fmt_time(worst.get('moment_ms'))}), "
                    f"{worst['expected_keys']:.2g} expected; "
                    f"{len(herd)} bunched moment{'s' if len(herd) != 1 else ''} in all",
                    "add random jitter to TTLs; see TTL",
                    memory=worst.get("memory_bytes"),
                    keys=worst["keys"],
                )
            )
        if t.get("expired_at_snapshot"):
            out.append(
                _finding(
                    "expired-at-snapshot",
                    "info",
                    "ttl",
                    f"{fmt_int(t['expired_at_snapshot'])} keys were already expired at snapshot "
                    f"time ({fmt_bytes(t.get('memory_expired_at_snapshot'))})",
                    "active expiry is falling behind: raise hz or look for a blocked event loop",
                    memory=t.get("memory_expired_at_snapshot"),
                    keys=t["expired_at_snapshot"],
                )
            )
        share = t.get("memory_share_without_ttl") or 0
        if share >= 0.5 and t.get("memory_without_ttl"):
            out.append(
                _finding(
                    "no-ttl-share",
                    "info",
                    "ttl",
                    f"{share:.0%} of the memory ({fmt_bytes(t['memory_without_ttl'])}) is in keys "
                    f"without TTL ({fmt_int(t.get('keys_without_ttl'))} keys)",
                    "check that these keys are meant to live forever; see TTL",
                    memory=t["memory_without_ttl"],
                    keys=t.get("keys_without_ttl"),
                )
            )

    # --- encodings ----------------------------------------------------------------------------
    e = report.get("encodings")
    if e:
        c = e.get("candidates_total") or {}
        if c.get("keys"):
            out.append(
                _finding(
                    "encodings",
                    "warning",
                    "encodings",
                    f"{fmt_int(c['keys'])} key{'s are' if c['keys'] != 1 else ' is'} non-compact although small "
                    f"enough; about "
                    f"{fmt_bytes(c['savings_bytes'])} to save: "
                    f"{_examples(x['key'] for x in e.get('candidates') or [])}",
                    "rewrite them (DUMP + RESTORE REPLACE); see Compact encodings",
                    memory=c.get("savings_bytes"),
                    keys=c["keys"],
                )
            )
        s2h = e.get("strings_to_hashes") or []
        if s2h:
            saved = sum(s["savings_bytes"] or 0 for s in s2h)
            keys = sum(s["keys"] or 0 for s in s2h)
            out.append(
                _finding(
                    "strings-to-hashes",
                    "info",
                    "encodings",
                    f"{fmt_int(keys)} small string keys in {len(s2h)} "
                    f"famil{'ies' if len(s2h) != 1 else 'y'} (e.g. {fmt_key(s2h[0]['family'], 40)}) would "
                    f"save about {fmt_bytes(saved)} as hash fields",
                    f"HSET {fmt_key(s2h[0]['example_parent'], 40)} <field> <value>; see Compact encodings",
                    memory=saved,
                    keys=keys,
                )
            )

    # --- value design (rdbscan/reports/values.py) ---------------------------------------------
    out += _value_findings(report.get("values"))

    # --- key families ---------------------------------------------------------------------------
    p = report.get("patterns")
    if p and p.get("items"):
        top = p["items"][0]
        if top["pattern"] != "(other)" and (top.get("memory_share") or 0) >= 0.5:
            out.append(
                _finding(
                    "dominant-family",
                    "info",
                    "patterns",
                    f"One family, {fmt_key(top['pattern'], 50)}, holds {top['memory_share']:.0%} of the memory "
                    f"({fmt_bytes(top['memory_bytes'])}, {fmt_int(top['keys'])} keys)",
                    "start any clean-up or resizing there; see Key families",
                    memory=top["memory_bytes"],
                    keys=top["keys"],
                )
            )

    # --- cold keys ------------------------------------------------------------------------------
    c = report.get("cold")
    if c and c.get("available"):
        if c.get("policy") == "lru" and c.get("cold_idle_keys"):
            keys, mem = c["cold_idle_keys"], c.get("cold_idle_memory")
            what = f"idle for more than {c.get('idle_days'):g} days"
        elif c.get("policy") == "lfu" and c.get("cold_freq_keys"):
            keys, mem = c["cold_freq_keys"], c.get("cold_freq_memory")
            what = f"with an LFU counter <= {c.get('max_freq')}"
        else:
            keys = 0
        if keys:
            out.append(
                _finding(
                    "cold-keys",
                    "info",
                    "cold",
                    f"{fmt_int(keys)} keys {what} hold {fmt_bytes(mem)}{_share(mem, total_mem)}"
                    f"; {fmt_int(c.get('cold_without_ttl'))} of them without TTL",
                    "review them for deletion or give them an expiry; see Cold keys",
                    memory=mem,
                    keys=keys,
                )
            )

    # --- naming ---------------------------------------------------------------------------------
    n = report.get("naming")
    if n and n.get("keys"):
        broken = sorted(
            (r for r in n.get("rules") or [] if r.get("keys")), key=lambda r: -r["keys"]
        )
        names = ", ".join(f"{r['rule']} {fmt_int(r['keys'])}" for r in broken[:3])
        out.append(
            _finding(
                "naming",
                "info",
                "naming",
                f"{fmt_int(n['keys'])} keys break a naming rule ({names})",
                "rename at write time, or disable rules that do not apply; see Naming",
                memory=n.get("memory_bytes"),
                keys=n["keys"],
            )
        )

    # --- slots and streams ----------------------------------------------------------------------
    s = report.get("slots")
    if s and s.get("announced_mismatches"):
        out.append(
            _finding(
                "slot-count-mismatch",
                "critical",
                "slots",
                f"{fmt_int(s['announced_mismatches'])} slots hold a different number of keys "
                "than the dump announced",
                "the dump may be damaged or truncated; take a new snapshot",
            )
        )
    if (
        s
        and s.get("hottest")
        and s["hottest"][0].get("hashtags")
        and s["hottest"][0]["keys"] >= 10
        and (s["hottest"][0].get("key_share") or 0) >= 0.05
    ):
        h = s["hottest"][0]
        out.append(
            _finding(
                "hot-slot",
                "info",
                "slots",
                f"Slot {h['slot']} holds {fmt_int(h['keys'])} keys ({h['key_share']:.0%}) because of "
                f"hashtag {_examples(h['hashtags'], 1)}",
                "keep hashtags for multi-key operations; see Cluster slots",
                memory=h.get("memory_bytes"),
                keys=h["keys"],
            )
        )
    st = report.get("streams")
    if st:
        pel = [x for x in st.get("items") or [] if (x.get("pending") or 0) >= 1000]
        if pel:
            out.append(
                _finding(
                    "stream-pending",
                    "warning",
                    "streams",
                    f"Stream {fmt_key(pel[0]['key'], 50)} has {fmt_int(pel[0]['pending'])} pending entries",
                    "consumers do not XACK: claim (XAUTOCLAIM) or acknowledge them",
                    memory=pel[0].get("memory_bytes"),
                    keys=len(pel),
                )
            )

    out.sort(
        key=lambda f: (SEVERITY_ORDER[f["severity"]], -(f["memory_bytes"] or 0), -(f["keys"] or 0))
    )
    return out[:limit]


def _value_findings(v: dict | None) -> list[dict]:
    """Split keys that are big once joined, collections with big elements, compressible strings."""
    if not v:
        return []
    out = []
    sk, be, cp = v["split_keys"], v["big_elements"], v["compressible"]
    if sk["big_when_joined"]:
        first = next((r for r in sk["items"] if r["big_when_joined"]), None)
        out.append(
            _finding(
                "split-big-keys",
                "warning",
                "values",
                f"{fmt_int(sk['big_when_joined'])} key{'s' if sk['big_when_joined'] != 1 else ''} "
                "split into #N shards "
                f"{'are big keys' if sk['big_when_joined'] != 1 else 'is a big key'} once joined"
                + (
                    f" (e.g. {fmt_key(first['logical_key'], 40)}: {fmt_int(first['shards'])} shards, "
                    f"{fmt_int(first['length'])} elements)"
                    if first
                    else ""
                ),
                "reading every shard costs what one big key would; see Value design",
                memory=sk["big_when_joined_memory_bytes"],
                keys=sk["big_when_joined"],
            )
        )
    if be["keys"]:
        out.append(
            _finding(
                "big-elements",
                "info",
                "values",
                f"{fmt_int(be['keys'])} collection{'s hold' if be['keys'] != 1 else ' holds'} an "
                f"element over {fmt_bytes(be['threshold_bytes'])}: "
                f"{_examples(x['key'] for x in be['items'])}",
                "keep large payloads in their own string keys; see Value design",
                memory=be["memory_bytes"],
                keys=be["keys"],
            )
        )
    if cp["savings_bytes"]:
        out.append(
            _finding(
                "compressible-strings",
                "info",
                "values",
                f"Compressing the {fmt_int(cp['keys'])} strings over {fmt_bytes(cp['min_bytes'])} in "
                f"the client would save about {fmt_bytes(cp['savings_bytes'])} (LZF ratio "
                f"{cp['ratio']:g} in the RDB; most in {fmt_key(cp['families'][0]['pattern'], 40)})",
                "compress large values in the client (zstd, gzip); see Value design",
                memory=cp["savings_bytes"],
                keys=cp["keys"],
            )
        )
    return out
