"""A key schema inferred from a database (`rdbscan schema`): one entry per key family with its
pattern, Redis type, TTL policy, what the dump shows of it (keys, memory, sizes) and a
description for the team to write.  The figures come from queries/schema_families.sql, the
placeholder types from queries/schema_placeholders.sql, the relationships (--relations) from
queries/schema_relations.sql."""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass
from typing import cast

from ..._version import __version__
from ...db.macros import segment_delimiters
from ..engine.relations import REPORTED_DUMPS, Runner
from .data import InferredFamily, Relation, SchemaData, SchemaFamily, SchemaHead
from .spec import SCHEMA_FORMAT


@dataclass
class InferOptions:
    dump_id: int = 0
    delimiters: str = ":"
    min_keys: int = 1
    relations: bool = False  # sample elements for relationships (schema --relations)


# schema --relations: per family, the first SAMPLE_KEYS collections whose record is at most
# SAMPLE_BYTES long, the first SAMPLE_ELEMENTS elements of each (queries/schema_sample_keys.sql).
SAMPLE_KEYS = 10
SAMPLE_ELEMENTS = 100
SAMPLE_BYTES = 65536


def sample_statement() -> str:
    return (
        f"per family the first {SAMPLE_KEYS} sets, sorted sets, lists and hashes of at most "
        f"{SAMPLE_BYTES} bytes in the file, the first {SAMPLE_ELEMENTS} members (hashes: values) "
        "of each"
    )


def relations(con, rows, warn=None) -> dict[str, list[dict]]:
    """Per family, the families whose key names its sampled elements hold (schema_relations).

    rows(name, **values) runs a bundled query.  Elements are read again from the dumps' files
    (rdb/sample.py); a dump whose file is gone (or was read from standard input) is not
    sampled, and `warn` is told so."""
    import pyarrow as pa

    from ...rdb.sample import sample_elements

    wanted: dict[str, dict[int, tuple[str, str]]] = {}
    for r in rows("schema_sample_keys", sample_keys=SAMPLE_KEYS, sample_bytes=SAMPLE_BYTES):
        wanted.setdefault(r["path"], {})[r["file_offset"]] = (r["pattern"], r["key"])
    cols: dict[str, list] = {"pattern": [], "key": [], "element": []}
    for path, keys in wanted.items():
        if not path or path == "<stdin>" or not os.path.isfile(path):
            if warn:
                warn(f"{path or '?'}: not found, its elements were not sampled for relations")
            continue
        for offset, elements in sample_elements(path, keys, SAMPLE_ELEMENTS):
            pattern, key = keys[offset]
            for e in elements or ():
                cols["pattern"].append(pattern)
                cols["key"].append(key)
                cols["element"].append(e.decode("utf-8", "backslashreplace"))
    con.register(
        "rsample_arrow", pa.table(cols, schema=pa.schema([(n, pa.string()) for n in cols]))
    )
    try:
        con.execute("CREATE OR REPLACE TEMP TABLE rsample AS SELECT * FROM rsample_arrow")
    finally:
        con.unregister("rsample_arrow")
    out: dict[str, list[dict]] = {}
    for r in rows("schema_relations"):
        out.setdefault(r["pattern"], []).append(
            {
                "family": r["target"],
                "share": r["share"],
                "elements": r["elements"],
                "keys": r["keys"],
            }
        )
    return out


def _placeholder(row: dict) -> str:
    """The typed placeholder for one placeholder position of a family (schema_placeholders)."""
    if not row["aligned"]:
        return "{*}"
    if "date" in row["segment"] and row["all_date"]:
        return "{date}"
    if row["all_ts"]:
        return "{ts}"
    if row["all_int"]:
        return "{id}"
    if row["all_uuid"]:
        return "{uuid}"
    if row["all_hex"]:
        return "{hex}"
    if row["all_date"]:
        return "{date}"
    return "{*}"


def typed_pattern(family: str, placeholders: dict[int, dict], delimiters: str) -> str:
    """The family with each {id}/{date} segment replaced by its typed placeholder."""
    if not placeholders:
        return family
    parts = re.split("([" + re.escape(segment_delimiters(delimiters)) + "])", family)
    for position, row in placeholders.items():
        i = 2 * (position - 1)
        if i < len(parts):
            seg = parts[i]
            parts[i] = (
                seg.replace("{id}", _placeholder(row), 1)
                if "{id}" in seg
                else seg.replace("{date}", _placeholder(row), 1)
            )
    return "".join(parts)


def ttl_policy(row: dict) -> str:
    if row["keys_with_ttl"] == 0:
        return "never"
    return "always" if row["keys_with_ttl"] == row["keys"] else "mixed"


_DECLARED_TTL = {"never": "none", "always": "required", "mixed": "optional"}


def infer(
    con, options: InferOptions | None = None, source: str | None = None, warn=None
) -> SchemaData:
    """The schema of the keys in an open rdbscan database: one entry per family, largest first."""
    options = options or InferOptions()
    values = {
        "dump_id": options.dump_id,
        "delimiters": options.delimiters,
        "min_keys": options.min_keys,
    }
    rows = Runner(con, values).rows  # the report's: base relations, retries with more room
    fams = rows("schema_families")
    slots: dict[str, dict[int, dict]] = {}
    for r in rows("schema_placeholders"):
        slots.setdefault(r["pattern"], {})[r["position"]] = r
    dump = con.execute(
        f"SELECT server, server_version FROM dumps WHERE dump_id IN ({REPORTED_DUMPS}) "
        "ORDER BY dump_id LIMIT 1",
        {"dump_id": options.dump_id},
    ).fetchone()
    related = relations(con, rows, warn) if options.relations else {}
    families: list[SchemaFamily] = []
    for r in fams:
        policy = ttl_policy(r)
        entry: InferredFamily = {
            "pattern": typed_pattern(r["pattern"], slots.get(r["pattern"], {}), options.delimiters),
            "type": r["type"],
            "description": "",
            "ttl": _DECLARED_TTL[policy],
            "observed": {
                "family": r["pattern"],
                "keys": r["keys"],
                "memory_bytes": r["memory_bytes"],
                "type_share": r["type_share"],
                "other_types": {t["type"]: t["keys"] for t in r["types"][1:]},
                "encodings": r["encodings"],
                "ttl_policy": policy,
                "ttl_share": r["ttl_share"],
                "keys_expired": r["keys_expired"],
                "ttl_min_ms": r["ttl_min_ms"],
                "ttl_median_ms": r["ttl_median_ms"],
                "ttl_max_ms": r["ttl_max_ms"],
                "length": [r["length_p50"], r["length_p99"], r["length_max"]],
                "value_bytes": [r["value_bytes_p50"], r["value_bytes_p99"], r["value_bytes_max"]],
                "memory_per_key": [r["memory_p50"], r["memory_p99"], r["memory_max"]],
                "example": r["example"],
            },
        }
        if options.relations:
            via = "values" if r["type"] == "hash" else "members"
            entry["observed"]["relations"] = [
                cast(Relation, {"via": via, **x}) for x in related.get(r["pattern"], [])
            ]
        families.append(entry)
    head: SchemaHead = {
        "rdbscan_schema": SCHEMA_FORMAT,
        "generated_by": f"rdbscan {__version__}",
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "server": f"{dump[0] or 'redis'} {dump[1] or ''}".strip() if dump else None,
        "delimiters": options.delimiters,
    }
    if options.relations:
        return {**head, "relations_sample": sample_statement(), "families": families}
    return {**head, "families": families}
