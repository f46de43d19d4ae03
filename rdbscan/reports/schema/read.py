"""A key schema file read and validated (`report --schema FILE`, `schema -o` keeping what the
team wrote): unknown names are errors, sizes and durations are parsed."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from ...db import sizes
from .spec import RULE_KEYS, SCHEMA_FORMAT, TTL_VALUES, pattern_regex

if TYPE_CHECKING:
    from .data import DeclaredFamily, SchemaData

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
    delimiters = _schema_table(data, origin)
    fams = data.get("family", [])
    if not isinstance(fams, list):
        raise ValueError(f"{origin}: family must be an array of tables ([[family]])")
    rules: list[Rule] = []
    seen: dict[str, int] = {}
    for i, fam in enumerate(fams, 1):
        rules.append(_family(fam, i, origin, seen))
    return Schema(path=origin, delimiters=delimiters, rules=rules)


def _schema_table(data: dict, origin: str) -> str:
    """The top level and the [schema] table checked; the delimiters it declares."""
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
    return delimiters


def _family(fam, i: int, origin: str, seen: dict[str, int]) -> Rule:
    """One [[family]] checked, as a Rule; `seen`: the patterns before it, by position."""
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
    return rule


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


def merge_previous(schema: SchemaData, previous: Schema) -> SchemaData:
    """A regenerated schema keeping what the team wrote in the previous file: descriptions and
    rules of the families whose pattern is in both, and declared families the dump no longer
    shows (after the new ones, without observed figures)."""
    old = {r.pattern: r.raw or {} for r in previous.rules}
    for fam in schema["families"]:
        raw = old.pop(fam["pattern"], None)
        if raw is None:
            continue
        entry = cast(dict, fam)  # the rules as written: parse_schema checked them
        for key in ("description", *RULE_KEYS):
            if key in raw:
                entry[key] = raw[key]
            elif key not in ("type", "description", "ttl"):
                entry.pop(key, None)
    for raw in old.values():  # checked by parse_schema: the keys of a DeclaredFamily
        declared = {k: v for k, v in raw.items() if k != "observed"}
        schema["families"].append(cast("DeclaredFamily", declared))
    return schema
