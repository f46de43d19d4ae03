"""`rdbscan diff` as a library: what changed between two snapshots of a keyspace.

A snapshot is the dumps of one `rdbscan load` (one server, or the shards of a cluster), taken at
one time (dumps.snapshot_ms: aux ctime, else the file's modification time); docs/diff.md.  The
two snapshots of a diff come from dumps (loaded first into a database of their own) or from
databases rdbscan wrote.  Those databases are attached read-only to an in-memory DuckDB
connection, where the bundled SQL of diff/queries/ compares them; `build_diff` returns the JSON
contract (docs/diff.md) typed as data.DiffData, which render.py lays out as text or markdown.
Python here only finds the snapshots, picks parameters and evaluates --fail-on.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import cast

from ..engine.thresholds import BIG_KEY_DEFAULTS, SETTING_NAMES, set_query_params, thresholds_for
from .data import (
    BigKeyChange,
    Conversion,
    ConversionItem,
    DiffBody,
    DiffData,
    EncodingConversions,
    Families,
    FamilyChange,
    FamilyTtlChange,
    KeyChanges,
    KeyFamilyChanges,
    KeyGrower,
    LostExpiryFamily,
    TotalsAll,
    TotalsPart,
    TtlBucketChange,
    TtlChanges,
    TypeChange,
    TypePair,
)
from .fail_on import evaluate_fail_on
from .runner import DiffRunner, diff_queries
from .snapshots import DiffError, Snapshot, read_dumps
from .workspace import Workspace

DIFF_FORMAT = 1


@dataclass
class DiffOptions:
    top: int = 10
    delimiters: str = ":"
    config_path: str | None = None  # redis.conf with encoding thresholds
    settings: dict[str, str] = field(default_factory=dict)  # --set name=value
    big_keys: dict = field(default_factory=dict)  # overrides of BIG_KEY_DEFAULTS


def _side_view(ws: Workspace, catalog: str, side: str) -> str:
    return (
        f"SELECT '{side}' AS side, k.dump_id, k.db, k.key, k.key_raw, "
        f"{ws.family_sql(catalog)} AS family, k.rdb_type, k.type, k.encoding, "
        f"k.length, k.max_elem_bytes, k.serialized_bytes, k.memory_bytes, k.expire_at_ms, "
        f"k.int_members, s.snapshot_ms FROM {catalog}.keys AS k "
        f"JOIN dsnap AS s ON s.side = '{side}' AND s.dump_id = k.dump_id"
    )


def _create_sides(ws: Workspace, old: Snapshot, new: Snapshot) -> None:
    """TEMP TABLE dsnap (one row per dump of each side) and TEMP VIEW dsrc (their keys)."""
    con = ws.con
    con.execute(
        "CREATE OR REPLACE TEMP TABLE dsnap (side VARCHAR, dump_id INTEGER, snapshot_ms BIGINT, "
        "snapshot_source VARCHAR, used_mem BIGINT)"
    )
    rows = []
    for side, snap in (("old", old), ("new", new)):
        dumps = {d["dump_id"]: d for d in read_dumps(con, ws.attach(snap.database))}
        for did in snap.dump_ids:
            d = dumps[did]
            # every dump of a snapshot is measured from the snapshot's time (the shards of a
            # cluster are saved seconds apart)
            rows.append((side, did, snap.snapshot_ms, snap.snapshot_source, d["used_mem"]))
    con.executemany("INSERT INTO dsnap VALUES (?, ?, ?, ?, ?)", rows)  # one row per dump: a handful
    con.execute(
        "CREATE OR REPLACE TEMP VIEW dsrc AS "
        + _side_view(ws, ws.attach(old.database), "old")
        + " UNION ALL "
        + _side_view(ws, ws.attach(new.database), "new")
    )


def query_values(old: Snapshot, new: Snapshot, options: DiffOptions) -> tuple[dict, dict]:
    """Parameter values (thresholds of the new snapshot's server, --config, --set) and where the
    encoding thresholds came from."""
    return _values(options, new.server, new.server_version, new.rdb_version)


def check_options(options: DiffOptions) -> None:
    """Raise DiffError (or ValueError) for a --set or --config the diff cannot use, before any
    dump is read: names and values do not depend on the snapshots' server."""
    _values(options, None, None, None)


def _values(
    options: DiffOptions, server: str | None, version: str | None, rdb_version: int | None
) -> tuple[dict, dict]:
    thresholds, sources, _, rest = thresholds_for(
        server, version, rdb_version, options.config_path, options.settings
    )
    big = {**BIG_KEY_DEFAULTS, **options.big_keys}
    values = {"delimiters": options.delimiters, "top": options.top, **big, **thresholds}
    queries = diff_queries(include_base=True).values()
    for name in set_query_params(values, big, rest, queries):
        raise DiffError(f"--set {name}: not a compact-encoding setting or diff query parameter")
    return values, {"sources": sources, "big": big}


def build_diff(
    ws: Workspace,
    old: Snapshot,
    new: Snapshot,
    options: DiffOptions | None = None,
    fail_on: list[tuple[str, str]] | None = None,
) -> DiffData:
    """Run every part of the diff and return the diff (the `--format json` object)."""
    options = options or DiffOptions()
    started = time.perf_counter()
    old, new, reordered = in_time_order(old, new)
    values, meta = query_values(old, new, options)
    _create_sides(ws, old, new)
    run = DiffRunner(ws.con, values)
    run.prepare()
    span = ws.con.execute("SELECT days FROM dspan").fetchone()
    totals = run.rows("totals")
    overall = cast(TotalsAll, next(t for t in totals if t["scope"] == "all"))
    body: DiffBody = {
        "rdbscan_diff": DIFF_FORMAT,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "options": {"top": options.top, "delimiters": options.delimiters},
        "old": old.describe(),
        "new": new.describe(),
        "reordered": reordered,
        # not rounded: a few seconds between test snapshots are a few 1e-5 days
        "interval_seconds": (new.snapshot_ms - old.snapshot_ms) / 1000
        if span[0] is not None
        else None,
        "interval_days": float(span[0]) if span[0] is not None else None,
        "totals": {
            "all": overall,
            "by_db": [cast(TotalsPart, t) for t in totals if t["scope"] == "db"],
            "by_type": [cast(TotalsPart, t) for t in totals if t["scope"] == "type"],
        },
        "families": _families(run),
        "keys": _keys(run, values, meta, overall),
        "ttl": cast(
            TtlChanges,
            {
                **run.one("ttl_summary"),
                "lost_expiry_families": cast(list[LostExpiryFamily], run.rows("ttl_lost")),
                "distribution": cast(list[TtlBucketChange], run.rows("ttl_distribution")),
            },
        ),
    }
    if fail_on:
        checks = evaluate_fail_on(run, body, fail_on)
        return {**body, "fail_on": checks, "diff_seconds": _since(started)}
    return {**body, "diff_seconds": _since(started)}


def _since(started: float) -> float:
    return round(time.perf_counter() - started, 3)


def in_time_order(old: Snapshot, new: Snapshot) -> tuple[Snapshot, Snapshot, bool]:
    """The two snapshots oldest first, and whether they were given the other way round: a diff
    always runs forward in time (docs/diff.md), so that a change, an interval and a growth per
    day keep their sign whatever order the command line named them in.  A snapshot whose time
    is only the time of its load has no order: it is left where it was given."""
    sources = old.snapshot_source.split(",") + new.snapshot_source.split(",")
    timed = "now" not in sources  # (db/snapshot.py SOURCES: `now` is the time of the load)
    if timed and new.snapshot_ms < old.snapshot_ms:
        return new, old, True
    return old, new, False


def _families(run: DiffRunner) -> Families:
    """Families new, vanished, and those whose memory or expiry changed most."""
    families = run.rows("families")

    def total(name: str) -> int:  # every row carries them; no row: no family on either side
        return families[0][name] if families else 0

    return {
        "total": total("total_families"),
        "new": total("new_families"),
        "vanished": total("vanished_families"),
        "items": [
            cast(FamilyChange, _drop(f, "total_families", "new_families", "vanished_families"))
            for f in families
        ],
        "ttl_changes": cast(list[FamilyTtlChange], run.rows("family_ttl")),
    }


def _keys(run: DiffRunner, values: dict, meta: dict, overall: TotalsAll) -> KeyChanges:
    """Keys added, removed and changed; the keys that grew most, big keys, type changes and
    encoding conversions."""
    keys = run.rows("keys")
    # every row carries the totals; without any family, the one row has pattern NULL
    key_totals = keys[0]
    by_family = [
        cast(KeyFamilyChanges, _drop(r, "total_added", "total_removed", "total_changed"))
        for r in keys
        if r["pattern"] is not None
    ]
    big = run.rows("big_keys")
    big_totals = {
        k: (big[0][k] if big else 0) for k in ("total_new", "total_past_critical", "total_gone")
    }
    types = run.rows("type_changes")
    enc = run.rows("encodings")
    added = key_totals["total_added"]
    changed = key_totals["total_changed"]
    return {
        "added": added,
        "removed": key_totals["total_removed"],
        "changed": changed,
        "unchanged": overall["new_keys"] - added - changed,
        "by_family": by_family,
        "top_growers": cast(list[KeyGrower], run.rows("top_growers")),
        "big_keys": {
            "thresholds": meta["big"],
            "new": big_totals["total_new"],
            "past_critical": big_totals["total_past_critical"],
            "gone": big_totals["total_gone"],
            "items": [
                cast(BigKeyChange, _drop(b, "total_new", "total_past_critical", "total_gone"))
                for b in big
            ],
        },
        "type_changes": {
            "total": types[0]["total"] if types else 0,
            "pairs": cast(list[TypePair], types[0]["pairs"] if types else []),
            "items": [cast(TypeChange, _drop(t, "total", "pairs")) for t in types],
        },
        "encoding_conversions": _conversions(enc, values, meta),
    }


def _conversions(enc: list[dict], values: dict, meta: dict) -> EncodingConversions:
    """The encoding conversions (queries/encodings.sql: every row carries the totals), with the
    thresholds of the new snapshot's server and where they came from."""
    return {
        "thresholds": {name: values[p] for p, name in SETTING_NAMES.items() if p in values},
        "threshold_sources": {SETTING_NAMES[p]: src for p, src in meta["sources"].items()},
        "total": enc[0]["total"] if enc else 0,
        "conversions": cast(list[Conversion], enc[0]["conversions"] if enc else []),
        "items": [cast(ConversionItem, _drop(e, "total", "conversions")) for e in enc],
    }


def _drop(row: dict, *names: str) -> dict:
    return {k: v for k, v in row.items() if k not in names}
