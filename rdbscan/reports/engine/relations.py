"""The relations every report query reads: the dumps a report covers, their snapshot times
(rsnap), and the base relations of the `_*.sql` files (rkeys, rfamilies, ...), created once per
connection before the queries that read them; `Runner`, which runs bundled queries with one
report's parameter values."""

from __future__ import annotations

import functools
import re

from ...db.connections import with_room
from ...db.snapshot import snapshot_ms_of
from ..format import plain
from .querylib import (
    CREATES_VIEW,
    Query,
    bind,
    bundled_queries,
    inline_params,
    run_dicts,
    strip_comments,
)
from .thresholds import NEWEST_THRESHOLDS, dump_thresholds

_CREATES = re.compile(
    r"\bCREATE\s+(?:OR\s+REPLACE\s+)?TEMP(?:ORARY)?\s+(?:TABLE|VIEW)\s+(\w+)", re.I
)


@functools.cache
def base_relations() -> dict[str, str]:
    """Every base relation, a TEMP TABLE or VIEW that a bundled `_*.sql` file creates (rkeys,
    rfamilies, rnaming, ...), and the name of that file; in dependency order: a file's relations
    after those of the files it reads."""
    files = {
        name: strip_comments(q.sql)
        for name, q in bundled_queries(include_base=True).items()
        if name.startswith("_")
    }
    made = {rel: name for name, sql in files.items() for rel in _CREATES.findall(sql)}
    order: list[str] = []

    def visit(name: str, path: tuple[str, ...] = ()) -> None:
        if name in order:
            return
        if name in path:
            raise ValueError(f"base relations read each other: {' -> '.join(path + (name,))}")
        for rel, other in made.items():
            if other != name and re.search(rf"\b{rel}\b", files[name]):
                visit(other, path + (name,))
        order.append(name)

    for name in sorted(files):
        visit(name)
    return {rel: name for name in order for rel, other in made.items() if other == name}


# The dumps a report covers (docs/report.md, "What a report covers"): the one of --dump-id; else
# every dump loaded without --instance and, of each instance, its latest snapshot (by snapshot
# time, then id): a database of nightly snapshots (`load --instance`, for `trend`) is not summed.
REPORTED_DUMPS = """
SELECT d.dump_id FROM dumps AS d
WHERE CASE WHEN $dump_id <> 0 THEN d.dump_id = $dump_id
           ELSE d.instance IS NULL OR d.snapshot_id = (
               SELECT arg_max(l.snapshot_id, (coalesce(l.snapshot_time, TIMESTAMP '1970-01-01'),
                                              l.snapshot_id))
               FROM dumps AS l WHERE l.instance = d.instance) END
"""


def left_out_snapshots(con, dump_id: int = 0) -> list[dict]:
    """Per instance whose older snapshots the report leaves out: the instance, the snapshot
    reported and how many snapshots the database holds of it (nothing with --dump-id)."""
    if dump_id:
        return []
    rows = con.execute(
        f"""SELECT instance, count(DISTINCT snapshot_id) AS snapshots,
                   max(snapshot_id) FILTER (WHERE dump_id IN ({REPORTED_DUMPS})) AS reported
            FROM dumps WHERE instance IS NOT NULL GROUP BY instance
            HAVING count(DISTINCT snapshot_id) > 1 ORDER BY instance""",
        {"dump_id": 0},
    ).fetchall()
    return [dict(instance=i, snapshots=n, reported=r) for i, n, r in rows]


def create_snapshots(con, dump_id: int = 0) -> list[dict]:
    """TEMP TABLE rsnap(dump_id, snapshot_ms, snapshot_source): the dumps the report covers
    (REPORTED_DUMPS) and the time TTLs are measured from.

    db/snapshot.py: aux ctime when the dump has it; else the dump file's mtime; else now.
    Returns the rows.
    """
    rows = con.execute(
        f"SELECT dump_id, ctime, path FROM dumps WHERE dump_id IN ({REPORTED_DUMPS}) "
        f"ORDER BY dump_id",
        {"dump_id": dump_id},
    ).fetchall()
    snaps = [(did, *snapshot_ms_of(ctime, path)) for did, ctime, path in rows]
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rsnap (dump_id INTEGER, snapshot_ms BIGINT, snapshot_source VARCHAR)"
    )
    if snaps:
        con.executemany("INSERT INTO rsnap VALUES (?, ?, ?)", snaps)  # one row per dump: a handful
    return [dict(dump_id=d, snapshot_ms=s, snapshot_source=src) for d, s, src in snaps]


def snapshot_params(snaps: list[dict]) -> dict:
    """The reported dumps and their snapshot times as rkeys reads them, literals rather than a
    join with rsnap (_rkeys.sql): `first_dump`, and `snapshot_times` from it to the last dump
    reported (None for a dump between them that is not), so that a key's time is one index.
    A join with the one-row rsnap cost the report over `pop5m` 0.17 s of its 1.39 (every query
    probed it with every key), and made DuckDB's grouping of two million families need more
    than 48 MB (docs/benchmarks.md, "Two million families within 200 MB")."""
    if not snaps:
        return {"first_dump": 0, "snapshot_times": [0]}  # no dump has id 0: no key
    first = min(s["dump_id"] for s in snaps)
    times: list[int | None] = [None] * (max(s["dump_id"] for s in snaps) - first + 1)
    for s in snaps:
        times[s["dump_id"] - first] = s["snapshot_ms"]
    return {"first_dump": first, "snapshot_times": times}


# the columns of rservers beyond dump_id and the server: every threshold, then the field-TTL encoding
SERVER_COLUMNS = (*NEWEST_THRESHOLDS, "hash_field_ttl_encoding")


def threshold_overrides(values: dict) -> dict:
    """The thresholds that hold for every dump: `values["threshold_overrides"]` (a report:
    --config and --set), else the thresholds named in `values` (`rdbscan query --param`)."""
    if "threshold_overrides" in values:
        return dict(values["threshold_overrides"] or {})
    return {p: values[p] for p in NEWEST_THRESHOLDS if p in values}


def create_servers(con, values: dict) -> list[dict]:
    """TEMP TABLE rservers: one row per dump of rsnap, its server and the compact-encoding
    thresholds in force for it (its own server's defaults, then the overrides; docs/report.md,
    "Several dumps"): every rule that depends on a server reads it per dump.  Returns the rows."""
    overrides = threshold_overrides(values)
    rows = con.execute(
        "SELECT d.dump_id, d.server, d.server_version, d.rdb_version FROM dumps AS d "
        "JOIN rsnap USING (dump_id) ORDER BY d.dump_id"
    ).fetchall()
    out = [
        {
            "dump_id": did,
            "server": server,
            "server_version": version,
            **dump_thresholds(server, version, rdb, overrides),
        }
        for did, server, version, rdb in rows
    ]
    typed = {
        c: "VARCHAR" if isinstance(NEWEST_THRESHOLDS.get(c, ""), str) else "BIGINT"
        for c in SERVER_COLUMNS
    }
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rservers (dump_id INTEGER, server VARCHAR, "
        "server_version VARCHAR, " + ", ".join(f"{c} {t}" for c, t in typed.items()) + ")"
    )
    if out:
        con.executemany(
            f"INSERT INTO rservers VALUES ({', '.join('?' * (3 + len(SERVER_COLUMNS)))})",
            [[r[c] for c in ("dump_id", "server", "server_version", *SERVER_COLUMNS)] for r in out],
        )
    return out


def prepare(
    con, values: dict | None = None, needs: set[str] | None = None, created: set | None = None
) -> set:
    """Create the base relations (rsnap, rkeys, and any in `needs`) once per connection.

    rkeys is a view: each query reads from the `keys` table on disk and computes only the
    columns it uses, so no copy of the keyspace is held in memory between queries.  The other
    base relations are TEMP TABLEs: aggregates (rfamilies, rlimits, rslots, rhashtags) or the
    keys a check selects (rnaming, rcandidates)."""
    values = values or {}
    created = created if created is not None else set()
    if "rsnap" not in created:
        create_snapshots(con, int(values.get("dump_id", 0) or 0))
        create_servers(con, values)
        created.add("rsnap")
    if "rkeys" not in created:  # it reads the dumps rsnap holds as literals
        snaps = con.execute("SELECT dump_id, snapshot_ms FROM rsnap").fetchall()
        values = {**values, **snapshot_params([dict(dump_id=d, snapshot_ms=s) for d, s in snaps])}
    relations = base_relations()
    wanted = ["rkeys"] + [r for r in relations if needs and r in needs and r != "rkeys"]
    base = bundled_queries(include_base=True)
    for rel in wanted:
        if rel in created:
            continue
        q = base[relations[rel]]
        if CREATES_VIEW.search(strip_comments(q.sql)):
            con.execute(inline_params(q, values))
        else:
            for statement in q.statements:
                con.execute(statement.sql, bind(statement, values))
        # a file may create several relations (_rslots: rslots and rhashtags)
        created.update(r for r, f in relations.items() if f == relations[rel])
    return created


def relations_used(query: Query) -> set[str]:
    """Base relations a query reads, with the base relations those read in turn."""
    return set(_relations_used(query.sql))


@functools.cache
def _relations_used(sql: str) -> frozenset[str]:
    base = bundled_queries(include_base=True)
    relations = base_relations()
    used: set[str] = set()
    todo = [sql]
    while todo:
        text = strip_comments(todo.pop())
        for rel in relations:
            if rel not in used and re.search(rf"\b{rel}\b", text):
                used.add(rel)
                todo.append(base[relations[rel]].sql)
    return frozenset(used)


class Runner:
    """Runs bundled queries on one connection with the report's parameter values."""

    def __init__(self, con, values: dict):
        self.con = con
        self.values = values
        self.created: set = set()
        self.queries = bundled_queries()
        self._done: dict[tuple, list[dict]] = {}

    def rows(self, name: str, **overrides) -> list[dict]:
        """The query's rows (fresh dicts: callers may change them); run once per parameters,
        so that a section's rows serve its `by_dump` too without a second pass."""
        key = (name, tuple(sorted(overrides.items())))
        if key not in self._done:
            q = self.queries[name]
            values = {**self.values, **overrides}
            self._done[key] = with_room(self.con, lambda: self._run(q, values))
        return [dict(r) for r in self._done[key]]

    def _run(self, q: Query, values: dict) -> list[dict]:
        prepare(self.con, values, needs=relations_used(q), created=self.created)
        return [plain(r) for r in run_dicts(self.con, q, values)]

    @functools.cached_property
    def reads_files(self) -> bool:
        """Does `keys` read files (the views of a Parquet dataset, engine/dataset.py) rather than
        a database's `key_rows` table (db/store.py)?  A section picks the form of a query by it:
        over files, a query that scans the keys several times holds a reader per file, thread
        and scan."""
        return not self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_catalog = "
            "current_database() AND table_schema = 'main' AND table_name = 'key_rows' "
            "AND table_type = 'BASE TABLE'"
        ).fetchone()[0]

    def one(self, name: str, **overrides) -> dict:
        rows = self.rows(name, **overrides)
        return rows[0] if rows else {}
