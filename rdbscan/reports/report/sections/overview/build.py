"""The overview section: dumps, databases, types, memory against used_mem, what the figures cover."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from ....engine.relations import left_out_snapshots
from ....format import fmt_bytes

if TYPE_CHECKING:
    from ....engine.relations import Runner


class DatabasesNotListed(TypedDict):
    databases: int
    keys: int
    keys_with_ttl: int
    memory_bytes: int


class _Snapshot(TypedDict):
    """The dumps' server, snapshot and checksum, as one figure each (_snapshot)."""

    rdb_version: int | None
    server: str | None
    server_version: str | None
    snapshot_time: str | None
    snapshot_ms: int | None
    snapshot_source: str | None
    checksum: str | None
    complete: bool
    stopped_by: str | None
    newer_than_rdbscan: bool
    hash_templates: int | None
    hash_template_bytes: int | None


class _Speed(TypedDict):
    """How fast the dumps were read (_speed)."""

    parse_seconds: float | None
    bytes_per_second: int | None
    keys_per_second: int | None


class OverviewData(_Snapshot, _Speed):
    """The `overview` object (docs/json.md): with the snapshot and speed fields of its bases."""

    keys: int
    keys_by_db: dict[str, int]
    databases: int
    keys_with_ttl: int
    memory_bytes: int
    used_mem: int | None
    memory_vs_used_mem: float | None
    memory_total_bytes: int | None
    used_mem_gap: int | None
    memory_model: str | None
    filter: dict | None
    skipped_keys: int
    tail_bytes: int
    input: str | None
    dumps: list[dict]
    dbs: list[dict]
    dbs_not_listed: DatabasesNotListed
    types: list[dict]
    notes: list[str]
    advice: list[str]


def _same_or_max(items: list, key: str):
    vals = [d.get(key) for d in items if d.get(key) is not None]
    if not vals:
        return None
    return vals[0] if len(set(map(str, vals))) == 1 else max(vals)


def build(run: Runner, options, meta: dict) -> OverviewData:
    """The overview object (docs/json.md) from the overview queries: totals over every
    database, the dumps' server and snapshot as one (_snapshot), notes and advice on what the
    figures do not say by themselves."""
    dumps = run.rows("overview_dumps")
    dbs = run.rows("overview_dbs")
    types = run.rows("overview_types")
    # overview_dbs lists the `top` databases with most keys; every row carries the totals
    tot = dict(dbs[0]) if dbs else {}
    for d in dbs:
        for k in ("databases", "all_keys", "all_keys_with_ttl", "all_memory_bytes"):
            d.pop(k, None)
    keys = tot.get("all_keys") or 0
    memory = tot.get("all_memory_bytes") or 0
    sources = {d["snapshot_source"] for d in dumps}
    used = sum(d["used_mem"] or 0 for d in dumps)
    total = sum(d["memory_total_bytes"] or 0 for d in dumps)
    gap = used - total if used and total and all(d["used_mem"] for d in dumps) else None
    models = sorted({d["memory_model"] for d in dumps if d.get("memory_model")})
    skipped = sum(d["skipped_keys"] or 0 for d in dumps)
    tail = sum(d["tail_bytes"] or 0 for d in dumps)
    notes = _notes(run, options, sources, types, models, tail)
    limited = [d for d in dumps if d["complete"] is False and d.get("error_kind") == "unsupported"]
    newer = [d for d in dumps if d.get("newer_than") is not None]
    notes += _newer_notes(dumps, limited, newer, sum(d.get("hash_templates") or 0 for d in dumps))
    from .....db.filters import filter_note, reported_filters

    filtered = reported_filters(run.con, [d["dump_id"] for d in dumps])
    notes += [filter_note(filtered)] if filtered else []
    advice = _advice(dumps, skipped, limited)
    inputs = sorted(
        {"+".join(x for x in (d["compression"], d["framing"]) if x) or "rdb" for d in dumps}
    )
    return {
        "keys": keys,
        "keys_by_db": {str(d["db"]): d["keys"] for d in dbs},
        "databases": tot.get("databases") or 0,
        "keys_with_ttl": tot.get("all_keys_with_ttl") or 0,
        "memory_bytes": memory,
        "used_mem": used or None,
        "memory_vs_used_mem": round(memory / used, 4) if used else None,
        "memory_total_bytes": total or None,
        "used_mem_gap": gap,
        "memory_model": "; ".join(models) or None,
        **_snapshot(dumps, sources, limited, newer),
        "skipped_keys": skipped,
        "filter": filtered,
        "tail_bytes": tail,
        "input": ",".join(inputs) or None,
        **_speed(dumps, keys),
        "dumps": dumps,
        "dbs": dbs,
        "dbs_not_listed": _not_listed(tot, dbs, keys, memory),
        "types": types,
        "notes": notes,
        "advice": advice,
    }


def _snapshot(dumps: list[dict], sources: set, limited: list, newer: list) -> _Snapshot:
    """The dumps' server, snapshot and checksum as one figure each (the value they share, else
    the largest), and whether every dump was read to its end, else what stopped it."""
    templates = sum(d.get("hash_templates") or 0 for d in dumps)
    return {
        "rdb_version": _same_or_max(dumps, "rdb_version"),
        "server": _same_or_max(dumps, "server"),
        "server_version": _same_or_max(dumps, "server_version"),
        "snapshot_time": _same_or_max(dumps, "snapshot_time"),
        "snapshot_ms": _same_or_max(dumps, "snapshot_ms"),
        "snapshot_source": ",".join(sorted(sources)) or None,
        # (NULL: the parse stopped before the trailer)
        "checksum": ",".join(sorted({d["checksum"] or "not reached" for d in dumps})) or None,
        "complete": all(d["complete"] is not False for d in dumps),
        # Why a dump was not read to its end: "damage" (truncated, corrupt, not an RDB file) or
        # "rdbscan" (a limit of the tool: a dump newer than it); None when every dump was.
        "stopped_by": (
            "damage"
            if any(d["complete"] is False and d not in limited for d in dumps)
            else "rdbscan"
            if limited
            else None
        ),
        "newer_than_rdbscan": bool(newer),
        "hash_templates": templates or None,
        "hash_template_bytes": sum(d.get("hash_template_bytes") or 0 for d in dumps) or None,
    }


def _speed(dumps: list[dict], keys: int) -> _Speed:
    """How fast the dumps were read (None when no parse time was recorded)."""
    parse_seconds = sum(d["parse_seconds"] or 0 for d in dumps)
    bytes_read = sum(d["bytes_read"] or 0 for d in dumps)
    return {
        "parse_seconds": round(parse_seconds, 3) if parse_seconds else None,
        "bytes_per_second": round(bytes_read / parse_seconds) if parse_seconds else None,
        "keys_per_second": round(keys / parse_seconds) if parse_seconds else None,
    }


def _not_listed(tot: dict, dbs: list[dict], keys: int, memory: int) -> DatabasesNotListed:
    """The databases past the `top` listed, summed: the totals less the listed rows."""
    return {
        "databases": (tot.get("databases") or 0) - len(dbs),
        "keys": keys - sum(d["keys"] for d in dbs),
        "keys_with_ttl": (tot.get("all_keys_with_ttl") or 0) - sum(d["keys_with_ttl"] for d in dbs),
        "memory_bytes": memory - sum(d["memory_bytes"] or 0 for d in dbs),
    }


def _notes(run, options, sources: set, types: list, models: list, tail: int) -> list[str]:
    """What the figures do not say by themselves: no ctime, memory that is a lower bound, older
    snapshots left out, a server newer than every memory profile, bytes after the RDB."""
    notes = []
    if sources - {"ctime"}:
        notes.append(
            "Some dump has no aux ctime: TTLs are measured from the file's modification time "
            "(or now when the file is gone), not from the snapshot."
        )
    lower = [t for t in types if t.get("memory_lower_bound_keys")]
    if lower:
        notes.append(
            f"Memory of {sum(t['memory_lower_bound_keys'] for t in lower)} module key(s) "
            f"({', '.join(sorted({t['type'] for t in lower}))}; "
            f"{fmt_bytes(sum(t['memory_bytes'] or 0 for t in lower))}) is a lower bound: their "
            "serialized size, as rdbscan does not read these module types (docs/modules.md)."
        )
    for s in left_out_snapshots(run.con, options.dump_id):
        notes.append(
            f"The database holds {s['snapshots']} snapshots of instance {s['instance']}: the "
            f"figures are those of the latest (snapshot {s['reported']}), not their sum; "
            f"`--dump-id N` reports a dump of another, `rdbscan trend` and `rdbscan diff` "
            f"compare them."
        )
    notes += [m[0].upper() + m[1:] + "." for m in models if "(no exact profile)" in m]
    if tail:
        notes.append(
            f"{tail} bytes followed the RDB's end marker and were not read (an AOF tail or "
            f"other data after the snapshot)."
        )
    return notes


def _newer_notes(dumps: list, limited: list, newer: list, templates: int) -> list[str]:
    """Dumps newer than rdbscan read to their end, and Redis 8.10's hash templates."""
    notes = []
    if newer and not limited:
        notes.append(
            f"{', '.join(sorted({d['magic'] for d in newer}))} is newer than rdbscan knows: it "
            f"was read to its end, and the figures rest on the newest format rdbscan knows "
            f"(upgrade rdbscan for an exact reading)."
        )
    if templates:
        notes.append(
            f"{templates:,} hash templates share the field names of the hashes that use them: "
            f"{fmt_bytes(sum(d.get('hash_template_bytes') or 0 for d in dumps))} (estimate), "
            f"counted once and not in any key's memory (Redis 8.10, docs/memory-model.md)."
        )
    return notes


def _advice(dumps: list, skipped: int, limited: list) -> list[str]:
    """What to do: a damaged file is not restored; a dump newer than rdbscan needs a newer
    rdbscan, and its file is sound."""
    advice = []
    if any(d["checksum"] == "mismatch" for d in dumps):
        advice.append(
            "A checksum mismatch means the file is damaged: do not restore it; take a new snapshot."
        )
    if any(d["complete"] is False and d not in limited for d in dumps):
        advice.append(
            "The dump could not be read to the end: the figures cover only the keys before the damage."
        )
    if limited:
        advice.append(
            "rdbscan is older than the dump (or cannot read one of its records): the figures "
            "cover the keys before the first record it does not know. The file is not damaged; "
            "upgrade rdbscan to read all of it."
        )
    if skipped:
        advice.append(
            f"{skipped} damaged keys were left out (load --skip-bad): the figures do not cover them."
        )
    return advice


def by_dump(run: Runner, o: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it (the dump itself), from its
    `dump_lines` row: its keys, read to the end or not and why not, its checksum."""
    return {
        d: {
            "keys": r["keys"],
            "complete": r["complete"],
            "stopped_by": (
                None
                if r["complete"]
                else "rdbscan"
                if r["error_kind"] == "unsupported"
                else "damage"
            ),
            "checksum": r["checksum"] or "not reached",
        }
        for d, r in lines.items()
    }
