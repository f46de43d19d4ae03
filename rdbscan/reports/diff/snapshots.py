"""The snapshots a diff compares (docs/diff.md): a snapshot is the dumps of one `rdbscan load`
(one server, or the shards of a cluster), taken at one time (dumps.snapshot_ms: aux ctime, else
the file's modification time); a database loaded night after night (`load --instance`) holds
many, picked by id or time."""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field

from ...db.snapshot import snapshot_ms_of
from ...errors import EXIT_USAGE
from ..format import plain
from .data import SideData


class DiffError(ValueError):
    """A diff that cannot be made as asked (one line for the user), and its exit code: a usage
    mistake, or EXIT_INPUT for an input that does not exist or cannot be used."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


@dataclass
class Snapshot:
    """One snapshot in one database: the dumps that make it up and when it was taken."""

    database: str
    snapshot_id: int
    instance: str | None
    dump_ids: list[int]
    snapshot_ms: int
    snapshot_source: str
    paths: list[str] = field(default_factory=list)
    keys: int = 0
    used_mem: int | None = None
    complete: bool = True
    server: str | None = None
    server_version: str | None = None
    rdb_version: int | None = None
    label: str = ""

    def describe(self) -> SideData:
        """The snapshot as the diff's `old` and `new` (docs/diff.md)."""
        return plain(
            {
                "database": self.database,
                "instance": self.instance,
                "snapshot_id": self.snapshot_id,
                "dump_ids": self.dump_ids,
                "paths": self.paths,
                "snapshot_ms": self.snapshot_ms,
                "snapshot_time": _iso(self.snapshot_ms),
                "snapshot_source": self.snapshot_source,
                "keys": self.keys,
                "used_mem": self.used_mem,
                "server": self.server,
                "server_version": self.server_version,
                "rdb_version": self.rdb_version,
                "complete": self.complete,
                "label": self.label,
            }
        )


def _iso(ms):
    if ms is None:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).isoformat()


# dumps columns a snapshot needs; databases written before `load --instance` lack the last four
_DUMP_COLUMNS = (
    "dump_id",
    "path",
    "ctime",
    "used_mem",
    "keys",
    "complete",
    "error",
    "checksum",
    "server",
    "server_version",
    "rdb_version",
    "instance",
    "snapshot_id",
    "snapshot_ms",
    "snapshot_source",
)


def read_dumps(con, catalog: str) -> list[dict]:
    """The dumps rows of an attached rdbscan database (snapshot columns NULL when it predates them)."""
    have = {
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_catalog = ? AND table_name = 'dumps'",
            [catalog],
        ).fetchall()
    }
    cols = ", ".join(c if c in have else f"NULL AS {c}" for c in _DUMP_COLUMNS)
    cur = con.execute(f"SELECT {cols} FROM {catalog}.dumps ORDER BY dump_id")
    return [dict(zip(_DUMP_COLUMNS, r)) for r in cur.fetchall()]


def group_snapshots(database: str, dumps: list[dict]) -> list[Snapshot]:
    """Dumps -> snapshots, oldest first.  A snapshot is the dumps of one load (snapshot_id);
    dumps loaded before snapshot ids existed are one snapshot together."""
    groups: dict[tuple, list[dict]] = {}
    for d in dumps:
        groups.setdefault((d["instance"], d["snapshot_id"]), []).append(d)
    out = []
    for (instance, sid), rows in groups.items():
        times = []
        for d in rows:
            if d["snapshot_ms"] is not None:
                times.append((d["snapshot_ms"], d["snapshot_source"]))
            else:
                times.append(snapshot_ms_of(d["ctime"], d["path"]))
        ms = min(t[0] for t in times)
        sources = sorted({t[1] for t in times})
        used = [d["used_mem"] for d in rows]
        first = max(rows, key=lambda d: d["rdb_version"] or 0)
        out.append(
            Snapshot(
                database=database,
                snapshot_id=sid if sid is not None else min(d["dump_id"] for d in rows),
                instance=instance,
                dump_ids=[d["dump_id"] for d in rows],
                snapshot_ms=ms,
                snapshot_source=",".join(sources),
                paths=[d["path"] for d in rows],
                keys=sum(d["keys"] or 0 for d in rows),
                used_mem=sum(used) if all(u is not None for u in used) else None,
                complete=all(d["complete"] is not False for d in rows),
                server=first["server"],
                server_version=first["server_version"],
                rdb_version=first["rdb_version"],
            )
        )
    out.sort(key=lambda s: (s.snapshot_ms or 0, s.snapshot_id))
    return out


_SPEC = re.compile(r"^(.*)#(\d+)$")


def split_spec(spec: str) -> tuple[str, int | None]:
    """'DB.duckdb#3' -> ('DB.duckdb', 3); a path that exists as given is taken whole."""
    m = _SPEC.match(spec)
    if m and not os.path.exists(spec):
        return m.group(1), int(m.group(2))
    return spec, None


def parse_when(text: str) -> int | float:
    """--from/--to: a snapshot id (an integer) or a time (ISO 8601 date or date and time, UTC
    unless it says otherwise), returned as epoch ms (a float, to tell it from an id)."""
    text = text.strip()
    if text.isdigit():
        return int(text)
    try:
        when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise DiffError(
            f"{text!r}: not a snapshot id or a time (e.g. 3, 2026-11-20, 2026-11-20T08:00)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=_dt.timezone.utc)
    return float(when.timestamp() * 1000)


def pick_snapshot(snaps: list[Snapshot], when: int | float, what: str) -> Snapshot:
    """By id, or the last snapshot taken at or before a time."""
    if isinstance(when, int):
        for s in snaps:
            if s.snapshot_id == when:
                return s
        raise DiffError(f"{what}: no snapshot with id {when} (ids: {_ids(snaps)})")
    before = [s for s in snaps if s.snapshot_ms is not None and s.snapshot_ms <= when]
    if not before:
        raise DiffError(
            f"{what}: no snapshot taken at or before {_iso(int(when))} (first: "
            f"{_iso(snaps[0].snapshot_ms) if snaps else 'none'})"
        )
    return before[-1]


def _ids(snaps: list[Snapshot]) -> str:
    return (
        ", ".join(f"{s.snapshot_id} ({_iso(s.snapshot_ms) or 'time unknown'})" for s in snaps)
        or "none"
    )


def instance_snapshots(
    snaps: list[Snapshot], instance: str | None, database: str
) -> list[Snapshot]:
    """The snapshots of one instance; with no instance given, the database must hold one."""
    names = sorted({s.instance for s in snaps}, key=lambda n: (n is not None, n or ""))
    if instance is not None:
        chosen = [s for s in snaps if s.instance == instance]
        if not chosen:
            raise DiffError(
                f"{database}: no snapshots of instance {instance!r} (instances: "
                f"{', '.join(str(n) for n in names) or 'none'})"
            )
        return chosen
    if len(names) > 1:
        raise DiffError(
            f"{database} holds snapshots of several instances "
            f"({', '.join(str(n) for n in names)}): pick one with --instance"
        )
    return snaps
