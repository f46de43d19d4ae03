"""`rdbscan report` as a library: run the bundled queries over a database and assemble one dict.

The dict is the JSON contract (docs/json.md); the text and markdown renderers
(`rdbscan.reports.render`) only lay it out.  Every number comes from a SQL file in `rdbscan/reports/queries/`; Python here
only picks parameters (thresholds by server version, config file, rules file), slices lists and
writes the "what to do" advice.
"""

from __future__ import annotations

import datetime as _dt
import os
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from ..db.connections import connect
from ..db.macros import create_macros
from ..db.store import StoreError, check_schema
from ..errors import EXIT_FINDINGS
from ..rdb import constants as C
from . import findings, querylib
from .render import fmt_bytes, plain
from .rules import BIG_KEY_PARAMS, NamingConfig
from .values import section as values_section

REPORT_FORMAT = 1

SECTIONS = (
    "overview",
    "big_keys",
    "patterns",
    "ttl",
    "encodings",
    "values",
    "naming",
    "cold",
    "slots",
    "streams",
)


# The big-key thresholds are parameters of queries/big_keys.sql; its header holds their defaults,
# which follow the big-key guidance of the cloud Redis services (Alibaba Cloud, Huawei Cloud,
# BytePlus: strings over 10 KB, collections over 5,000 elements, Huawei: 50 MB per collection;
# a critical tier at 1 MB and 100,000 elements).
BIG_KEY_DEFAULTS = {
    name: querylib.get_query("big_keys").params[name].default for name in BIG_KEY_PARAMS
}


# --- encoding thresholds (docs/rdb-format.md section 7.1) ---------------------------------------------------------

# The compact-encoding thresholds are parameters of queries/_rlimits.sql; its header holds the
# defaults of the newest servers, default_thresholds() what older servers differ in.
NEWEST_THRESHOLDS = dict(
    (name, p.default) for name, p in querylib.bundled_queries(True)["_rlimits"].params.items()
)
# parameter -> the name shown in reports (the current config name): the numeric thresholds
SETTING_NAMES = {
    name: name.replace("_", "-")
    for name, value in NEWEST_THRESHOLDS.items()
    if isinstance(value, int)
}


# config name -> query parameter: the current names, and the old ones (ziplist, zipmap) that
# servers still accept for the same setting
CONFIG_ALIASES = {config: param for param, config in SETTING_NAMES.items()} | {
    "hash-max-ziplist-entries": "hash_max_listpack_entries",
    "hash-max-zipmap-entries": "hash_max_listpack_entries",
    "hash-max-ziplist-value": "hash_max_listpack_value",
    "hash-max-zipmap-value": "hash_max_listpack_value",
    "zset-max-ziplist-entries": "zset_max_listpack_entries",
    "zset-max-ziplist-value": "zset_max_listpack_value",
    "list-max-ziplist-size": "list_max_listpack_size",
}


def server_semantics(
    server: str | None, version: str | None, rdb_version: int | None
) -> tuple[int, int]:
    """The Redis version whose encoding rules apply (Valkey 7.2+/8.x behave as Redis 7.2)."""
    v = C.server_version(version, rdb_version) or ((7, 2) if (rdb_version or 0) > 13 else (2, 6))
    if (server or "").lower() == "valkey":
        v = (7, 2) if v >= (7, 2) else v
    return v


def default_thresholds(server: str | None, version: str | None, rdb_version: int | None) -> dict:
    """Compact-encoding thresholds a server of that version uses by default (docs/rdb-format.md section 7.1)."""
    v = server_semantics(server, version, rdb_version)
    out = dict(NEWEST_THRESHOLDS)
    if v < (2, 4):  # no ziplist-encoded sorted sets yet
        out["zset_max_listpack_entries"] = 0
    if v < (7, 2):  # no listpack-encoded sets yet
        out["set_max_listpack_entries"] = 0
    out["list_compact_encoding"] = (
        "ziplist" if v < (3, 2) else ("listpack" if v >= (7, 2) else "none")
    )
    out["compact_encoding"] = "listpack" if v >= (7, 0) else "ziplist"
    return out


def read_redis_conf(path: str) -> dict[str, str]:
    """`name value` lines of a redis.conf / valkey.conf (comments and quotes handled, includes not)."""
    out = {}
    for raw in Path(path).read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        value = parts[1].strip() if len(parts) > 1 else ""
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        out[parts[0].lower()] = value
    return out


def apply_settings(thresholds: dict, settings: dict[str, str], origin: str, sources: dict) -> dict:
    """Apply `name value` settings (config file or --set) that rdbscan understands; returns the rest."""
    rest = {}
    for name, value in settings.items():
        param = CONFIG_ALIASES.get(name.lower())
        if param is None:
            rest[name] = value
            continue
        try:
            number = int(value)
        except ValueError:
            raise ValueError(f"{origin}: {name} must be an integer, not {value!r}") from None
        if not -(2**63) < number < 2**63:  # list-max-listpack-size may be negative
            raise ValueError(f"{origin}: {name} {value} is out of range")
        thresholds[param] = number
        sources[param] = origin
    return rest


# --- options ---------------------------------------------------------------------------------


@dataclass
class ReportOptions:
    dump_id: int = 0
    top: int = 10
    delimiters: str = ":"
    sections: tuple[str, ...] = SECTIONS
    config_path: str | None = None  # redis.conf with encoding thresholds
    settings: dict[str, str] = field(default_factory=dict)  # --set name=value
    naming: NamingConfig = field(default_factory=NamingConfig)
    big_keys: dict = field(default_factory=dict)  # overrides of BIG_KEY_DEFAULTS
    idle_days: float = 30
    max_freq: int = 0
    examples: int = 5
    schema: object = (
        None  # rdbscan.reports.schema.Schema: adds the `schema` section (--schema, docs/schema.md)
    )


# DuckDB memory for queries on an opened database.  The bundled queries stream over the `keys`
# table (rkeys is a view) and keep aggregates, so they fit; what does not (a keyspace of unique
# families, millions of keys breaking naming rules) spills to a temporary directory instead of
# growing the process.
MEMORY_LIMIT = "128MB"


def open_database(path: str, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open a database rdbscan wrote and (re)create the macros; TEMP macros if it is read-only.

    Queries get MEMORY_LIMIT and spill to a directory of their own under the system temporary
    directory (DuckDB creates it when it first spills and removes it when the connection closes):
    the default, next to the database file, may not be writable.
    """
    if not Path(path).exists():
        raise FileNotFoundError(path)
    con = None
    if not read_only:
        try:
            con = connect(path)
            create_macros(con)
        except duckdb.Error:
            # locked by another process, or a read-only file: fall back to TEMP macros
            if con is not None:
                con.close()
            con = None
    if con is None:
        con = connect(path, read_only=True)
        create_macros(con, temporary=True)
    con.execute("SET enable_progress_bar = false")
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
    spill = os.path.join(tempfile.gettempdir(), f"rdbscan-{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    try:
        con.execute("SET temp_directory = " + querylib.sql_literal(spill))
    except duckdb.Error:
        pass  # the database is open elsewhere in this process and has spilled already: keep its directory
    tables = {
        r[0]
        for r in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
        ).fetchall()
    }
    missing = {"keys", "dumps"} - tables
    if missing:
        con.close()
        raise ValueError(
            f"{path} is not an rdbscan database (no {', '.join(sorted(missing))} table)"
        )
    try:
        check_schema(con, path)
    except StoreError:
        con.close()
        raise
    return con


class _Runner:
    """Runs bundled queries on one connection with the report's parameter values."""

    def __init__(self, con, values: dict):
        self.con = con
        self.values = values
        self.created: set = set()
        self.queries = querylib.bundled_queries()

    def rows(self, name: str, **overrides) -> list[dict]:
        q = self.queries[name]
        values = {**self.values, **overrides}
        querylib.prepare(self.con, values, needs=querylib.relations_used(q), created=self.created)
        return [plain(r) for r in querylib.run_dicts(self.con, q, values)]

    def one(self, name: str, **overrides) -> dict:
        rows = self.rows(name, **overrides)
        return rows[0] if rows else {}


def query_values(con, options: ReportOptions) -> tuple[dict, dict]:
    """All query parameter values for a report, plus where the encoding thresholds came from."""
    dump = con.execute(
        "SELECT server, server_version, rdb_version FROM dumps WHERE ? = 0 OR dump_id = ? "
        "ORDER BY rdb_version DESC NULLS LAST, dump_id LIMIT 1",
        [options.dump_id, options.dump_id],
    ).fetchone()
    if dump is None:
        raise ValueError(
            f"no dump with id {options.dump_id}"
            if options.dump_id
            else "the database holds no dump"
        )
    server, version, rdb_version = dump
    thresholds = default_thresholds(server, version, rdb_version)
    label = f"{server or 'redis'} {version or f'(rdb {rdb_version})'} defaults"
    sources = {p: label for p in SETTING_NAMES}
    extra = {}
    if options.config_path:
        extra.update(
            apply_settings(
                thresholds,
                read_redis_conf(options.config_path),
                f"config {options.config_path}",
                sources,
            )
        )
    rest = apply_settings(thresholds, options.settings, "--set", sources)
    big = {**BIG_KEY_DEFAULTS, **options.big_keys}
    values = {
        "dump_id": options.dump_id,
        "delimiters": options.delimiters,
        "top": options.top,
        "examples": options.examples,
        "idle_days": options.idle_days,
        "max_freq": options.max_freq,
        **big,
        **thresholds,
        **options.naming.query_values(options.delimiters),
    }
    # --set for any other query parameter (e.g. min_keys=20, margin=0.1, max_depth=2)
    known: dict[str, object] = {}
    for q in querylib.bundled_queries(include_base=True).values():
        for p in q.params.values():
            known.setdefault(p.name, p.default)
    for name, value in rest.items():
        pname = name.replace("-", "_")
        if pname in known:
            try:
                values[pname] = querylib.coerce(value, known[pname])
            except ValueError as e:
                raise ValueError(f"--set {name}: {e}") from None
            if pname in BIG_KEY_DEFAULTS:
                big[pname] = values[pname]
        elif name.lower() == "lazyfree-lazy-expire":
            extra[name.lower()] = value
        else:
            raise ValueError(
                f"--set {name}: not a compact-encoding setting or query parameter "
                f"(see `rdbscan queries -v`)"
            )
    lazy = (
        extra.get("lazyfree-lazy-expire") or rest.get("lazyfree-lazy-expire") or ""
    ).lower() or None
    meta = {
        "sources": sources,
        "big": big,
        "lazyfree_lazy_expire": lazy,
        "server": server,
        "server_version": version,
        "rdb_version": rdb_version,
    }
    return values, meta


def build_report(
    con,
    options: ReportOptions | None = None,
    fail_on: list[tuple[str, str]] | None = None,
    on_section: Callable[[str], None] | None = None,
    charts: bool = False,
) -> dict:
    """Run every section's queries and return the report dict (the `--format json` object).

    charts: also add `charts`, the aggregates the HTML report draws (docs/html-report.md).

    fail_on: parsed `--fail-on` checks (parse_fail_on); adds the `fail_on` object.
    on_section: called with each section's name before its queries run (progress display).
    """
    options = options or ReportOptions()
    started = time.perf_counter()
    values, meta = query_values(con, options)
    run = _Runner(con, values)
    report: dict = {
        "rdbscan_report": REPORT_FORMAT,
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "options": {
            "dump_id": options.dump_id,
            "top": options.top,
            "delimiters": options.delimiters,
            "sections": list(options.sections),
        },
    }
    builders = {
        "overview": _overview,
        "big_keys": _big_keys,
        "patterns": _patterns,
        "ttl": _ttl,
        "encodings": _encodings,
        "values": _values,
        "naming": _naming,
        "cold": _cold,
        "slots": _slots,
        "streams": _streams,
    }
    step = on_section or (lambda name: None)
    # overview is always computed: other sections and the renderers refer to it
    step("overview")
    report["overview"] = _overview(run, options, meta)
    for name in SECTIONS[1:]:
        if name in options.sections:
            step(name)
            report[name] = builders[name](run, options, meta)
    if "overview" not in options.sections:
        report["overview"] = {
            k: report["overview"][k]
            for k in (
                "keys",
                "keys_by_db",
                "rdb_version",
                "memory_bytes",
                "snapshot_time",
                "snapshot_ms",
                "snapshot_source",
            )
        }
    if options.schema is not None:
        from .schema_check import section as schema_section

        step("schema")
        report["schema"] = schema_section(run, options.schema, options.top)  # type: ignore[arg-type]
    if fail_on:
        report["fail_on"] = evaluate_fail_on(run, report, fail_on)
    if charts:
        step("charts")
        report["charts"] = _charts(run, options)
    # the verdict first: right after the options in the JSON object
    found = findings.build(report)
    report = {
        **{k: report[k] for k in ("rdbscan_report", "generated_at", "options")},
        "findings": found,
        **report,
    }
    report["report_seconds"] = round(time.perf_counter() - started, 3)
    return report


# --- sections --------------------------------------------------------------------------------


def _same_or_max(items: list, key: str):
    vals = [d.get(key) for d in items if d.get(key) is not None]
    if not vals:
        return None
    return vals[0] if len(set(map(str, vals))) == 1 else max(vals)


def _overview(run: _Runner, options: ReportOptions, meta: dict) -> dict:
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
    parse_seconds = sum(d["parse_seconds"] or 0 for d in dumps)
    bytes_read = sum(d["bytes_read"] or 0 for d in dumps)
    advice = []
    sources = {d["snapshot_source"] for d in dumps}
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
    used = sum(d["used_mem"] or 0 for d in dumps)
    total = sum(d["memory_total_bytes"] or 0 for d in dumps)
    gap = used - total if used and total and all(d["used_mem"] for d in dumps) else None
    models = sorted({d["memory_model"] for d in dumps if d.get("memory_model")})
    notes += [m[0].upper() + m[1:] + "." for m in models if "(no exact profile)" in m]
    if any(d["checksum"] == "mismatch" for d in dumps):
        advice.append(
            "A checksum mismatch means the file is damaged: do not restore it; take a new snapshot."
        )
    if any(d["complete"] is False for d in dumps):
        advice.append(
            "The dump could not be read to the end: the figures cover only the keys before the damage."
        )
    skipped = sum(d["skipped_keys"] or 0 for d in dumps)
    tail = sum(d["tail_bytes"] or 0 for d in dumps)
    if skipped:
        advice.append(
            f"{skipped} damaged keys were left out (load --skip-bad): the figures do not cover them."
        )
    if tail:
        notes.append(
            f"{tail} bytes followed the RDB's end marker and were not read (an AOF tail or "
            f"other data after the snapshot)."
        )
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
        "rdb_version": _same_or_max(dumps, "rdb_version"),
        "server": _same_or_max(dumps, "server"),
        "server_version": _same_or_max(dumps, "server_version"),
        "snapshot_time": _same_or_max(dumps, "snapshot_time"),
        "snapshot_ms": _same_or_max(dumps, "snapshot_ms"),
        "snapshot_source": ",".join(sorted(sources)) or None,
        # (NULL: the parse stopped before the trailer)
        "checksum": ",".join(sorted({d["checksum"] or "not reached" for d in dumps})) or None,
        "complete": all(d["complete"] is not False for d in dumps),
        "skipped_keys": skipped,
        "tail_bytes": tail,
        "input": ",".join(inputs) or None,
        "parse_seconds": round(parse_seconds, 3) if parse_seconds else None,
        "bytes_per_second": round(bytes_read / parse_seconds) if parse_seconds else None,
        "keys_per_second": round(keys / parse_seconds) if parse_seconds else None,
        "dumps": dumps,
        "dbs": dbs,
        "dbs_not_listed": {
            "databases": (tot.get("databases") or 0) - len(dbs),
            "keys": keys - sum(d["keys"] for d in dbs),
            "keys_with_ttl": (tot.get("all_keys_with_ttl") or 0)
            - sum(d["keys_with_ttl"] for d in dbs),
            "memory_bytes": memory - sum(d["memory_bytes"] or 0 for d in dbs),
        },
        "types": types,
        "notes": notes,
        "advice": advice,
    }


def _big_keys(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    items = run.rows("big_keys")
    rules = run.rows("big_keys_summary")
    top = run.rows("big_keys_top")
    total = items[0]["total_keys"] if items else 0
    critical = items[0]["total_critical"] if items else 0
    with_ttl = items[0]["total_with_ttl"] if items else 0
    memory = items[0]["total_memory"] if items else 0
    critical_memory = items[0]["total_critical_memory"] if items else 0
    for it in items:
        for k in (
            "total_keys",
            "total_critical",
            "total_with_ttl",
            "total_memory",
            "total_critical_memory",
        ):
            it.pop(k, None)
    advice = []
    if critical:
        advice.append(
            f"{critical} critical big key(s): split them (shard a collection by id range or hash "
            "bucket, or store large blobs outside Redis); they block the server on DEL, expiry "
            "and migration."
        )
    elif total:
        advice.append(
            "Big keys: split large collections into buckets and keep strings under 10 KB; "
            "delete them with UNLINK, not DEL."
        )
    if with_ttl and meta.get("lazyfree_lazy_expire") != "yes":
        advice.append(
            f"{with_ttl} big key(s) carry a TTL: their expiry frees them in one blocking step. "
            "Set `lazyfree-lazy-expire yes` or expire them in pieces."
        )
    return {
        "thresholds": meta["big"],
        "keys": total,
        "critical": critical,
        "keys_with_ttl": with_ttl,
        "memory_bytes": memory,
        "critical_memory_bytes": critical_memory,
        "lazyfree_lazy_expire": meta.get("lazyfree_lazy_expire"),
        "rules": rules,
        "items": items,
        "top_by_memory": [r for r in top if r["ranking"] == "memory"],
        "top_by_length": [r for r in top if r["ranking"] == "length"],
        "advice": advice,
    }


def _patterns(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    items = run.rows("patterns", top=max(options.top, 1))
    prefixes = run.rows("prefixes", top=max(options.top, 1))
    families = sum(r["families"] for r in items)
    advice = []
    if items and items[0]["pattern"] != "(other)" and (items[0]["memory_share"] or 0) >= 0.5:
        advice.append(
            f"One family, {items[0]['pattern']}, holds {items[0]['memory_share']:.0%} of the memory: "
            "start any clean-up or resizing there."
        )
    return {
        "delimiters": options.delimiters,
        "families": families,
        "items": items,
        "prefixes": prefixes,
        "advice": advice,
    }


def _ttl(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    s = run.one("ttl_summary")
    families = run.rows("ttl_families")
    herd = run.rows("ttl_herd")
    dist = run.rows("ttl_distribution")
    advice = []
    eph = [f for f in families if f["looks_ephemeral"]]
    if eph:
        names = ", ".join(f["pattern"] for f in eph[:3])
        advice.append(
            f"Cache/session-like families without TTL ({names}): give them an expiry "
            "(SET ... EX, EXPIRE) so they cannot grow without bound."
        )
    if herd:
        worst = min(herd, key=lambda h: h["log10_p_value"])  # the least plausible
        advice.append(
            f"{worst['keys']} keys of {worst['pattern']} expire in the same {worst['granularity']} "
            f"({worst['moment']}) where uniform spreading of that family's expiries expects "
            f"{worst['expected_keys']:.2g}: add random jitter to their TTLs to spread expiry load."
        )
    if s.get("expired_at_snapshot"):
        advice.append(
            f"{s['expired_at_snapshot']} key(s) were already expired at snapshot time: active "
            "expiry is falling behind (raise `hz` or check for blocked event loops)."
        )
    return {
        **s,
        "snapshot_time": _ms_to_iso(s.get("snapshot_ms")),
        "families": families,
        "herd": {
            "seconds": [h for h in herd if h["granularity"] == "second"],
            "minutes": [h for h in herd if h["granularity"] == "minute"],
        },
        "distribution": dist,
        "advice": advice,
    }


def _ms_to_iso(ms):
    if ms is None:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).isoformat()


def _encodings(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    values = run.values
    candidates = run.rows("encoding_candidates")
    summary = run.rows("encoding_candidates_summary")
    near = run.rows("encoding_near")
    whatif = run.rows("encoding_whatif")
    s2h = run.rows("strings_to_hashes")
    total = {
        "keys": sum(r["keys"] for r in summary),
        "savings_bytes": sum(r["savings_bytes"] for r in summary),
    }
    thresholds = {name: values[p] for p, name in SETTING_NAMES.items()}
    advice = []
    if total["keys"]:
        advice.append(
            f"{total['keys']} key(s) are non-compact although small enough (about "
            f"{fmt_bytes(total['savings_bytes'])} to save): rewrite them "
            "(DUMP + RESTORE REPLACE, or copy and RENAME) to get the compact encoding back."
        )
    best = max(
        (w for w in whatif if w["change"] != "current thresholds" and w["savings_bytes"] > 0),
        key=lambda w: w["savings_bytes"],
        default=None,
    )
    if best:
        advice.append(
            f"Raising {best['change']} would convert {best['keys']} key(s) and save about "
            f"{fmt_bytes(best['savings_bytes'])} (larger listpacks cost CPU per access)."
        )
    if s2h:
        advice.append(
            f"Small string families such as {s2h[0]['family']} would be cheaper as hash fields "
            f"(HSET {s2h[0]['example_parent']} <field> <value>)."
        )
    return {
        "server": meta["server"],
        "server_version": meta["server_version"],
        "thresholds": thresholds,
        "threshold_sources": {SETTING_NAMES[p]: src for p, src in meta["sources"].items()},
        "compact_encoding": values["compact_encoding"],
        "list_compact_encoding": values["list_compact_encoding"],
        "candidates": candidates,
        "candidates_by_type": summary,
        "candidates_total": total,
        "near_threshold": near,
        "what_if": whatif,
        "strings_to_hashes": s2h,
        "advice": advice,
    }


def _values(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    return values_section(run, options)


def _naming(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    rules = run.rows("naming_rules")
    summary = run.one("naming_summary")
    families = run.rows("naming_families")
    advice = []
    broken = [r for r in rules if r["keys"]]
    if broken:
        advice.append(
            "Name keys `<service>:<entity>:<id>[:<field>]` in lowercase ASCII with one delimiter; "
            "rename offenders at write time (RENAME is atomic) or disable rules that do not "
            "apply in a rules file (--rules)."
        )
    return {
        "keys": summary.get("keys", 0),
        "memory_bytes": summary.get("memory_bytes", 0),
        "keys_checked": summary.get("keys_checked", 0),
        "config": options.naming.describe(options.delimiters),
        "rules": rules,
        "families": families,
        "advice": advice,
    }


def _cold(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    s = run.one("cold_summary")
    has_idle, has_freq = bool(s.get("keys_with_idle")), bool(s.get("keys_with_freq"))
    if not (has_idle or has_freq):
        return {
            "available": False,
            "policy": None,
            "reason": "This dump has no LRU idle times or LFU counters: Redis writes them only when "
            "maxmemory-policy is an LRU or LFU policy, and this server was not using one "
            "when it saved, so key idleness cannot be known offline.",
            "items": [],
            "hot": [],
            "hot_families": [],
            "advice": [],
        }
    items = run.rows("cold_keys")
    hot = run.rows("hot_keys") if has_freq else []
    hot_families = run.rows("hot_families") if has_freq else []
    advice = []
    cold_nottl = s.get("cold_without_ttl") or 0
    if cold_nottl:
        advice.append(
            f"{cold_nottl} cold key(s) have no TTL: review them for deletion or give them an expiry."
        )
    return {
        "available": True,
        "policy": "lfu" if has_freq else "lru",
        "idle_days": options.idle_days,
        "max_freq": options.max_freq,
        **s,
        "reason": None,
        "items": items,
        "hot": hot,
        "hot_families": hot_families,
        "advice": advice,
    }


def _slots(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    summary = run.one("slot_summary")
    hottest = run.rows("slots")
    by_memory = run.rows("slots_by_memory")
    tags = run.rows("hashtags")
    advice = []
    if tags and hottest and hottest[0]["keys"] >= 10 and hottest[0]["hashtags"]:
        advice.append(
            f"Slot {hottest[0]['slot']} holds {hottest[0]['keys']} keys because of hashtag(s) "
            f"{', '.join(hottest[0]['hashtags'])}: keep hashtags for keys that need multi-key "
            "operations, and make the tag include the entity id."
        )
    if summary.get("announced_mismatches"):
        advice.append(
            "The per-slot counts announced in the dump disagree with the keys read: the dump "
            "may be damaged or truncated."
        )
    return {
        **summary,
        "hottest": hottest,
        "by_memory": by_memory,
        "hashtags": tags,
        "advice": advice,
    }


def _streams(run: _Runner, options: ReportOptions, meta: dict) -> dict:
    items = run.rows("streams")
    hfe = run.rows("hash_field_ttl")
    advice = []
    pel = [s for s in items if (s["pending"] or 0) >= 1000]
    if pel:
        advice.append(
            f"Stream {pel[0]['key']} has {pel[0]['pending']} pending entries: consumers do not "
            "XACK; claim (XAUTOCLAIM) or acknowledge them."
        )
    untrimmed = [s for s in items if (s["length"] or 0) >= 100_000]
    if untrimmed:
        advice.append(
            f"Stream {untrimmed[0]['key']} holds {untrimmed[0]['length']} entries: cap it with "
            "XADD ... MAXLEN ~ N or XTRIM."
        )
    return {"items": items, "hash_field_ttl": hfe, "advice": advice}


def _charts(run: _Runner, options: ReportOptions) -> dict:
    """What the HTML report's charts draw: small aggregates, never per-key rows."""
    idle = run.rows("chart_idle")
    return {
        "family_tree": run.rows("chart_family_tree"),
        "slots": run.rows("chart_slots"),
        "expiry_timeline": run.rows("chart_expiry_timeline"),
        "idle": [r for r in idle if r["measure"] == "idle"],
        "lfu": [r for r in idle if r["measure"] == "lfu"],
    }


# --- --fail-on -------------------------------------------------------------------------------

FAIL_RULES = {
    # rule: (default threshold, description)
    "big-keys": (0, "keys over any big-key threshold"),
    "big-keys-critical": (0, "keys over a critical big-key threshold"),
    "no-ttl": (0, "keys without TTL in cache/session-like families"),
    "no-ttl-share": ("50%", "share of memory held by keys without TTL"),
    "expired": (0, "keys already expired at snapshot time"),
    "naming": (0, "keys breaking any enabled naming rule"),
    "encodings": (0, "non-compact keys that fit the compact thresholds"),
    "schema": (
        0,
        "breaks of the key schema (--schema): keys per key check, families per family check",
    ),
}


def parse_fail_on(
    spec: str | list | tuple | None, defaults: dict | None = None
) -> list[tuple[str, str]]:
    """`big-keys,no-ttl=10,naming:uppercase=5,no-ttl-share=30%` -> [(rule, threshold text)]."""
    if not spec:
        return []
    parts = spec if isinstance(spec, (list, tuple)) else [spec]
    out = []
    for part in parts:
        for item in str(part).split(","):
            item = item.strip()
            if not item:
                continue
            rule, _, thr = item.partition("=")
            rule = rule.strip()
            base = rule.split(":", 1)[0]
            if base not in FAIL_RULES:
                raise ValueError(
                    f"--fail-on: unknown rule {rule!r} (known: {', '.join(FAIL_RULES)}, "
                    "naming:<rule-id>, schema:<check>)"
                )
            if thr.strip() == "":
                thr = str((defaults or {}).get(rule, FAIL_RULES[base][0] if ":" not in rule else 0))
            _threshold(thr)
            out.append((rule, thr.strip()))
    return out


def _threshold(text: str) -> tuple[float, bool]:
    text = text.strip()
    pct = text.endswith("%")
    try:
        value = float(text[:-1] if pct else text)
    except ValueError:
        raise ValueError(
            f"--fail-on: bad threshold {text!r} (a number, or a percentage like 30%)"
        ) from None
    return value, pct


def evaluate_fail_on(run: _Runner, report: dict, rules: list[tuple[str, str]]) -> dict:
    """Compare findings with thresholds; `failed` is True when any check exceeds its threshold."""
    checks = []
    total_keys = report["overview"]["keys"] or 0
    for rule, thr_text in rules:
        thr, pct = _threshold(thr_text)
        if rule.split(":", 1)[0] == "schema":
            from .schema_check import fail_value

            (value, description), share = fail_value(report, rule), None
        else:
            value, share, description = _fail_value(run, rule)
        if share is None:
            share = value / total_keys if total_keys else 0.0
        if rule == "no-ttl-share":
            # value is bytes; the rule compares the share (a bare number is a fraction: 0.3 = 30 %)
            measured = share * 100 if pct else share
        else:
            measured = share * 100 if pct else value
        # what was compared with the threshold, in the threshold's unit
        shown = (
            f"{round(measured, 4):g}%"
            if pct
            else (f"{round(measured, 6):g}" if rule == "no-ttl-share" else str(value))
        )
        checks.append(
            {
                "rule": rule,
                "value": value,
                "share": round(share, 6),
                "threshold": thr_text,
                "measured": shown,
                "failed": measured > thr,
                "description": description or FAIL_RULES[rule.split(":", 1)[0]][1],
            }
        )
    failed = any(c["failed"] for c in checks)
    return {"checks": checks, "failed": failed, "exit_code": EXIT_FINDINGS if failed else 0}


def _fail_value(run: _Runner, rule: str):
    """(count, share or None, description or None) measured for one --fail-on rule."""
    if rule.startswith("naming:"):
        rid = rule.split(":", 1)[1]
        by_rule = {r["rule"]: r for r in run.rows("naming_rules", examples=0)}
        if rid not in by_rule:
            raise ValueError(f"--fail-on: unknown or disabled naming rule {rid!r}")
        return (
            by_rule[rid]["keys"],
            None,
            f"keys breaking naming rule {rid}: {by_rule[rid]['description']}",
        )
    value, share = _fail_measure(run, rule)
    return value, share, None


def _fail_measure(run: _Runner, rule: str):
    """(count or bytes, share or None) measured for one --fail-on rule (not naming:<id>)."""
    if rule in ("big-keys", "big-keys-critical"):
        rows = run.rows("big_keys", top=1)
        return (
            rows[0]["total_keys" if rule == "big-keys" else "total_critical"] if rows else 0
        ), None
    if rule == "no-ttl":
        rows = run.rows("ttl_families", top=0)
        return sum(r["keys_without_ttl"] for r in rows if r["looks_ephemeral"]), None
    if rule == "no-ttl-share":
        s = run.one("ttl_summary")
        return s["memory_without_ttl"], s["memory_share_without_ttl"]
    if rule == "expired":
        return run.one("ttl_summary")["expired_at_snapshot"], None
    if rule == "naming":
        return run.one("naming_summary")["keys"], None
    if rule == "encodings":
        return sum(r["keys"] for r in run.rows("encoding_candidates_summary")), None
    raise ValueError(f"--fail-on: unknown rule {rule!r}")
