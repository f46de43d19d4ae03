"""`rdbscan migrate`: load the dumps once, projecting every key onto each target as it is
read (projection.Projector in the loader's path, rows in table key_projections), then apply
each target's load rules (rules.py) and sum the projections, all in SQL on the database."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field

from ..db.connections import connect, memory_limit
from ..db.load import DumpResult, ProgressHook, load
from ..rdb.constants import ENCODING_NAMES
from . import rules as R
from .projection import Projector, Shape, encoding_code, project
from .servers import Server, parse_server

EXAMPLES = 5  # keys named per blocker
FAMILIES = 5  # families named per blocker
TOP = 10  # families and encoding changes listed per target
EXAMPLE_KEYS = 3  # keys named per encoding change
MIGRATE_MEMORY_LIMIT = "256MB"  # of the report's queries, unless --memory-limit says otherwise


@dataclass
class Migration:
    """What `rdbscan migrate` found: the report (a JSON-ready dict) and the load results."""

    report: dict
    results: list[DumpResult] = field(default_factory=list)
    db_path: str | None = None

    @property
    def blockers(self) -> int:
        return sum(t["blockers"] for t in self.report["summary"])


def _facts(con, dump_id: int, info) -> R.DumpFacts:
    row = con.execute(
        "SELECT magic, rdb_version, server, server_version, keys, expires, "
        "coalesce(len(functions), 0), coalesce(module_aux, []), slot_info_records, "
        "coalesce(hash_templates, 0) FROM dumps WHERE dump_id = ?",
        [dump_id],
    ).fetchone()
    magic_text, version, server, server_version, keys, expires, functions, aux_mods, slots, tmpl = (
        row
    )
    aux = dict(
        con.execute(
            "SELECT unnest(map_keys(aux)), unnest(map_values(aux)) FROM dumps WHERE dump_id = ?",
            [dump_id],
        ).fetchall()
    )
    types: dict[int, int] = {}
    modules: dict[str, int] = {}
    for t, module, n in con.execute(
        "SELECT rdb_type, module_type, count(*) FROM key_rows WHERE dump_id = ? GROUP BY ALL",
        [dump_id],
    ).fetchall():
        types[t] = types.get(t, 0) + n
        if module is not None:
            modules[module] = modules.get(module, 0) + n
    lru, lfu = con.execute(
        "SELECT count(idle_seconds), count(lfu_freq) FROM keys WHERE dump_id = ?", [dump_id]
    ).fetchone()
    source = con.execute(
        "SELECT any_value(source) FROM slot_info WHERE dump_id = ?", [dump_id]
    ).fetchone()[0]
    return R.DumpFacts(
        magic="VALKEY" if (magic_text or "").startswith("VALKEY") else "REDIS",
        rdb_version=version or 0,
        server=server,
        server_version=server_version,
        aux=aux,
        functions=functions,
        module_aux=list(aux_mods),
        slot_info_opcode=bool(slots) and source == "opcode-244",
        key_meta=getattr(info, "key_meta_records", 0) if info is not None else 0,
        templates=tmpl,
        replication_commands=getattr(info, "replication_commands", 0) if info is not None else 0,
        types=types,
        modules=modules,
        keys=keys or 0,
        expires=expires or 0,
        lru=lru,
        lfu=lfu,
    )


def _affected(con, dump_id: int, finding: R.Finding) -> None:
    """Count, examples and families of the keys a refusal concerns."""
    if finding.where is None:
        return
    cond = f"dump_id = {int(dump_id)}" + (f" AND ({finding.where})" if finding.where else "")
    finding.keys = con.execute(f"SELECT count(*) FROM keys WHERE {cond}").fetchone()[0]
    finding.examples = [
        r[0]
        for r in con.execute(
            f"SELECT key FROM keys WHERE {cond} ORDER BY file_offset LIMIT {EXAMPLES}"
        ).fetchall()
    ]
    finding.families = [
        (f, n)
        for f, n in con.execute(
            f"SELECT family, count(*) AS n FROM keys WHERE {cond} "
            f"GROUP BY 1 ORDER BY n DESC, 1 LIMIT {FAMILIES}"
        ).fetchall()
    ]


# One join of the dump's projections with its keys, whatever the number of targets (materialized
# once, spilled if need be), read by two groupings: per (target, type, RDB type, encoding today,
# encoding there), from which the totals, the per-type figures and the encoding changes are
# summed, with the first file offsets of each group's keys (the examples of an encoding change,
# named afterwards); and per (target, family), of which only each target's TOP families by change
# come out (a heap: min() of a struct orders by its fields, as _projections sorted them).  A
# keyspace can hold as many families as keys: two million of them, each with its list of
# offsets, in one GROUPING SETS query fetched into Python, took 17.8 s and 1.1 GB for one target
# and ran out of memory for two.
SUMS = """
WITH j AS MATERIALIZED (
    SELECT p.target_id, k.type, k.rdb_type, k.encoding, p.encoding_id,
           coalesce(k.family, k.key) AS family, k.file_offset,
           p.memory_bytes AS there, k.memory_bytes AS today
    FROM {rows} p JOIN keys k USING (dump_id, file_offset)
    WHERE p.dump_id = $dump AND k.dump_id = $dump
), f AS (
    SELECT target_id, family, count(*) AS n, sum(there) AS there, sum(today) AS today
    FROM j GROUP BY target_id, family
), top AS (
    SELECT target_id,
           unnest(arg_min({'family': family, 'n': n, 'there': there, 'today': today},
                          {'change': -abs(there - today), 'there': -there, 'family': family},
                          $top)) AS f
    FROM f
    GROUP BY target_id
)
SELECT target_id, type, rdb_type, encoding, encoding_id, NULL AS family, 1 AS by_encoding,
       count(*), sum(there), sum(today), min_by(file_offset, file_offset, 3)
FROM j
GROUP BY target_id, type, rdb_type, encoding, encoding_id
UNION ALL
SELECT target_id, NULL, NULL, NULL, NULL, f.family, 0, f.n, f.there, f.today, NULL
FROM top
"""


def encoding_name(code: int) -> str | None:
    """The name of an encoding_id of key_projection_rows (as the view key_projections names it)."""
    return ENCODING_NAMES[code] if 0 <= code < len(ENCODING_NAMES) else None


def _figures() -> dict:
    return {
        "keys": 0,
        "memory_bytes": 0,
        "today_bytes": 0,
        "by_type": [],
        "families": [],
        "encoding_changes": [],
        "keys_changing_encoding": 0,
    }


def _projections(
    con, dump_id: int, names: list[str], ids: dict[int, str], rows: str = "key_projection_rows"
) -> tuple[dict, dict]:
    """({target: the projection's figures}, {target: {rdb_type: [(from, to, keys)]}}) of one
    dump, from one join of its projections (table `rows`, whose target_ids `ids` names) with
    its keys (SUMS)."""
    out: dict[str, dict] = {t: _figures() for t in names}
    by_type: dict[str, dict] = {t: {} for t in names}
    groups: dict[str, list] = {t: [] for t in names}
    families: dict[str, list] = {t: [] for t in names}
    for tid, typ, rdb_type, a, code, fam, by_enc, n, there, today, first in con.execute(
        SUMS.replace("{rows}", rows), {"dump": dump_id, "top": TOP}
    ).fetchall():
        target = ids.get(tid)
        if target not in out:
            continue
        there, today = int(there), int(today)
        if not by_enc:  # the (target, family) grouping set
            families[target].append((fam, n, there, today))
            continue
        b = encoding_name(code)
        o = out[target]
        o["keys"] += n
        o["memory_bytes"] += there
        o["today_bytes"] += today
        t = by_type[target].setdefault(typ, [typ, 0, 0, 0])
        t[1] += n
        t[2] += there
        t[3] += today
        if a != b:
            o["keys_changing_encoding"] += n
            groups[target].append((rdb_type, typ, a, b, n, there, today, first))
    conversions: dict[str, dict[int, list]] = {t: {} for t in names}
    named = _key_names(con, dump_id, {o for g in groups.values() for *_, f in g for o in f})
    for target in names:
        o = out[target]
        o["by_type"] = [
            {"type": typ, "keys": n, "memory_bytes": there, "today_bytes": today}
            for typ, n, there, today in sorted(
                by_type[target].values(), key=lambda r: (-r[2], r[0])
            )
        ]
        changes: dict[tuple, dict] = {}
        for rdb_type, typ, a, b, n, there, today, first in sorted(
            groups[target], key=lambda g: (g[0], -g[4], g[2] or "", g[3] or "")
        ):
            conversions[target].setdefault(rdb_type, []).append((a, b, n))
            c = changes.setdefault(
                (typ, a, b),
                {
                    "type": typ,
                    "from": a,
                    "to": b,
                    "keys": 0,
                    "memory_bytes": 0,
                    "today_bytes": 0,
                    "examples": [],
                },
            )
            c["keys"] += n
            c["memory_bytes"] += there
            c["today_bytes"] += today
            c["examples"] = sorted(c["examples"] + list(first))[:EXAMPLE_KEYS]
        for c in changes.values():
            c["examples"] = [named[x] for x in c["examples"]]
        o["encoding_changes"] = sorted(
            changes.values(),
            key=lambda c: (-c["keys"], c["type"], c["from"] or "", c["to"] or ""),
        )[:TOP]
        o["families"] = [
            {"family": fam, "keys": n, "memory_bytes": there, "today_bytes": today}
            for fam, n, there, today in sorted(
                families[target], key=lambda f: (-abs(f[2] - f[3]), -f[2], f[0])
            )[:TOP]
        ]
        o["difference_bytes"] = o["memory_bytes"] - o["today_bytes"]
        o["difference"] = o["difference_bytes"] / o["today_bytes"] if o["today_bytes"] else 0.0
    return out, conversions


def _key_names(con, dump_id: int, offsets: set[int]) -> dict[int, str]:
    """{file offset: key name} of some keys of one dump."""
    if not offsets:
        return {}
    return dict(
        con.execute(
            "SELECT file_offset, key FROM keys WHERE dump_id = ? AND file_offset IN "
            "(SELECT unnest(?::BIGINT[]))",
            [dump_id, sorted(offsets)],
        ).fetchall()
    )


def _servers(targets: list[str]) -> list[Server]:
    servers: list[Server] = []
    for t in targets:
        s = parse_server(t)
        if s.name not in [x.name for x in servers]:
            servers.append(s)
    if not servers:
        raise ValueError("no target: give --to SERVER-VERSION at least once")
    return servers


class ProjectorFactory:
    """Makes each dump's Projector; picklable, so that `--jobs` workers make their own."""

    def __init__(self, servers: list[Server]):
        self.servers = servers

    def __call__(self, dump_id: int) -> Projector:
        return Projector(dump_id, self.servers)


def in_workers(paths: list[str], jobs: int) -> bool:
    """Whether migrate(paths, jobs=jobs) loads the dumps in worker processes (standard input
    is read in this one)."""
    return jobs > 1 and len(paths) > 1 and "-" not in paths


def migrate(
    paths: list[str],
    targets: list[str],
    db_path: str | None = None,
    *,
    progress: ProgressHook | None = None,
    modules: list[str] | None = None,
    verify_crc: bool = True,
    relaxed: bool = False,
    jobs: int = 1,
) -> Migration:
    """Load `paths` (into `db_path`, else a temporary database; up to `jobs` dumps at once in
    worker processes) with each key projected onto every target of `targets` (`--to` values),
    and build the migrate report.  ValueError for an unknown target."""
    servers = _servers(targets)
    tmp = None
    if db_path is None:
        tmp = tempfile.mkdtemp(prefix="rdbscan-migrate-")
        path = os.path.join(tmp, "migrate.duckdb")
    else:
        path = db_path
    factory = ProjectorFactory(servers)
    try:
        if in_workers(paths, jobs):
            from ..db.parallel import load_parallel

            results = load_parallel(
                paths, path, jobs=jobs, existing="refuse", projector=factory, verify_crc=verify_crc
            )
        else:
            results = load(paths, path, progress=progress, projector=factory, verify_crc=verify_crc)
        # The sums join every key's projections with the key rows: under 128 MB a 1 M-key dump
        # with three targets spills.
        limit = memory_limit(MIGRATE_MEMORY_LIMIT)  # (what an out-of-memory line names)
        if os.path.exists(path):
            con = connect(path, read_only=True, config={"memory_limit": limit})
        else:  # no dump was committed, and the load removed the new file: an empty report
            from ..db.store import DDL

            con = connect(":memory:")
            con.execute(DDL)
        try:
            held = {d for (d,) in con.execute("SELECT dump_id FROM dumps").fetchall()}
            loaded = [(r.dump_id, r) for r in results if not r.refused and r.dump_id in held]
            report = _report(con, loaded, servers, set(modules or ()), relaxed)
        finally:
            con.close()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return Migration(report, results, db_path)


def migrate_database(
    path: str,
    targets: list[str],
    *,
    modules: list[str] | None = None,
    relaxed: bool = False,
) -> Migration:
    """The migrate report of the dumps a database holds (written by `rdbscan load`, `report -o`
    or `migrate -o`), which is not changed.  A target the database holds projections for (from
    `migrate -o`, with the same memory profile) reads them; for another, the keys whose
    projection needs only what the database keeps (strings: their length, key length and TTL)
    are projected from their rows, and the others are counted as not projected: their element
    sizes are read from the dump, not kept.  The dump-level records the database does not keep
    (Redis 8.6's KEY_META opcodes) are not judged.  FileNotFoundError, or ValueError for a file
    that is not an rdbscan database or an unknown target."""
    from ..reports.engine.database import open_database

    servers = _servers(targets)
    con = open_database(path, read_only=True)
    try:
        limit = memory_limit(MIGRATE_MEMORY_LIMIT)  # (what an out-of-memory line names)
        con.execute(f"SET memory_limit = '{limit}'")
        dump_ids = [
            r[0] for r in con.execute("SELECT dump_id FROM dumps ORDER BY dump_id").fetchall()
        ]
        report = _report(
            con, [(d, None) for d in dump_ids], servers, set(modules or ()), relaxed, True
        )
    finally:
        con.close()
    return Migration(report, [], None)


PROJECTED_TYPES = ("string",)  # what a database's rows suffice to project (migrate_database)


def _stored_projections(con, dump_id: int, servers: list[Server]) -> dict[str, dict]:
    """Fill TEMP table migrate_rows with one dump's projections onto `servers` (target_id: the
    index in `servers`) from what the database holds; {target: {"keys", "today_bytes"}} of the
    keys left out, per target."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE migrate_rows (dump_id INTEGER, file_offset BIGINT, "
        "target_id UTINYINT, encoding_id UTINYINT, memory_bytes BIGINT)"
    )
    stored = {
        (target, profile): tid
        for tid, target, profile in con.execute(
            "SELECT target_id, target, profile FROM projection_targets WHERE dump_id = ?",
            [dump_id],
        ).fetchall()
    }
    left: dict[str, dict] = {}
    shapes = None
    for i, s in enumerate(servers):
        tid = stored.get((s.name, s.profile.name))
        if tid is not None:
            con.execute(
                "INSERT INTO migrate_rows SELECT dump_id, file_offset, ?, encoding_id, "
                "memory_bytes FROM key_projection_rows WHERE dump_id = ? AND target_id = ?",
                [i, dump_id, tid],
            )
            left[s.name] = {"keys": 0, "today_bytes": 0}
            continue
        if shapes is None:
            shapes = con.execute(
                "SELECT DISTINCT type, encoding, rdb_type, key_length, length, "
                "expire_at_ms IS NOT NULL FROM keys WHERE dump_id = ? AND type IN "
                f"{PROJECTED_TYPES!r}".replace(",)", ")"),
                [dump_id],
            ).fetchall()
            n, today = con.execute(
                "SELECT count(*), coalesce(sum(memory_bytes), 0) FROM keys WHERE dump_id = ? "
                f"AND type NOT IN {PROJECTED_TYPES!r}".replace(",)", ")"),
                [dump_id],
            ).fetchone()
        rows = []
        for typ, enc, rdb_type, klen, length, ttl in shapes:
            enc_there, mem = project(Shape(typ, enc, rdb_type, klen, length, 0, ttl), s)
            rows.append((typ, enc, klen, length, ttl, encoding_code(enc_there), mem))
        con.execute(
            # (its own column names: a shape, not a copy of the keys' columns, db/columns.py)
            "CREATE OR REPLACE TEMP TABLE migrate_shapes (s_type VARCHAR, s_encoding VARCHAR, "
            "s_key_length INTEGER, s_length BIGINT, s_ttl BOOLEAN, s_encoding_id UTINYINT, "
            "s_memory_bytes BIGINT)"
        )
        if rows:
            con.executemany("INSERT INTO migrate_shapes VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        con.execute(
            "INSERT INTO migrate_rows SELECT k.dump_id, k.file_offset, ?, s.s_encoding_id, "
            "s.s_memory_bytes FROM keys k JOIN migrate_shapes s ON k.type = s.s_type AND "
            "k.encoding = s.s_encoding AND k.key_length = s.s_key_length AND "
            "k.length = s.s_length AND (k.expire_at_ms IS NOT NULL) = s.s_ttl WHERE k.dump_id = ?",
            [i, dump_id],
        )
        left[s.name] = {"keys": n, "today_bytes": int(today)}
    return left


def _report(
    con, dumps_in, servers, modules: set[str], relaxed: bool, from_database: bool = False
) -> dict:
    """The migrate report (docs/migrate.md "JSON") of the dumps `dumps_in` ((dump_id, its
    DumpResult or None) each) of the database `con`: from the projections the load wrote, or
    (from_database) from _stored_projections."""
    dumps = []
    summary = {
        s.name: {
            "target": s.name,
            "loads": True,
            "blockers": 0,
            "memory_bytes": 0,
            "today_bytes": 0,
            "not_projected_keys": 0,
        }
        for s in servers
    }
    for dump_id, result in dumps_in:
        facts = _facts(con, dump_id, result)
        entry = _dump_entry(con, dump_id, facts)
        left, figures, conversions = _dump_projections(con, dump_id, servers, from_database)
        for s in servers:
            target = _target_entry(con, dump_id, facts, s, modules, conversions, relaxed)
            target.update(figures[s.name])
            target["not_projected_keys"] = left[s.name]["keys"]
            target["not_projected_today_bytes"] = left[s.name]["today_bytes"]
            entry["targets"].append(target)
            sm = summary[s.name]
            sm["loads"] = sm["loads"] and target["loads"]
            sm["blockers"] += target["blockers"]
            sm["memory_bytes"] += figures[s.name]["memory_bytes"]
            sm["today_bytes"] += figures[s.name]["today_bytes"]
            sm["not_projected_keys"] += left[s.name]["keys"]
        dumps.append(entry)
    for sm in summary.values():
        sm["difference_bytes"] = sm["memory_bytes"] - sm["today_bytes"]
        sm["difference"] = sm["difference_bytes"] / sm["today_bytes"] if sm["today_bytes"] else 0.0
    return {
        "rdbscan_migrate": 1,
        "targets": [s.name for s in servers],
        "rdb_version_check": "relaxed" if relaxed else "strict",
        "source": "database" if from_database else "dumps",
        "summary": list(summary.values()),
        "dumps": dumps,
    }


def _dump_entry(con, dump_id: int, facts) -> dict:
    """A dump's entry of the report, its targets still empty: path, magic, server, keys and
    memory today, whether it was read to its end."""
    row = con.execute(
        "SELECT path, server, server_version, memory_profile, memory_bytes, complete "
        "FROM dumps WHERE dump_id = ?",
        [dump_id],
    ).fetchone()
    return {
        "dump_id": dump_id,
        "path": row[0],
        "magic": f"{facts.magic}{facts.rdb_version:04d}"
        if facts.magic == "REDIS"
        else f"VALKEY{facts.rdb_version:03d}",
        "server": row[1],
        "server_version": row[2],
        "memory_profile": row[3],
        "keys": facts.keys,
        "memory_bytes": row[4] or 0,
        "complete": bool(row[5]),
        "targets": [],
    }


def _dump_projections(con, dump_id: int, servers, from_database: bool):
    """(keys not projected, figures, encoding conversions) per target name of one dump: from
    the projections the load wrote, or (from_database) from the rows, where the keys whose
    projection needs more than the rows are left out and counted."""
    names = [s.name for s in servers]
    if from_database:
        left = _stored_projections(con, dump_id, servers)
        figures, conversions = _projections(
            con, dump_id, names, dict(enumerate(names)), "migrate_rows"
        )
    else:
        left = {n: {"keys": 0, "today_bytes": 0} for n in names}
        ids = con.execute(
            "SELECT target_id, target FROM projection_targets WHERE dump_id = ?", [dump_id]
        ).fetchall()
        figures, conversions = _projections(con, dump_id, names, dict(ids))
    return left, figures, conversions


def _target_entry(con, dump_id: int, facts, s, modules, conversions, relaxed: bool) -> dict:
    """One target's verdict on one dump: the rules' findings (the keys each blocker stops
    counted in the database) and whether the target loads it.  The projected figures are
    added by _report."""
    findings = R.evaluate(facts, s, modules, conversions[s.name], relaxed)
    for f in findings:
        if f.blocker:
            _affected(con, dump_id, f)
    blockers = [f for f in findings if f.blocker]
    return {
        "target": s.name,
        "profile": s.profile.name,
        "loads": not blockers,
        "blockers": len(blockers),
        "findings": [f.as_dict() for f in findings],
    }
