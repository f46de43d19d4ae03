"""The inferred key schema as types: what `infer` returns, `merge_previous` completes and the
writers (TOML, markdown, JSON) read, field for field as docs/schema.md documents it ("What
`schema` infers per family", "The schema file"); tests/test_docs.py holds the two to each other."""

from __future__ import annotations

from typing import TypedDict, final


class Relation(TypedDict):
    """`observed.relations[]` (--relations): a family whose key names the members hold."""

    via: str
    family: str
    share: float
    elements: int
    keys: int


class _Observed(TypedDict):
    family: str
    keys: int
    memory_bytes: int
    type_share: float
    other_types: dict[str, int]
    encodings: list[str]
    ttl_policy: str
    ttl_share: float
    keys_expired: int
    ttl_min_ms: int | None
    ttl_median_ms: int | None
    ttl_max_ms: int | None
    # p50, p99, max
    length: list[int | None]
    value_bytes: list[int | None]
    memory_per_key: list[int | None]
    example: str


class Observed(_Observed, total=False):
    """What the dump showed of a family (queries/schema_families.sql); checks ignore it."""

    relations: list[Relation]


class Limits(TypedDict, total=False):
    """The limits a team writes into a family (spec.RULE_KEYS, checked by read.py), kept by
    `merge_previous` as written: sizes and durations are numbers or strings with a unit."""

    max_ttl: int | float | str
    max_length: int
    max_value_bytes: int | str
    max_memory: int | str
    max_family_memory: int | str


class _Inferred(TypedDict):
    pattern: str
    type: str
    description: str
    ttl: str
    observed: Observed


@final  # final: `"observed" in family` tells the two kinds of family apart
class InferredFamily(_Inferred, Limits):
    """A family the dump shows: its pattern, type, TTL policy, the team's description (and
    limits, after `merge_previous`) and what the dump showed of it."""


class _Declared(TypedDict):
    pattern: str


@final
class DeclaredFamily(_Declared, Limits, total=False):
    """A family of the previous file the dump no longer shows (`merge_previous`): what the
    team wrote, without `observed`."""

    type: str
    description: str
    ttl: str


SchemaFamily = InferredFamily | DeclaredFamily


class SchemaHead(TypedDict):
    """What the schema says of itself ([schema] in the TOML)."""

    rdbscan_schema: int
    generated_by: str
    generated_at: str
    source: str | None
    server: str | None
    delimiters: str


class _SchemaData(SchemaHead):
    families: list[SchemaFamily]


class SchemaData(_SchemaData, total=False):
    """`rdbscan schema --format json` (and what the TOML and markdown writers read);
    `relations_sample` with --relations, `redaction` (`level secret note`) with --redact."""

    relations_sample: str
    redaction: dict[str, str]
