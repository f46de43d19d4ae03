"""`rdbscan diff` as a library: what changed between two snapshots of a keyspace.

A snapshot is the dumps of one `rdbscan load` (one server, or the shards of a cluster), taken at
one time (dumps.snapshot_ms: aux ctime, else the file's modification time); docs/diff.md.  The
two snapshots of a diff come from dumps (loaded first into a database of their own) or from
databases rdbscan wrote.  Those databases are attached read-only to an in-memory DuckDB
connection, where the bundled SQL of rdbscan/reports/queries/diff/ compares them; the dict `build_diff` returns
is the JSON contract (docs/diff.md), which rdbscan.reports.diff_render lays out as text or markdown.
Python here only finds the snapshots, picks parameters and evaluates --fail-on.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ..db.connections import connect, memory_limit
from ..db.macros import create_macros
from ..db.parquet import is_dataset
from ..db.sizes import parse_size
from ..db.store import SCHEMA_VERSION, is_database_file
from ..errors import EXIT_FINDINGS, EXIT_INPUT, EXIT_USAGE
from .engine import querylib
from .engine.thresholds import BIG_KEY_DEFAULTS, SETTING_NAMES, set_query_params, thresholds_for
from .format import plain

DIFF_FORMAT = 1


class DiffError(ValueError):
    """A diff that cannot be made as asked (one line for the user), and its exit code: a usage
    mistake, or EXIT_INPUT for an input that does not exist or cannot be used."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


def queries_dir() -> Path:
    return querylib.queries_dir() / "diff"


def diff_queries(include_base: bool = False) -> dict[str, querylib.Query]:
    out = {}
    for path in sorted(queries_dir().glob("*.sql")):
        if path.stem.startswith("_") and not include_base:
            continue
        q = querylib.parse_query(path)
        out[q.name] = q
    return out


# --- snapshots -------------------------------------------------------------------------------


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

    def describe(self) -> dict:
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
    from ..db.load import snapshot_ms_of

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


# --- the workspace: a connection with both sides attached ------------------------------------


class Workspace:
    """An in-memory DuckDB connection with rdbscan databases attached read-only."""

    def __init__(self):
        self.con = connect(":memory:")
        self.con.execute("SET enable_progress_bar = false")
        self.con.execute(f"SET memory_limit = '{memory_limit()}'")
        # Every part orders its rows itself (ORDER BY); without an insertion order to keep,
        # DuckDB's joins and CREATE TABLE AS hold less memory that cannot spill (docs/diff.md,
        # "Scale": an out-of-memory error at the limit with 20 M keys a side).
        self.con.execute("SET preserve_insertion_order = false")
        spill = os.path.join(
            tempfile.gettempdir(), f"rdbscan-diff-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp"
        )
        self.con.execute("SET temp_directory = " + querylib.sql_literal(spill))
        create_macros(self.con, temporary=True)
        self.catalogs: dict[str, str] = {}

    def attach(self, path: str) -> str:
        """Attach an rdbscan database once; returns its catalog name."""
        real = os.path.realpath(path)
        if real in self.catalogs:
            return self.catalogs[real]
        if is_dataset(path):  # a Parquet dataset (docs/fleet.md): its views, in a catalog
            from .engine.dataset import attach_dataset

            name = f"rdb{len(self.catalogs) + 1}"
            attach_dataset(self.con, path, name)
            self.catalogs[real] = name
            return name
        if not os.path.exists(path):
            raise DiffError(f"{path}: no such file", EXIT_INPUT)
        if not is_database_file(path):
            raise DiffError(f"{path}: not a DuckDB database", EXIT_INPUT)
        name = f"rdb{len(self.catalogs) + 1}"
        try:
            self.con.execute(f"ATTACH {querylib.sql_literal(path)} AS {name} (READ_ONLY)")
        except duckdb.Error as e:
            raise DiffError(f"{path}: cannot open as a DuckDB database: {e}", EXIT_INPUT) from None
        tables = {
            r[0]
            for r in self.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_catalog = ?", [name]
            ).fetchall()
        }
        if not {"keys", "dumps"} <= tables:
            raise DiffError(
                f"{path} is not an rdbscan database (no keys or dumps table)", EXIT_INPUT
            )
        if "rdbscan_meta" in tables:
            row = self.con.execute(
                f"SELECT value FROM {name}.rdbscan_meta WHERE name = 'schema_version'"
            ).fetchone()
            if row is not None and row[0] != str(SCHEMA_VERSION):
                raise DiffError(
                    f"{path}: written by an rdbscan with database schema {row[0]}, this one "
                    f"uses schema {SCHEMA_VERSION}: load the dumps into a new database file",
                    EXIT_INPUT,
                )
        self.catalogs[real] = name
        return name

    def snapshots(self, path: str) -> list[Snapshot]:
        return group_snapshots(path, read_dumps(self.con, self.attach(path)))

    def close(self) -> None:
        self.con.close()


def snapshot_of_database(ws: Workspace, spec: str) -> Snapshot:
    """The snapshot a database argument stands for: DB#N is dump N alone; DB holding one
    snapshot is that snapshot."""
    path, dump_id = split_spec(spec)
    snaps = ws.snapshots(path)
    if dump_id is not None:
        for s in snaps:
            if dump_id in s.dump_ids:
                i = s.dump_ids.index(dump_id)
                one = Snapshot(**{**s.__dict__, "dump_ids": [dump_id], "paths": [s.paths[i]]})
                return _refresh_single(ws, one)
        raise DiffError(f"{path}: no dump with id {dump_id}")
    if not snaps:
        raise DiffError(f"{path}: the database holds no dump")
    if len(snaps) > 1:
        raise DiffError(
            f"{path} holds {len(snaps)} snapshots ({_ids(snaps)}): give one dump as "
            f"{path}#N, or diff the database alone with --from/--to"
        )
    snaps[0].label = spec
    return snaps[0]


def snapshot_of_dumps(ws: Workspace, path: str, dump_ids: list[int], label: str) -> Snapshot:
    """The dumps `dump_ids` of a database as one snapshot (the side of a diff given as dumps)."""
    rows = [d for d in read_dumps(ws.con, ws.attach(path)) if d["dump_id"] in dump_ids]
    if not rows:
        raise DiffError(f"{label}: no dump was loaded")
    one = group_snapshots(path, [{**d, "snapshot_id": min(dump_ids)} for d in rows])
    if len(one) > 1:  # several instances cannot happen for dumps loaded by diff itself
        raise DiffError(f"{label}: the dumps belong to several instances")
    one[0].label = label
    return one[0]


def _refresh_single(ws: Workspace, snap: Snapshot) -> Snapshot:
    """A single dump picked out of a snapshot: its own time, keys and used-mem."""
    rows = [
        d for d in read_dumps(ws.con, ws.attach(snap.database)) if d["dump_id"] == snap.dump_ids[0]
    ]
    one = group_snapshots(snap.database, rows)[0]
    one.snapshot_id = snap.snapshot_id
    one.label = f"{snap.database}#{snap.dump_ids[0]}"
    return one


# --- running the diff ------------------------------------------------------------------------


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


BASE = ("_dkeys", "_dstats", "_dfamilies", "_dchanges")


class DiffRunner:
    """Runs the diff queries on one workspace with the diff's parameter values; the base
    relations are created before the first query (views with their parameters inlined, as
    relations.prepare does for the report)."""

    def __init__(self, con, values: dict, base: tuple[str, ...] = BASE):
        self.con = con
        self.values = values
        self.base = base
        self.queries = diff_queries(include_base=True)
        self.prepared = False

    def prepare(self) -> None:
        if self.prepared:
            return
        for name in self.base:
            q = self.queries[name]
            for statement in q.statements:
                if querylib.CREATES_VIEW.search(querylib.strip_comments(statement.sql)):
                    self.con.execute(querylib.inline_params(statement, self.values))
                else:
                    self.con.execute(statement.sql, querylib.bind(statement, self.values))
        self.prepared = True

    def rows(self, name: str, **overrides) -> list[dict]:
        self.prepare()
        return [
            plain(r)
            for r in querylib.run_dicts(self.con, self.queries[name], {**self.values, **overrides})
        ]

    def one(self, name: str, **overrides) -> dict:
        rows = self.rows(name, **overrides)
        return rows[0] if rows else {}


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
    values, meta = query_values(old, new, options)
    _create_sides(ws, old, new)
    run = DiffRunner(ws.con, values)
    run.prepare()
    span = ws.con.execute("SELECT days FROM dspan").fetchone()
    totals = run.rows("totals")
    overall = next(t for t in totals if t["scope"] == "all")
    families = run.rows("families")
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
    ttl = run.one("ttl_summary")
    fam_first = families[0] if families else {}
    added = key_totals.get("total_added", 0)
    changed = key_totals.get("total_changed", 0)
    out: dict = {
        "rdbscan_diff": DIFF_FORMAT,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "options": {"top": options.top, "delimiters": options.delimiters},
        "old": old.describe() | {"label": old.label},
        "new": new.describe() | {"label": new.label},
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
        "families": {
            "total": fam_first.get("total_families", 0),
            "new": fam_first.get("new_families", 0),
            "vanished": fam_first.get("vanished_families", 0),
            "items": [
                _drop(f, "total_families", "new_families", "vanished_families") for f in families
            ],
            "ttl_changes": run.rows("family_ttl"),
        },
        "keys": {
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
        },
        "ttl": {
            **ttl,
            "lost_expiry_families": run.rows("ttl_lost"),
            "distribution": run.rows("ttl_distribution"),
        },
    }
    if fail_on:
        out["fail_on"] = evaluate_fail_on(run, out, fail_on)
    out["diff_seconds"] = round(time.perf_counter() - started, 3)
    return out


def _drop(row: dict, *names: str) -> dict:
    return {k: v for k, v in row.items() if k not in names}


# --- --fail-on -------------------------------------------------------------------------------

FAIL_RULES = {
    # rule: (default threshold, description)
    "growth": ("20%", "growth of the keyspace's memory (N% of the old memory, or N bytes: 500MB)"),
    "family-growth": (
        "10%",
        "families that grew by more than N% of their old memory (families in "
        "both snapshots), or by more than N bytes (new families too)",
    ),
    "new-big-keys": (0, "keys that became big"),
    "lost-ttl": (0, "keys that lost their expiry"),
}


def parse_threshold(text: str) -> tuple[float, bool]:
    """'20%' -> (20.0, True); '500MB' -> (500e6, False); '3' -> (3.0, False)."""
    text = text.strip()
    if text.endswith("%"):
        try:
            return float(text[:-1]), True
        except ValueError:
            pass
    else:
        try:
            return float(parse_size(text)), False
        except ValueError:
            pass
    raise DiffError(
        f"--fail-on: bad threshold {text!r} (a number, a size like 500MB, or a percentage like 20%)"
    )


def parse_fail_on(spec: str | None) -> list[tuple[str, str]]:
    """'growth=20%,family-growth=10%,new-big-keys,lost-ttl=0' -> [(rule, threshold text)]."""
    out = []
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        rule, _, thr = item.partition("=")
        rule = rule.strip()
        if rule not in FAIL_RULES:
            raise DiffError(f"--fail-on: unknown rule {rule!r} (known: {', '.join(FAIL_RULES)})")
        thr = thr.strip() or str(FAIL_RULES[rule][0])
        value, pct = parse_threshold(thr)
        if pct and rule in ("new-big-keys", "lost-ttl"):
            raise DiffError(f"--fail-on: {rule} counts keys: give a number, not {thr!r}")
        out.append((rule, thr))
    return out


def evaluate_fail_on(run: DiffRunner, diff: dict, rules: list[tuple[str, str]]) -> dict:
    """Compare the diff with thresholds; `failed` when any check exceeds its threshold."""
    checks = []
    total = diff["totals"]["all"]
    for rule, thr_text in rules:
        thr, pct = parse_threshold(thr_text)
        offenders = None
        if rule == "growth":
            value = total["delta_memory_bytes"]
            measured = (total["memory_growth"] or 0) * 100 if pct else value
            if pct and total["old_memory_bytes"] == 0:
                measured = float("inf") if value > 0 else 0.0
        elif rule == "family-growth":
            items = run.rows("families", top=0)
            if pct:
                over = [
                    f
                    for f in items
                    if f["status"] != "new"
                    and f["old_memory_bytes"] > 0
                    and f["delta_memory_bytes"] * 100 > thr * f["old_memory_bytes"]
                ]
            else:
                over = [f for f in items if f["delta_memory_bytes"] > thr]
            value = measured = len(over)
            offenders = [f["pattern"] for f in over[:10]]
            thr = 0 if thr >= 0 else thr
        elif rule == "new-big-keys":
            value = measured = diff["keys"]["big_keys"]["new"]
        elif rule == "lost-ttl":
            value = measured = diff["ttl"]["lost_expiry"]
        else:  # pragma: no cover - parse_fail_on refuses it
            raise DiffError(f"--fail-on: unknown rule {rule!r}")
        check = {
            "rule": rule,
            "value": value,
            "threshold": thr_text,
            "failed": measured > thr,
            "description": FAIL_RULES[rule][1],
        }
        if rule == "growth":
            check["growth"] = total["memory_growth"]
        if offenders is not None:
            check["families"] = offenders
        checks.append(plain(check))
    failed = any(c["failed"] for c in checks)
    return {"checks": checks, "failed": failed, "exit_code": EXIT_FINDINGS if failed else 0}


# --- from the command line's arguments to two snapshots --------------------------------------


def is_database_spec(spec: str) -> bool:
    path, _ = split_spec(spec)
    return is_database_file(path) or is_dataset(path)


def resolve_side(ws: Workspace, specs: list[str], loaded: Snapshot | None, what: str) -> Snapshot:
    """A side given as databases (one, or DB#N) -> its snapshot; `loaded` when it was dumps."""
    if loaded is not None:
        return loaded
    if len(specs) != 1:
        raise DiffError(f"{what}: give one database (or DB#N), or dumps, not several databases")
    return snapshot_of_database(ws, specs[0])


def history_pair(
    ws: Workspace, database: str, instance: str | None, from_: str | None, to: str | None
) -> tuple[Snapshot, Snapshot]:
    """Two snapshots of one database (`rdbscan diff history.duckdb --from A --to B`); by default
    the last two of the instance."""
    snaps = instance_snapshots(ws.snapshots(database), instance, database)
    if len(snaps) < 2 and (from_ is None or to is None):
        raise DiffError(
            f"{database} holds {len(snaps)} snapshot(s) of this instance: a diff needs two "
            f"(load another with `rdbscan load --instance NAME DUMP -o {database}`)"
        )
    new = pick_snapshot(snaps, parse_when(to), "--to") if to else snaps[-1]
    if from_:
        old = pick_snapshot(snaps, parse_when(from_), "--from")
    else:
        earlier = [
            s for s in snaps if s is not new and (s.snapshot_ms or 0) <= (new.snapshot_ms or 0)
        ]
        if not earlier:
            raise DiffError(f"--to {to}: no earlier snapshot to compare with (ids: {_ids(snaps)})")
        old = earlier[-1]
    if old.snapshot_id == new.snapshot_id and old.instance == new.instance:
        raise DiffError(f"--from and --to pick the same snapshot ({old.snapshot_id})")
    for s in (old, new):
        s.label = f"{database} snapshot {s.snapshot_id}"
    return old, new
