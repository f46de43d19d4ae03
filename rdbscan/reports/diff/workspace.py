"""The workspace of a diff: an in-memory DuckDB connection with the databases of both sides
attached read-only, and the two snapshots the command line's arguments stand for."""

from __future__ import annotations

import os
import tempfile
import uuid

import duckdb

from ...db.connections import connect, memory_limit
from ...db.macros import create_macros
from ...db.parquet import is_database_path, is_dataset
from ...db.store import (
    SCHEMA_VERSION,
    family_again_sql,
    family_rule_is_older,
    is_database_file,
    recorded_family_rule,
)
from ...errors import EXIT_INPUT
from ..engine import querylib
from .snapshots import (
    DiffError,
    Snapshot,
    _ids,
    group_snapshots,
    instance_snapshots,
    parse_when,
    pick_snapshot,
    read_dumps,
    split_spec,
)


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
        self.stale_families: set[str] = set()  # catalogs whose keys.family an older rule made

    def attach(self, path: str) -> str:
        """Attach an rdbscan database once; returns its catalog name."""
        real = os.path.realpath(path)
        if real in self.catalogs:
            return self.catalogs[real]
        if is_dataset(path):  # a Parquet dataset (docs/fleet.md): its views, in a catalog
            from ..engine.dataset import attach_dataset

            name = f"rdb{len(self.catalogs) + 1}"
            attach_dataset(self.con, path, name)
            self.catalogs[real] = name  # its view works out older families itself
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
            if family_rule_is_older(recorded_family_rule(self.con, name)):
                self.stale_families.add(name)
        else:
            self.stale_families.add(name)
        self.catalogs[real] = name
        return name

    def family_sql(self, catalog: str, alias: str = "k") -> str:
        """The SQL of a key's family in `catalog` (its keys AS `alias`): keys.family, or for a
        database an older family rule wrote (store.FAMILY_RULE), the family again for the keys
        that rule would give another one (store.family_again_sql: an IPv4 address is {ip}), so
        that a diff of a database loaded before with a dump loaded now compares like with like.
        Attached read-only, the database cannot take the TEMP view of keys that open_database
        gives a report (one temporary schema for every catalog)."""
        return family_again_sql(alias) if catalog in self.stale_families else f"{alias}.family"

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


def is_database_spec(spec: str) -> bool:
    path, _ = split_spec(spec)
    return is_database_path(path)


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
