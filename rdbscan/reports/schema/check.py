"""`rdbscan report --schema FILE`: the dump checked against a key schema (docs/schema.md).

Each key is assigned to the most specific declared family whose pattern it matches (most literal
characters, then the first in the file) into the TEMP TABLE rschema_keys; queries/schema_check.sql
then counts the breaks per check, declared family and key family.  The assignment is the one
statement built here: its regular expressions are constants written into the SQL, because DuckDB
compiles a regular expression taken from a column once per row (about a thousand times slower).
A literal prefix and suffix test runs before each regular expression, so most keys are tested
against the few patterns that share their first characters.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, cast

from ..engine import querylib, relations
from .read import Schema
from .spec import PLACEHOLDER_RE, literal_length, literal_prefix, literal_suffix

CHECKS = {
    # check: (what it counts, unit of the count for --fail-on)
    "undocumented": "keys matching no declared pattern",
    "type": "keys of another type than declared",
    "ttl-required": 'keys without an expiry in families declared ttl = "required"',
    "ttl-none": 'keys with an expiry in families declared ttl = "none"',
    "max-ttl": "keys whose TTL at snapshot time exceeds max_ttl",
    "max-length": "keys with more elements (strings: bytes) than max_length",
    "max-value-bytes": "keys whose largest value exceeds max_value_bytes",
    "max-memory": "keys using more memory than max_memory",
    "max-family-memory": "declared families using more memory than max_family_memory",
    "no-keys": "declared families no key matches",
}
FAMILY_CHECKS = ("max-family-memory", "no-keys")  # counted in families, the others in keys

# check -> the declared limit it compares with (a Rule attribute)
LIMIT = {
    "max-ttl": "max_ttl_ms",
    "max-length": "max_length",
    "max-value-bytes": "max_value_bytes",
    "max-memory": "max_memory",
    "max-family-memory": "max_family_memory",
}


def _lit(text: str) -> str:
    return querylib.sql_literal(text)


def assignment_sql(schema: Schema) -> str:
    """CREATE TEMP TABLE rschema_keys: the columns the checks read, and `rule`, the position of
    the declared family each key belongs to (NULL: none)."""
    whens = []
    for r in sorted(schema.rules, key=lambda r: (-literal_length(r.pattern), r.index)):
        if not PLACEHOLDER_RE.search(r.pattern):
            whens.append(f"WHEN key = {_lit(r.pattern)} THEN {r.index}")
            continue
        conds = []
        prefix, suffix = literal_prefix(r.pattern), literal_suffix(r.pattern)
        if prefix:
            conds.append(f"starts_with(key, {_lit(prefix)})")
        if suffix:
            conds.append(f"ends_with(key, {_lit(suffix)})")
        conds.append(f"regexp_full_match(key, {_lit(r.regex(schema.delimiters))})")
        whens.append(f"WHEN {' AND '.join(conds)} THEN {r.index}")
    rule = f"CASE {' '.join(whens)} END" if whens else "NULL"
    return (
        "CREATE OR REPLACE TEMP TABLE rschema_keys AS "
        "SELECT dump_id, db, key, pattern AS family, type, memory_bytes, expire_at_ms, ttl_ms, "
        f"length, max_elem_bytes, ({rule})::INTEGER AS rule FROM rkeys"
    )


def create_relations(con, schema: Schema) -> None:
    """TEMP TABLEs rschema_rules (the declared families) and rschema_keys; rkeys must exist."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE rschema_rules (rule INTEGER, pattern VARCHAR, type VARCHAR, "
        "ttl VARCHAR, max_ttl_ms BIGINT, max_length BIGINT, max_value_bytes BIGINT, "
        "max_memory BIGINT, max_family_memory BIGINT)"
    )
    if schema.rules:
        con.executemany(
            "INSERT INTO rschema_rules VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                [
                    r.index,
                    r.pattern,
                    r.type,
                    r.ttl,
                    r.max_ttl_ms,
                    r.max_length,
                    r.max_value_bytes,
                    r.max_memory,
                    r.max_family_memory,
                ]
                for r in schema.rules
            ],
        )
    con.execute(assignment_sql(schema))


class SchemaCheck(TypedDict):
    """`checks[]`: one check's totals (`count`: keys, or families for FAMILY_CHECKS)."""

    check: str
    description: str
    unit: str
    count: int
    keys: int
    memory_bytes: int
    families: int


class SchemaBreak(TypedDict):
    """`items[]`: a row of queries/schema_check.sql, with the declared family's pattern and
    the type, TTL policy or limit it declares."""

    check: str
    rule: int | None
    family: str | None
    found: str | None
    keys: int
    memory_bytes: int | None
    measured: int | None
    example: str | None
    pattern: str | None
    declared: str | int | None


class SchemaCheckData(TypedDict):
    """The report's `schema` object (docs/json.md, docs/schema.md)."""

    file: str
    delimiters: str
    families_declared: int
    keys: int
    keys_documented: int
    memory_bytes: int
    memory_documented: int
    violations: int
    checks: list[SchemaCheck]
    items: list[SchemaBreak]
    advice: list[str]


def section(run, schema: Schema, top: int) -> SchemaCheckData:
    """The report's `schema` section (docs/json.md): totals per check, then the rows (top N per
    check by memory), with the declared pattern and its limit next to each."""
    relations.prepare(run.con, run.values, created=run.created)
    create_relations(run.con, schema)
    rows = run.rows("schema_check")
    rules = {r.index: r for r in schema.rules}
    totals = run.con.execute(
        "SELECT count(*), count(rule), coalesce(sum(memory_bytes), 0), "
        "coalesce(sum(memory_bytes) FILTER (WHERE rule IS NOT NULL), 0) FROM rschema_keys"
    ).fetchone()
    checks: list[SchemaCheck] = []
    items: dict[str, list[SchemaBreak]] = {c: [] for c in CHECKS}
    for row in rows:
        rule = rules.get(row["rule"])
        row["pattern"] = rule.pattern if rule else None
        row["declared"] = (
            (
                rule.type
                if row["check"] == "type"
                else rule.ttl
                if row["check"] in ("ttl-required", "ttl-none")
                else getattr(rule, LIMIT[row["check"]])
                if row["check"] in LIMIT
                else None
            )
            if rule
            else None
        )
        items[row["check"]].append(cast(SchemaBreak, row))
    for name, description in CHECKS.items():
        found = items[name]
        unit = "families" if name in FAMILY_CHECKS else "keys"
        checks.append(
            {
                "check": name,
                "description": description,
                "unit": unit,
                "count": len(found) if unit == "families" else sum(r["keys"] for r in found),
                "keys": sum(r["keys"] for r in found),
                "memory_bytes": sum(r["memory_bytes"] or 0 for r in found),
                "families": len({(r["rule"], r["family"]) for r in found}),
            }
        )
    violations = sum(c["count"] for c in checks)
    out_items = [r for name in CHECKS for r in items[name][: max(top, 1)]]
    advice = _advice({c["check"]: c for c in checks})
    return {
        "file": schema.path,
        "delimiters": schema.delimiters,
        "families_declared": len(schema.rules),
        "keys": totals[0],
        "keys_documented": totals[1],
        "memory_bytes": totals[2],
        "memory_documented": totals[3],
        "violations": violations,
        "checks": checks,
        "items": out_items,
        "advice": advice,
    }


def _advice(by: dict[str, SchemaCheck]) -> list[str]:
    """What to do about the breaks; `by`: each check's totals, by name."""
    advice = []
    if by["undocumented"]["keys"]:
        advice.append(
            f"{by['undocumented']['keys']} key(s) in {by['undocumented']['families']} "
            "undocumented families: add them to the schema (rdbscan schema writes entries) or "
            "find the code writing them."
        )
    if by["type"]["keys"]:
        advice.append(
            "Keys of another type than declared usually mean two families share a name: "
            "rename one of them."
        )
    if by["ttl-required"]["keys"]:
        advice.append(
            "Keys without an expiry in families that must expire grow without bound: "
            "set the TTL where they are written (SET ... EX, EXPIRE)."
        )
    if by["no-keys"]["count"]:
        advice.append(
            "Declared families without keys are dead documentation, or a writer that "
            "changed its key names: check, then remove them from the schema."
        )
    return advice


def fail_value(report: Mapping[str, Any], rule: str) -> tuple[int, str | None]:
    """`--fail-on schema` (all violations) or `schema:<check>`: the count and what it counts."""
    s = report.get("schema")
    if s is None:
        raise ValueError(f"--fail-on {rule}: needs --schema FILE")
    if rule == "schema":
        return s["violations"], None
    name = rule.split(":", 1)[1]
    for c in s["checks"]:
        if c["check"] == name:
            return c["count"], f"schema: {c['description']}"
    raise ValueError(f"--fail-on: unknown schema check {name!r} (checks: {', '.join(CHECKS)})")


def load_for_report(path: str | None, checks: list[tuple[str, str]], delimiters: str | None):
    """`report --schema`: the schema (or None) and the delimiters to report with, the schema's
    unless --delimiters says otherwise; ValueError for a bad file, or --fail-on schema without one."""
    from .read import load_schema

    wanted = [rule for rule, _ in checks if rule.split(":", 1)[0] == "schema"]
    if not path:
        if wanted:
            raise ValueError(f"--fail-on {wanted[0]}: needs --schema FILE")
        return None, delimiters
    for rule in wanted:
        if ":" in rule and rule.split(":", 1)[1] not in CHECKS:
            raise ValueError(
                f"--fail-on: unknown schema check {rule.split(':', 1)[1]!r} "
                f"(checks: {', '.join(CHECKS)})"
            )
    schema = load_schema(path)
    if delimiters and delimiters != schema.delimiters:
        raise ValueError(
            f"--delimiters {delimiters!r}: {path} was written for delimiters "
            f"{schema.delimiters!r} (its families would not match)"
        )
    return schema, schema.delimiters
