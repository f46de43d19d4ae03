"""The big-keys section: keys over the big-key thresholds, the top keys by memory and by length."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from ....engine.relations import Runner


class BigKeysData(TypedDict):
    """The `big_keys` object (docs/json.md)."""

    thresholds: dict[str, int]
    keys: int
    critical: int
    keys_with_ttl: int
    string_keys: int
    memory_bytes: int
    critical_memory_bytes: int
    lazyfree_lazy_expire: str | None
    rules: list[dict]
    items: list[dict]
    top_by_memory: list[dict]
    top_by_length: list[dict]
    advice: list[str]


def build(run: Runner, options, meta: dict) -> BigKeysData:
    items = run.rows("big_keys")
    rules = run.rows("big_keys_summary")
    # the same rows either way (tests/test_report_fastpaths.py): per-type ORDER BY ... LIMIT
    # scans over a database's table, one grouped scan over a dataset's files
    top = run.rows("big_keys_top_grouped" if run.reads_files else "big_keys_top")
    total = items[0]["total_keys"] if items else 0
    critical = items[0]["total_critical"] if items else 0
    with_ttl = items[0]["total_with_ttl"] if items else 0
    strings = items[0]["total_strings"] if items else 0
    memory = items[0]["total_memory"] if items else 0
    critical_memory = items[0]["total_critical_memory"] if items else 0
    for it in items:
        for k in (
            "total_keys",
            "total_critical",
            "total_with_ttl",
            "total_strings",
            "total_memory",
            "total_critical_memory",
        ):
            it.pop(k, None)
    advice = []
    if critical:
        advice.append(
            f"{critical} critical big key(s): split them (shard a collection by id range or hash "
            "bucket, or store large blobs outside Redis); they block the server on DEL, expiry "
            "and migration."
        )
    elif total:
        advice.append(
            "Big keys: split large collections into buckets and keep strings under 10 KB; "
            "delete them with UNLINK, not DEL."
        )
    if with_ttl and meta.get("lazyfree_lazy_expire") != "yes":
        advice.append(
            f"{with_ttl} big key(s) carry a TTL: their expiry frees them in one blocking step. "
            "Set `lazyfree-lazy-expire yes` or expire them in pieces."
        )
    return {
        "thresholds": meta["big"],
        "keys": total,
        "critical": critical,
        "keys_with_ttl": with_ttl,
        "string_keys": strings,
        "memory_bytes": memory,
        "critical_memory_bytes": critical_memory,
        "lazyfree_lazy_expire": meta.get("lazyfree_lazy_expire"),
        "rules": rules,
        "items": items,
        "top_by_memory": [r for r in top if r["ranking"] == "memory"],
        "top_by_length": [r for r in top if r["ranking"] == "length"],
        "advice": advice,
    }


def by_dump(run: Runner, b: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it, from its `dump_lines` row (the same
    tests as big_keys.sql): its big keys, critical or not, and their memory; no examples."""
    return {
        d: {
            "keys": r["big_critical"] + r["big_other"],
            "critical": r["big_critical"],
            "string_keys": r["big_strings"],
            "memory_bytes": r["big_critical_memory_bytes"] + r["big_other_memory_bytes"],
            "critical_memory_bytes": r["big_critical_memory_bytes"],
            "thresholds": b["thresholds"],
            "items": [],
        }
        for d, r in lines.items()
    }
