"""`rdbscan migrate`: load the dumps once, projecting every key onto each target as it is
read (projection.Projector in the loader's path, rows in table key_projections), then apply
each target's load rules (rules.py) and sum the projections, all in SQL on the database."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field

from ..db.connections import chosen_memory_limit, connect
from ..db.load import DumpResult, ProgressHook, load
from . import rules as R
from .projection import Projector
from .servers import Server, parse_server

EXAMPLES = 5  # keys named per blocker
FAMILIES = 5  # families named per blocker
TOP = 10  # families and encoding changes listed per target
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


JOIN = "FROM key_projections p JOIN keys k USING (dump_id, file_offset) WHERE p.dump_id = ?"


def _projections(con, dump_id: int, names: list[str]) -> tuple[dict, dict]:
    """({target: the projection's figures}, {target: {rdb_type: [(from, to, keys)]}}) of one
    dump: three joins of key_projections with keys, whatever the number of targets."""
    out: dict[str, dict] = {
        t: {
            "keys": 0,
            "memory_bytes": 0,
            "today_bytes": 0,
            "by_type": [],
            "families": [],
            "encoding_changes": [],
            "keys_changing_encoding": 0,
        }
        for t in names
    }
    for target, typ, n, there, today, changed in con.execute(
        f"SELECT p.target, k.type, count(*), sum(p.memory_bytes), sum(k.memory_bytes), "
        f"count(*) FILTER (WHERE k.encoding IS DISTINCT FROM p.encoding) {JOIN} "
        f"GROUP BY ALL ORDER BY 1, 4 DESC, 2",
        [dump_id],
    ).fetchall():
        o = out[target]
        o["keys"] += n
        o["memory_bytes"] += int(there)
        o["today_bytes"] += int(today)
        o["keys_changing_encoding"] += changed
        o["by_type"].append(
            {"type": typ, "keys": n, "memory_bytes": int(there), "today_bytes": int(today)}
        )
    conversions: dict[str, dict[int, list]] = {t: {} for t in names}
    changes: dict[str, dict] = {t: {} for t in names}
    for target, rdb_type, typ, a, b, n, there, today, ex in con.execute(
        f"SELECT p.target, k.rdb_type, k.type, k.encoding, p.encoding, count(*), "
        f"sum(p.memory_bytes), sum(k.memory_bytes), list(k.key ORDER BY k.file_offset)[1:3] "
        f"{JOIN} AND k.encoding IS DISTINCT FROM p.encoding GROUP BY ALL "
        f"ORDER BY 1, 2, 6 DESC, 4, 5",
        [dump_id],
    ).fetchall():
        conversions[target].setdefault(rdb_type, []).append((a, b, n))
        c = changes[target].setdefault(
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
        c["memory_bytes"] += int(there)
        c["today_bytes"] += int(today)
        c["examples"] = (c["examples"] + list(ex))[:3]
    for t in names:
        out[t]["encoding_changes"] = sorted(
            changes[t].values(),
            key=lambda c: (-c["keys"], c["type"], c["from"] or "", c["to"] or ""),
        )[:TOP]
    for target, fam, n, there, today in con.execute(
        f"SELECT target, family, n, there, today FROM (SELECT p.target, "
        f"coalesce(k.family, k.key) AS family, count(*) AS n, sum(p.memory_bytes) AS there, "
        f"sum(k.memory_bytes) AS today {JOIN} GROUP BY ALL) QUALIFY row_number() OVER "
        f"(PARTITION BY target ORDER BY abs(there - today) DESC, there DESC, family) <= {TOP} "
        f"ORDER BY target, abs(there - today) DESC, there DESC, family",
        [dump_id],
    ).fetchall():
        out[target]["families"].append(
            {"family": fam, "keys": n, "memory_bytes": int(there), "today_bytes": int(today)}
        )
    for o in out.values():
        o["difference_bytes"] = o["memory_bytes"] - o["today_bytes"]
        o["difference"] = o["difference_bytes"] / o["today_bytes"] if o["today_bytes"] else 0.0
    return out, conversions


def migrate(
    paths: list[str],
    targets: list[str],
    db_path: str | None = None,
    *,
    progress: ProgressHook | None = None,
    modules: list[str] | None = None,
    verify_crc: bool = True,
    relaxed: bool = False,
) -> Migration:
    """Load `paths` (into `db_path`, else a temporary database) with each key projected onto
    every target of `targets` (`--to` values), and build the migrate report.  ValueError for
    an unknown target."""
    servers: list[Server] = []
    for t in targets:
        s = parse_server(t)
        if s.name not in [x.name for x in servers]:
            servers.append(s)
    if not servers:
        raise ValueError("no target: give --to SERVER-VERSION at least once")
    tmp = None
    if db_path is None:
        tmp = tempfile.mkdtemp(prefix="rdbscan-migrate-")
        path = os.path.join(tmp, "migrate.duckdb")
    else:
        path = db_path
    projectors: dict[int, Projector] = {}

    def make(dump_id: int) -> Projector:
        p = projectors[dump_id] = Projector(dump_id, servers)
        return p

    try:
        results = load(paths, path, progress=progress, projector=make, verify_crc=verify_crc)
        # The sums join every key's projections with the key rows: under 128 MB a 1 M-key dump
        # with three targets spills (3.1 s of CPU against 1.6 s with 256 MB).
        limit = chosen_memory_limit() or MIGRATE_MEMORY_LIMIT
        if os.path.exists(path):
            con = connect(path, read_only=True, config={"memory_limit": limit})
        else:  # no dump was committed, and the load removed the new file: an empty report
            from ..db.store import DDL

            con = connect(":memory:")
            con.execute(DDL)
        try:
            report = _report(con, results, servers, projectors, set(modules or ()), relaxed)
        finally:
            con.close()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return Migration(report, results, db_path)


def _report(con, results, servers, projectors, modules: set[str], relaxed: bool) -> dict:
    dumps = []
    summary = {
        s.name: {
            "target": s.name,
            "loads": True,
            "blockers": 0,
            "memory_bytes": 0,
            "today_bytes": 0,
        }
        for s in servers
    }
    for r in results:
        if (
            r.refused
            or not con.execute(
                "SELECT count(*) FROM dumps WHERE dump_id = ?", [r.dump_id]
            ).fetchone()[0]
        ):
            continue
        proj = projectors.get(r.dump_id)
        facts = _facts(con, r.dump_id, proj.dump_info if proj else None)
        row = con.execute(
            "SELECT path, server, server_version, memory_profile, memory_bytes, complete "
            "FROM dumps WHERE dump_id = ?",
            [r.dump_id],
        ).fetchone()
        entry = {
            "dump_id": r.dump_id,
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
        figures, conversions = _projections(con, r.dump_id, [s.name for s in servers])
        for s in servers:
            findings = R.evaluate(facts, s, modules, conversions[s.name], relaxed)
            for f in findings:
                if f.blocker:
                    _affected(con, r.dump_id, f)
            blockers = [f for f in findings if f.blocker]
            proj_fig = figures[s.name]
            entry["targets"].append(
                {
                    "target": s.name,
                    "profile": s.profile.name,
                    "loads": not blockers,
                    "blockers": len(blockers),
                    "findings": [f.as_dict() for f in findings],
                    **proj_fig,
                }
            )
            sm = summary[s.name]
            sm["loads"] = sm["loads"] and not blockers
            sm["blockers"] += len(blockers)
            sm["memory_bytes"] += proj_fig["memory_bytes"]
            sm["today_bytes"] += proj_fig["today_bytes"]
        dumps.append(entry)
    for sm in summary.values():
        sm["difference_bytes"] = sm["memory_bytes"] - sm["today_bytes"]
        sm["difference"] = sm["difference_bytes"] / sm["today_bytes"] if sm["today_bytes"] else 0.0
    return {
        "rdbscan_migrate": 1,
        "targets": [s.name for s in servers],
        "rdb_version_check": "relaxed" if relaxed else "strict",
        "summary": list(summary.values()),
        "dumps": dumps,
    }
