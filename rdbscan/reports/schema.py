"""Key schemas: infer one from a dump (`rdbscan schema`), write it as TOML, markdown or JSON.

A key schema is one entry per key family: its pattern, Redis type, TTL policy, what the dump shows
of it (keys, memory, sizes) and a description for the team to write.  docs/schema.md documents the
file format and the pattern language; the figures come from queries/schema_families.sql and the
placeholder types from queries/schema_placeholders.sql.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import tempfile
from dataclasses import dataclass

from .._version import __version__
from ..db import sizes
from ..db.macros import segment_delimiters
from .engine import querylib
from .engine.relations import REPORTED_DUMPS, prepare, relations_used

SCHEMA_FORMAT = 1
# First line of every TOML / markdown schema rdbscan writes: `schema -o` may replace such a file.
HEADER = "# rdbscan key schema"

# --- the pattern language (docs/schema.md, "Patterns") --------------------------------------------

# Each placeholder stands for one whole value; any other text, braces included, is literal
# (`{user:{id}}:cart` is the hashtag `{user:` + an integer + `}:cart`).
PLACEHOLDERS = {
    "id": "[0-9]+",
    "ts": "[0-9]{10}|[0-9]{13}",
    "date": r"(?:19|20)[0-9]{2}-?(?:0[1-9]|1[0-2])(?:-?(?:0[1-9]|[12][0-9]|3[01]))?(?:[T ][0-9]{2})?",
    "uuid": "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "hex": "[0-9a-fA-F]+",
    "*": None,  # one or more characters other than a delimiter
}
PLACEHOLDER_RE = re.compile(r"\{(id|ts|date|uuid|hex|\*)\}")


def _escape(text: str) -> str:
    """A literal for both Python's re and RE2: ASCII other than letters and digits as \\xhh."""
    return "".join(c if c.isalnum() or ord(c) > 127 else f"\\x{ord(c):02x}" for c in text)


def pattern_regex(pattern: str, delimiters: str = ":") -> str:
    """The regular expression (RE2 and Python) a whole key must match to belong to `pattern`."""
    out, pos = [], 0
    for m in PLACEHOLDER_RE.finditer(pattern):
        out.append(_escape(pattern[pos : m.start()]))
        rx = PLACEHOLDERS[m.group(1)]
        if rx is None:
            rx = "[^" + "".join(f"\\x{ord(c):02x}" for c in segment_delimiters(delimiters)) + "]+"
        out.append(f"(?:{rx})")
        pos = m.end()
    out.append(_escape(pattern[pos:]))
    return "".join(out)


def literal_prefix(pattern: str) -> str:
    m = PLACEHOLDER_RE.search(pattern)
    return pattern[: m.start()] if m else pattern


def literal_suffix(pattern: str) -> str:
    ends = [m.end() for m in PLACEHOLDER_RE.finditer(pattern)]
    return pattern[ends[-1] :] if ends else pattern


def literal_length(pattern: str) -> int:
    return len(PLACEHOLDER_RE.sub("", pattern))


# --- inference -------------------------------------------------------------------------------


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

    from ..rdb.sample import sample_elements

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


def infer(con, options: InferOptions | None = None, source: str | None = None, warn=None) -> dict:
    """The schema of the keys in an open rdbscan database: one entry per family, largest first."""
    from .format import plain as _plain

    options = options or InferOptions()
    values = {
        "dump_id": options.dump_id,
        "delimiters": options.delimiters,
        "min_keys": options.min_keys,
    }
    queries = querylib.bundled_queries()
    created: set = set()

    def rows(name, **more):
        q = queries[name]
        prepare(con, values, needs=relations_used(q), created=created)
        return [_plain(r) for r in querylib.run_dicts(con, q, {**values, **more})]

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
    families = []
    for r in fams:
        policy = ttl_policy(r)
        entry = {
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
                {"via": via, **x} for x in related.get(r["pattern"], [])
            ]
        families.append(entry)
    return {
        "rdbscan_schema": SCHEMA_FORMAT,
        "generated_by": f"rdbscan {__version__}",
        "generated_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "source": source,
        "server": f"{dump[0] or 'redis'} {dump[1] or ''}".strip() if dump else None,
        "delimiters": options.delimiters,
        **({"relations_sample": sample_statement()} if options.relations else {}),
        "families": families,
    }


# --- writing ---------------------------------------------------------------------------------


def _toml_str(s: str) -> str:
    """A TOML basic string (json.dumps escapes all but DEL, which TOML also forbids raw)."""
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        return (
            "{"
            + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items() if x is not None)
            + "}"
        )
    raise TypeError(f"no TOML form for {v!r}")


def _toml_key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else _toml_str(k)


RULE_KEYS = (
    "type",
    "ttl",
    "max_ttl",
    "max_length",
    "max_value_bytes",
    "max_memory",
    "max_family_memory",
)


def render_toml(schema: dict) -> str:
    lines = [
        HEADER + ": one [[family]] per key family; the format and the pattern language are in",
        "# docs/schema.md. Write the descriptions, tighten the rules (ttl, max_ttl, max_length,",
        "# max_value_bytes, max_memory, max_family_memory), commit the file, and check dumps with",
        "#   rdbscan report DUMP --schema THIS_FILE --fail-on schema",
        "# [family.observed] is what the dump showed when the file was written; checks ignore it.",
        "",
        "[schema]",
        f"format = {SCHEMA_FORMAT}",
        f"delimiters = {_toml_str(schema.get('delimiters') or ':')}",
    ]
    for key in ("generated_by", "generated_at", "source", "server", "relations_sample"):
        if schema.get(key):
            lines.append(f"{key} = {_toml_str(str(schema[key]))}")
    for fam in schema["families"]:
        lines += ["", "[[family]]", f"pattern = {_toml_str(fam['pattern'])}"]
        if fam.get("type") is not None:
            lines.append(f"type = {_toml_str(fam['type'])}")
        lines.append(f"description = {_toml_str(fam.get('description') or '')}")
        for key in RULE_KEYS[1:]:
            if fam.get(key) is not None:
                lines.append(f"{key} = {_toml_value(fam[key])}")
        obs = fam.get("observed")
        if obs:
            lines.append("[family.observed]")
            for k, v in obs.items():
                if v is not None and v != {} and v != []:
                    lines.append(f"{_toml_key(k)} = {_toml_value(v)}")
    return "\n".join(lines) + "\n"


def _md_cell(text) -> str:
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _md_code(text: str) -> str:
    text = _md_cell(text)
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def ttl_label(fam: dict) -> str:
    """The TTL column of the markdown table: the declared policy, and what the dump showed."""
    from .format import fmt_duration_ms

    obs = fam.get("observed") or {}
    declared = fam.get("ttl") or "optional"
    text = {"required": "required", "none": "none", "optional": "optional"}.get(declared, declared)
    if fam.get("max_ttl") is not None:
        text += f", max {fam['max_ttl']}"
    if obs.get("ttl_policy") == "mixed":
        text += f" ({obs['ttl_share']:.0%} of keys)"
    if obs.get("ttl_median_ms") is not None:
        text += f"; median {fmt_duration_ms(obs['ttl_median_ms'])}"
    return text


def render_markdown(schema: dict) -> str:
    from .format import fmt_bytes, fmt_int

    lines = [HEADER, ""]
    src = ", ".join(x for x in (schema.get("source"), schema.get("server")) if x)
    if src:
        lines += [
            f"Inferred from {_md_cell(src)} by {schema.get('generated_by', 'rdbscan')}. "
            "Patterns: docs/schema.md.",
            "",
        ]
    lines += [
        "| pattern | type | description | TTL | keys | memory | example |",
        "|---|---|---|---|--:|--:|---|",
    ]
    for fam in schema["families"]:
        obs = fam.get("observed") or {}
        typ = fam.get("type") or "any"
        if obs.get("other_types"):
            typ += " (also " + ", ".join(f"{t} {n}" for t, n in obs["other_types"].items()) + ")"
        lines.append(
            "| "
            + " | ".join(
                [
                    _md_code(fam["pattern"]),
                    _md_cell(typ),
                    _md_cell(fam.get("description") or ""),
                    _md_cell(ttl_label(fam)),
                    fmt_int(obs.get("keys")),
                    fmt_bytes(obs.get("memory_bytes")),
                    _md_code(obs["example"]) if obs.get("example") is not None else "",
                ]
            )
            + " |"
        )
    rel = [
        f"- {_md_code(fam['pattern'])} {x['via']} → {_md_code(x['family'])} "
        f"({x['share']:.0%} of {fmt_int(x['elements'])} elements sampled in {fmt_int(x['keys'])} keys)"
        for fam in schema["families"]
        for x in (fam.get("observed") or {}).get("relations") or []
    ]
    if rel:
        lines += [
            "",
            "Relationships (" + _md_cell(schema.get("relations_sample") or "sampled") + "):",
            "",
        ]
        lines += rel
    return "\n".join(lines) + "\n"


def render_json(schema: dict) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


RENDERERS = {"toml": render_toml, "markdown": render_markdown, "json": render_json}


class SchemaOutputError(Exception):
    pass


def written_by_rdbscan(path: str) -> bool:
    """Whether a file is a schema rdbscan wrote (TOML/markdown header, or the JSON key)."""
    try:
        with open(path, encoding="utf-8") as fh:
            head = fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False
    if head.startswith(HEADER):
        return True
    return head.lstrip().startswith("{") and '"rdbscan_schema"' in head


def write_output(path: str, text: str) -> None:
    """Write `text` to `path` through a temporary file in the same directory.  An existing file
    is replaced only when rdbscan wrote it: a user's file is never overwritten."""
    if os.path.lexists(path) and not (os.path.isfile(path) and written_by_rdbscan(path)):
        raise SchemaOutputError(
            f"{path}: exists and is not a schema rdbscan wrote; "
            "not overwriting it (choose another -o, or remove the file)"
        )
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".rdbscan-schema-", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


# --- reading and validating a schema file ---------------------------------------------------

TTL_VALUES = ("required", "none", "optional")
_TOP_KEYS = {"schema", "family"}
_SCHEMA_KEYS = {
    "format",
    "delimiters",
    "generated_by",
    "generated_at",
    "source",
    "server",
    "relations_sample",
}
_FAMILY_KEYS = {"pattern", "description", "observed", *RULE_KEYS}
_DURATION = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*(ms|s|m|min|h|d|w)?\s*", re.I)
_DURATION_MS = {
    "ms": 1,
    "s": 1000,
    "m": 60_000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
    "w": 604_800_000,
}


def parse_duration_ms(value) -> int:
    """`max_ttl`: seconds as a number, or a string with a unit: "500ms", "90s", "30m", "12h", "7d", "2w"."""
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, (int, float)):
        if value < 0:
            raise ValueError
        return int(value * 1000)
    m = _DURATION.fullmatch(str(value))
    if not m:
        raise ValueError
    return int(float(m.group(1)) * _DURATION_MS[(m.group(2) or "s").lower()])


def parse_size(value) -> int:
    """Sizes in bytes: a number, or a string with a unit ("4KB", "1.5MiB"; KB = KiB = 1024)."""
    if isinstance(value, bool):
        raise ValueError
    if isinstance(value, int):
        if value < 0:
            raise ValueError
        return value
    return sizes.parse_size(str(value), kb=1024)


@dataclass
class Rule:
    """One [[family]] of a schema file, validated."""

    index: int  # 1-based position in the file
    pattern: str
    type: str | None = None
    description: str = ""
    ttl: str = "optional"
    max_ttl: str | None = None
    max_ttl_ms: int | None = None
    max_length: int | None = None
    max_value_bytes: int | None = None
    max_memory: int | None = None
    max_family_memory: int | None = None
    raw: dict | None = None

    def regex(self, delimiters: str) -> str:
        return pattern_regex(self.pattern, delimiters)


@dataclass
class Schema:
    path: str
    delimiters: str
    rules: list[Rule]


def parse_schema(data: dict, origin: str) -> Schema:
    """A schema from a parsed TOML document; ValueError with one line naming what is wrong."""
    unknown = sorted(set(data) - _TOP_KEYS)
    if unknown:
        raise ValueError(
            f"{origin}: unknown key {unknown[0]!r} at the top level (known: [schema], [[family]])"
        )
    head = data.get("schema", {})
    if not isinstance(head, dict):
        raise ValueError(f"{origin}: [schema] must be a table")
    unknown = sorted(set(head) - _SCHEMA_KEYS)
    if unknown:
        raise ValueError(
            f"{origin}: [schema]: unknown key {unknown[0]!r} (known: {', '.join(sorted(_SCHEMA_KEYS))})"
        )
    fmt = head.get("format", SCHEMA_FORMAT)
    if fmt != SCHEMA_FORMAT:
        raise ValueError(
            f"{origin}: [schema] format = {fmt!r}: this rdbscan reads format {SCHEMA_FORMAT}"
        )
    delimiters = head.get("delimiters", ":")
    if not isinstance(delimiters, str) or not delimiters:
        raise ValueError(f"{origin}: [schema] delimiters must be a non-empty string")
    fams = data.get("family", [])
    if not isinstance(fams, list):
        raise ValueError(f"{origin}: family must be an array of tables ([[family]])")
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, fam in enumerate(fams, 1):
        where = f"{origin}: family {i}"
        if not isinstance(fam, dict):
            raise ValueError(f"{where}: must be a table")
        pattern = fam.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise ValueError(f"{where}: needs a pattern (a non-empty string)")
        where = f"{origin}: family {i} ({pattern})"
        unknown = sorted(set(fam) - _FAMILY_KEYS)
        if unknown:
            raise ValueError(
                f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_FAMILY_KEYS))})"
            )
        if pattern in seen:
            raise ValueError(f"{where}: the same pattern as family {seen[pattern]}")
        seen[pattern] = i
        rule = Rule(index=i, pattern=pattern, raw=fam)
        for key in ("type", "description"):
            if key in fam and not isinstance(fam[key], str):
                raise ValueError(f"{where}: {key} must be a string")
        rule.type = fam.get("type") or None
        rule.description = fam.get("description", "")
        ttl = fam.get("ttl", "optional")
        if ttl not in TTL_VALUES:
            raise ValueError(f"{where}: ttl = {ttl!r}: expected one of {', '.join(TTL_VALUES)}")
        rule.ttl = ttl
        if "max_ttl" in fam:
            try:
                rule.max_ttl_ms = parse_duration_ms(fam["max_ttl"])
            except ValueError:
                raise ValueError(
                    f"{where}: max_ttl = {fam['max_ttl']!r}: expected seconds or a duration "
                    'like "90s", "30m", "12h", "7d"'
                ) from None
            rule.max_ttl = str(fam["max_ttl"])
            if ttl == "none":
                raise ValueError(
                    f'{where}: max_ttl with ttl = "none" (keys of this family must not expire)'
                )
        for key in ("max_length", "max_value_bytes", "max_memory", "max_family_memory"):
            if key in fam:
                try:
                    value = parse_size(fam[key]) if key != "max_length" else _count(fam[key])
                except ValueError:
                    raise ValueError(
                        f"{where}: {key} = {fam[key]!r}: expected a non-negative "
                        + (
                            "integer"
                            if key == "max_length"
                            else 'number of bytes or a size like "4KB", "10MB"'
                        )
                    ) from None
                setattr(rule, key, value)
        obs = fam.get("observed", {})
        if not isinstance(obs, dict):
            raise ValueError(f"{where}: observed must be a table")
        rules.append(rule)
    return Schema(path=origin, delimiters=delimiters, rules=rules)


def _count(value) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError
    return value


def load_schema(path: str) -> Schema:
    """Read and validate a TOML schema file; ValueError with one line for any mistake."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{path}: not valid TOML: {e}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"{path}: cannot read: {e}") from None
    return parse_schema(data, path)


def merge_previous(schema: dict, previous: Schema) -> dict:
    """A regenerated schema keeping what the team wrote in the previous file: descriptions and
    rules of the families whose pattern is in both, and declared families the dump no longer
    shows (after the new ones, without observed figures)."""
    old = {r.pattern: r.raw or {} for r in previous.rules}
    for fam in schema["families"]:
        raw = old.pop(fam["pattern"], None)
        if raw is None:
            continue
        for key in ("description", *RULE_KEYS):
            if key in raw:
                fam[key] = raw[key]
            elif key not in ("type", "description", "ttl"):
                fam.pop(key, None)
    for raw in old.values():
        schema["families"].append({k: v for k, v in raw.items() if k != "observed"})
    return schema
