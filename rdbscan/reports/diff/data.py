"""The diff's JSON document as types: what `build_diff` returns and the renderers read, field for
field as docs/diff.md documents it ("JSON contract"); tests/test_docs.py holds the two to each
other.  Rows of the diff's SQL (diff/queries/) keep the columns and order of their query.  The
trend's: trend_data.py."""

from __future__ import annotations

from typing import TypedDict


class Redaction(TypedDict):
    """`redaction` under --redact (rdbscan/export/redact.py Redactor.describe, docs/redact.md)."""

    level: str
    secret: str
    note: str


class DiffOptionsData(TypedDict):
    top: int
    delimiters: str


class SideData(TypedDict):
    """`old`, `new`: one snapshot (snapshots.Snapshot.describe)."""

    database: str
    instance: str | None
    snapshot_id: int
    dump_ids: list[int]
    paths: list[str]
    snapshot_ms: int
    snapshot_time: str | None
    snapshot_source: str
    keys: int
    used_mem: int | None
    server: str | None
    server_version: str | None
    rdb_version: int | None
    complete: bool
    label: str


class _TotalsRow(TypedDict):
    scope: str
    old_keys: int
    new_keys: int
    delta_keys: int
    keys_growth: float | None
    old_memory_bytes: int
    new_memory_bytes: int
    delta_memory_bytes: int
    memory_growth: float | None
    old_keys_with_ttl: int
    new_keys_with_ttl: int
    delta_keys_with_ttl: int
    keys_with_ttl_growth: float | None
    old_used_mem: int | None
    new_used_mem: int | None
    delta_used_mem: int | None
    used_mem_growth: float | None


class TotalsAll(_TotalsRow):
    """`totals.all`: the row of queries/totals.sql over all keys (scope `all`)."""

    name: None


class TotalsPart(_TotalsRow):
    """`totals.by_db[]`, `totals.by_type[]`: the rows of one db or type (without used-mem)."""

    name: str


class Totals(TypedDict):
    all: TotalsAll
    by_db: list[TotalsPart]
    by_type: list[TotalsPart]


class FamilyChange(TypedDict):
    """`families.items[]` (queries/families.sql)."""

    pattern: str
    status: str
    old_keys: int
    new_keys: int
    delta_keys: int
    old_memory_bytes: int
    new_memory_bytes: int
    delta_memory_bytes: int
    memory_growth: float | None
    memory_per_day: float | None
    keys_per_day: float | None
    added: int
    removed: int
    changed: int


class FamilyTtlChange(TypedDict):
    """`families.ttl_changes[]` (queries/family_ttl.sql)."""

    pattern: str
    old_keys: int
    new_keys: int
    old_keys_with_ttl: int
    new_keys_with_ttl: int
    old_ttl_coverage: float | None
    new_ttl_coverage: float | None
    delta_ttl_coverage: float | None
    old_median_ttl_ms: int | None
    new_median_ttl_ms: int | None


class Families(TypedDict):
    total: int
    new: int
    vanished: int
    items: list[FamilyChange]
    ttl_changes: list[FamilyTtlChange]


class KeyFamilyChanges(TypedDict):
    """`keys.by_family[]` (queries/keys.sql)."""

    pattern: str
    added: int
    removed: int
    changed: int
    added_memory_bytes: int
    removed_memory_bytes: int
    changed_delta_memory_bytes: int


class KeyGrower(TypedDict):
    """`keys.top_growers[]` (queries/top_growers.sql)."""

    change: str
    db: int
    key: str
    pattern: str
    old_type: str | None
    new_type: str
    old_encoding: str | None
    new_encoding: str
    old_length: int | None
    new_length: int
    old_memory_bytes: int | None
    new_memory_bytes: int
    delta_memory_bytes: int


class BigKeyChange(TypedDict):
    """`keys.big_keys.items[]` (queries/big_keys.sql): `kind` new, past-critical or gone."""

    kind: str
    db: int
    key: str
    pattern: str
    change: str
    old_type: str | None
    new_type: str | None
    old_length: int | None
    new_length: int | None
    old_memory_bytes: int | None
    new_memory_bytes: int | None
    old_severity: str | None
    new_severity: str | None


class BigKeys(TypedDict):
    thresholds: dict[str, int]
    new: int
    past_critical: int
    gone: int
    items: list[BigKeyChange]


class TypePair(TypedDict):
    old_type: str
    new_type: str
    keys: int


class TypeChange(TypedDict):
    """`keys.type_changes.items[]` (queries/type_changes.sql)."""

    db: int
    key: str
    pattern: str
    old_type: str
    new_type: str
    old_memory_bytes: int
    new_memory_bytes: int


class TypeChanges(TypedDict):
    total: int
    pairs: list[TypePair]
    items: list[TypeChange]


class Conversion(TypedDict):
    """`keys.encoding_conversions.conversions[]`: keys per conversion and threshold crossed."""

    type: str
    old_encoding: str
    new_encoding: str
    threshold: str | None
    keys: int


class ConversionItem(TypedDict):
    """`keys.encoding_conversions.items[]` (queries/encodings.sql)."""

    db: int
    key: str
    pattern: str
    type: str
    old_encoding: str
    new_encoding: str
    direction: str
    threshold: str | None
    threshold_value: int | None
    measured: int | None
    old_length: int
    new_length: int
    old_max_elem_bytes: int | None
    new_max_elem_bytes: int | None
    old_memory_bytes: int
    new_memory_bytes: int


class EncodingConversions(TypedDict):
    # setting name (hash-max-listpack-entries) -> value / where the value came from
    thresholds: dict[str, int]
    threshold_sources: dict[str, str]
    total: int
    conversions: list[Conversion]
    items: list[ConversionItem]


class KeyChanges(TypedDict):
    """`keys`: added, removed, changed over the whole keyspace, and the lists."""

    added: int
    removed: int
    changed: int
    unchanged: int
    by_family: list[KeyFamilyChanges]
    top_growers: list[KeyGrower]
    big_keys: BigKeys
    type_changes: TypeChanges
    encoding_conversions: EncodingConversions


class LostExpiryFamily(TypedDict):
    pattern: str
    keys: int
    memory_bytes: int
    example: str


class TtlBucketChange(TypedDict):
    """`ttl.distribution[]` (queries/ttl_distribution.sql): the report's TTL buckets."""

    bucket: str
    old_keys: int
    new_keys: int
    delta_keys: int
    old_memory_bytes: int
    new_memory_bytes: int


class TtlChanges(TypedDict):
    """`ttl`: queries/ttl_summary.sql's row, then the lists."""

    lost_expiry: int
    gained_expiry: int
    expiry_moved: int
    lost_expiry_memory_bytes: int
    old_keys_with_ttl: int
    new_keys_with_ttl: int
    old_expired_at_snapshot: int
    new_expired_at_snapshot: int
    delta_expired_at_snapshot: int
    lost_expiry_families: list[LostExpiryFamily]
    distribution: list[TtlBucketChange]


class _FailCheck(TypedDict):
    rule: str
    value: int
    threshold: str
    failed: bool
    description: str


class FailCheck(_FailCheck, total=False):
    """`fail_on.checks[]`: `growth` for the rule growth, `families` for family-growth."""

    growth: float | None
    families: list[str]


class FailOn(TypedDict):
    checks: list[FailCheck]
    failed: bool
    exit_code: int


class DiffBody(TypedDict):
    """The diff's figures: the diff without its `--fail-on` checks and timing."""

    rdbscan_diff: int
    generated_at: str
    options: DiffOptionsData
    old: SideData
    new: SideData
    reordered: bool
    interval_seconds: float | None
    interval_days: float | None
    totals: Totals
    families: Families
    keys: KeyChanges
    ttl: TtlChanges


class _DiffData(DiffBody):
    diff_seconds: float


class DiffData(_DiffData, total=False):
    """The diff (`rdbscan diff --format json`); `fail_on` with --fail-on, `filter` with filters
    at parse time (added by the command), `redaction` with --redact."""

    fail_on: FailOn
    filter: str
    redaction: Redaction
