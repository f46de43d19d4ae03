"""`rdbscan trend` as a library: the families of each instance over the snapshots of one database.

The database holds snapshots written by `rdbscan load --instance NAME` (docs/diff.md); it is
attached read-only to an in-memory connection (workspace.Workspace), where the bundled
diff/queries/trend_*.sql compute keys and memory per snapshot and family and least-squares growth
per day.  `build_trend` returns the JSON contract, typed as data.TrendData.
"""

from __future__ import annotations

import datetime as _dt
import time
from typing import cast

from ..format import plain
from .runner import DiffRunner
from .snapshots import (
    DiffError,
    Snapshot,
    _iso,
    instance_snapshots,
    parse_when,
    pick_snapshot,
)
from .trend_data import TrendData, TrendFamily, TrendInstance, TrendSnapshot
from .workspace import Workspace

TREND_FORMAT = 1


def _window(snaps: list[Snapshot], from_: str | None, to: str | None) -> list[Snapshot]:
    """The snapshots from --from to --to (by id, or the last taken at or before a time)."""
    if not snaps:
        return snaps
    first = pick_snapshot(snaps, parse_when(from_), "--from") if from_ else snaps[0]
    last = pick_snapshot(snaps, parse_when(to), "--to") if to else snaps[-1]
    i, j = snaps.index(first), snaps.index(last)
    if i > j:
        raise DiffError("--from picks a snapshot taken after --to")
    return snaps[i : j + 1]


def build_trend(
    ws: Workspace,
    database: str,
    *,
    instance: str | None = None,
    top: int = 10,
    delimiters: str = ":",
    from_: str | None = None,
    to: str | None = None,
) -> TrendData:
    started = time.perf_counter()
    snaps = ws.snapshots(database)
    if instance is not None:
        snaps = instance_snapshots(snaps, instance, database)
    series: dict = {}
    for s in snaps:
        series.setdefault(s.instance, []).append(s)
    series = {name: _window(group, from_, to) for name, group in series.items()}
    names = sorted(series, key=lambda n: (n is not None, n or ""))
    rows = []
    for i, name in enumerate(names):
        group = series[name]
        t0 = min(s.snapshot_ms for s in group)
        for s in group:
            for did in s.dump_ids:
                rows.append((i, s.snapshot_id, did, s.snapshot_ms, (s.snapshot_ms - t0) / 86400000))
    con = ws.con
    con.execute(
        "CREATE OR REPLACE TEMP TABLE tsnap (series INTEGER, snapshot_id INTEGER, dump_id INTEGER, "
        "snapshot_ms BIGINT, days DOUBLE)"
    )
    if rows:
        con.executemany("INSERT INTO tsnap VALUES (?, ?, ?, ?, ?)", rows)  # one row per dump
    catalog = ws.attach(database)
    con.execute(
        f"CREATE OR REPLACE TEMP VIEW tsrc AS SELECT k.key, {ws.family_sql(catalog)} AS family, "
        f"k.memory_bytes, k.expire_at_ms, "
        f"t.series, t.snapshot_id, t.days FROM {catalog}.keys AS k JOIN tsnap AS t USING (dump_id)"
    )
    run = DiffRunner(con, {"delimiters": delimiters, "top": top}, base=("_tkeys", "_tfit"))
    per_snap = run.rows("trend_snapshots")
    families = run.rows("trend_families")
    instances = [
        _instance(name, series[name], i, per_snap, families, top) for i, name in enumerate(names)
    ]
    return {
        "rdbscan_trend": TREND_FORMAT,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "database": database,
        "options": {
            "instance": instance,
            "top": top,
            "delimiters": delimiters,
            "from": from_,
            "to": to,
        },
        "instances": instances,
        "trend_seconds": round(time.perf_counter() - started, 3),
    }


def _instance(
    name, group: list[Snapshot], i: int, per_snap: list[dict], families: list[dict], top: int
) -> TrendInstance:
    """One instance's snapshots (keys and memory of each), growth per day and families."""
    stats = {r["snapshot_id"]: r for r in per_snap if r["series"] == i}
    fams = [r for r in families if r["series"] == i]
    # every row carries the series' growth per day (queries/trend_snapshots.sql)
    first = next(iter(stats.values()), None)
    span = (group[-1].snapshot_ms - group[0].snapshot_ms) / 86400000 if group else None
    return {
        "instance": name,
        "snapshots": [_snapshot(s, stats[s.snapshot_id]) for s in group],
        "days": span,
        "memory_per_day": first["memory_per_day"] if first else None,
        "keys_per_day": first["keys_per_day"] if first else None,
        "families_total": fams[0]["families_total"] if fams else 0,
        "families": [_family(f) for f in fams if top == 0 or f["rank"] <= top],
        # the families that lose memory, fastest first: those gone by the last snapshot too
        "shrinking": [
            _family(f)
            for f in sorted(
                (f for f in fams if f["shrink_rank"] is not None),
                key=lambda f: f["shrink_rank"],
            )
            if top == 0 or f["shrink_rank"] <= top
        ],
    }


def _snapshot(s: Snapshot, stats: dict) -> TrendSnapshot:
    """One snapshot of an instance: its dumps, and its keys and memory (trend_snapshots)."""
    return plain(
        {
            "snapshot_id": s.snapshot_id,
            "snapshot_ms": s.snapshot_ms,
            "snapshot_time": _iso(s.snapshot_ms),
            "snapshot_source": s.snapshot_source,
            "dumps": len(s.dump_ids),
            "dump_ids": s.dump_ids,
            "paths": s.paths,
            "keys": stats["keys"],
            "keys_with_ttl": stats["keys_with_ttl"],
            "memory_bytes": stats["memory_bytes"],
            "used_mem": s.used_mem,
            "complete": s.complete,
        }
    )


def _family(f: dict) -> TrendFamily:
    out = {k: v for k, v in f.items() if k not in ("series", "families_total", "shrink_rank")}
    out["vanished"] = f["last_keys"] == 0
    return cast(TrendFamily, out)
