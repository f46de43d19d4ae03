"""`rdbscan diff` as a library: what changed between two snapshots of a keyspace.

A snapshot is the dumps of one `rdbscan load` (one server, or the shards of a cluster), taken at
one time (dumps.snapshot_ms: aux ctime, else the file's modification time); docs/diff.md.  The
two snapshots of a diff come from dumps (loaded first into a database of their own) or from
databases rdbscan wrote.  Those databases are attached read-only to an in-memory DuckDB
connection, where the bundled SQL of rdbscan/reports/queries/diff/ compares them; the dict `build_diff` returns
is the JSON contract (docs/diff.md), which rdbscan.reports.diff.render lays out as text or markdown.
Python here only finds the snapshots, picks parameters and evaluates --fail-on.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field

from ..engine.thresholds import BIG_KEY_DEFAULTS, SETTING_NAMES, set_query_params, thresholds_for
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


def _side_view(catalog: str, side: str) -> str:
    return (
        f"SELECT '{side}' AS side, k.dump_id, k.db, k.key, k.key_raw, k.family, k.rdb_type, k.type, k.encoding, "
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
        + _side_view(ws.attach(old.database), "old")
        + " UNION ALL "
        + _side_view(ws.attach(new.database), "new")
    )


def query_values(old: Snapshot, new: Snapshot, options: DiffOptions) -> tuple[dict, dict]:
    """Parameter values (thresholds of the new snapshot's server, --config, --set) and where the
    encoding thresholds came from."""
    thresholds, sources, _, rest = thresholds_for(
        new.server, new.server_version, new.rdb_version, options.config_path, options.settings
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
) -> dict:
    """Run every part of the diff and return the diff dict (the `--format json` object)."""
    options = options or DiffOptions()
    started = time.perf_counter()
    old, new, reordered = in_time_order(old, new)
    values, meta = query_values(old, new, options)
    _create_sides(ws, old, new)
    run = DiffRunner(ws.con, values)
    run.prepare()
    span = ws.con.execute("SELECT days FROM dspan").fetchone()
    totals = run.rows("totals")
    overall = next(t for t in totals if t["scope"] == "all")
    out: dict = {
        "rdbscan_diff": DIFF_FORMAT,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "options": {"top": options.top, "delimiters": options.delimiters},
        "old": old.describe() | {"label": old.label},
        "new": new.describe() | {"label": new.label},
        "reordered": reordered,
        # not rounded: a few seconds between test snapshots are a few 1e-5 days
        "interval_seconds": (new.snapshot_ms - old.snapshot_ms) / 1000
        if span[0] is not None
        else None,
        "interval_days": float(span[0]) if span[0] is not None else None,
        "totals": {
            "all": overall,
            "by_db": [t for t in totals if t["scope"] == "db"],
            "by_type": [t for t in totals if t["scope"] == "type"],
        },
        "families": _families(run),
        "keys": _keys(run, values, meta, overall),
        "ttl": {
            **run.one("ttl_summary"),
            "lost_expiry_families": run.rows("ttl_lost"),
            "distribution": run.rows("ttl_distribution"),
        },
    }
    if fail_on:
        out["fail_on"] = evaluate_fail_on(run, out, fail_on)
    out["diff_seconds"] = round(time.perf_counter() - started, 3)
    return out


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


def _families(run: DiffRunner) -> dict:
    """Families new, vanished, and those whose memory or expiry changed most."""
    families = run.rows("families")
    first = families[0] if families else {}
    return {
        "total": first.get("total_families", 0),
        "new": first.get("new_families", 0),
        "vanished": first.get("vanished_families", 0),
        "items": [
            _drop(f, "total_families", "new_families", "vanished_families") for f in families
        ],
        "ttl_changes": run.rows("family_ttl"),
    }


def _keys(run: DiffRunner, values: dict, meta: dict, overall: dict) -> dict:
    """Keys added, removed and changed; the keys that grew most, big keys, type changes and
    encoding conversions."""
    keys = run.rows("keys")
    key_totals = keys[0] if keys else {}
    by_family = [
        _drop(r, "total_added", "total_removed", "total_changed")
        for r in keys
        if r.get("pattern") is not None
    ]
    big = run.rows("big_keys")
    big_totals = {
        k: (big[0][k] if big else 0) for k in ("total_new", "total_past_critical", "total_gone")
    }
    types = run.rows("type_changes")
    enc = run.rows("encodings")
    added = key_totals.get("total_added", 0)
    changed = key_totals.get("total_changed", 0)
    return {
        "added": added,
        "removed": key_totals.get("total_removed", 0),
        "changed": changed,
        "unchanged": overall["new_keys"] - added - changed,
        "by_family": by_family,
        "top_growers": run.rows("top_growers"),
        "big_keys": {
            "thresholds": meta["big"],
            "new": big_totals["total_new"],
            "past_critical": big_totals["total_past_critical"],
            "gone": big_totals["total_gone"],
            "items": [_drop(b, "total_new", "total_past_critical", "total_gone") for b in big],
        },
        "type_changes": {
            "total": types[0]["total"] if types else 0,
            "pairs": types[0]["pairs"] if types else [],
            "items": [_drop(t, "total", "pairs") for t in types],
        },
        "encoding_conversions": {
            "thresholds": {name: values[p] for p, name in SETTING_NAMES.items() if p in values},
            "threshold_sources": {SETTING_NAMES[p]: src for p, src in meta["sources"].items()},
            "total": enc[0]["total"] if enc else 0,
            "conversions": enc[0]["conversions"] if enc else [],
            "items": [_drop(e, "total", "conversions") for e in enc],
        },
    }


def _drop(row: dict, *names: str) -> dict:
    return {k: v for k, v in row.items() if k not in names}
