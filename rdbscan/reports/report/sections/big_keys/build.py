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


# the totals every row of big_keys carries (window functions), and their names in the object
TOTALS = {
    "total_keys": "keys",
    "total_critical": "critical",
    "total_with_ttl": "keys_with_ttl",
    "total_strings": "string_keys",
    "total_memory": "memory_bytes",
    "total_critical_memory": "critical_memory_bytes",
}


def _totals(items: list[dict]) -> dict:
    """The totals of big_keys' rows (0 without rows), taken off the rows."""
    totals = {name: items[0][col] if items else 0 for col, name in TOTALS.items()}
    for it in items:
        for col in TOTALS:
            it.pop(col, None)
    return totals


def build(run: Runner, options, meta: dict) -> BigKeysData:
    items = run.rows("big_keys")
    rules = run.rows("big_keys_summary")
    # the same rows either way (tests/test_report_fastpaths.py): per-type ORDER BY ... LIMIT
    # scans over a database's table, one grouped scan over a dataset's files
    top = run.rows("big_keys_top_grouped" if run.reads_files else "big_keys_top")
    t = _totals(items)
    total, critical, with_ttl = t["keys"], t["critical"], t["keys_with_ttl"]
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
        "string_keys": t["string_keys"],
        "memory_bytes": t["memory_bytes"],
        "critical_memory_bytes": t["critical_memory_bytes"],
        "lazyfree_lazy_expire": meta.get("lazyfree_lazy_expire"),
        "rules": rules,
        "items": items,
        "top_by_memory": [r for r in top if r["ranking"] == "memory"],
        "top_by_length": [r for r in top if r["ranking"] == "length"],
        "advice": advice,
    }


def by_dump(run: Runner, b: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: its big keys, critical or not, their
    memory, and the keys its report alone lists (big_keys_by_dump: big_keys' own SQL, ranked
    per dump), whose first are the examples its findings name."""
    items: dict[int, list[dict]] = {d: [] for d in lines}
    for r in run.rows("big_keys_by_dump"):
        if r["dump_id"] in items:
            items[r["dump_id"]].append(r)
    return {
        d: {**_totals(rows), "thresholds": b["thresholds"], "items": rows}
        for d, rows in items.items()
    }
