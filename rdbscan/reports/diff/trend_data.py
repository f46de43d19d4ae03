"""The trend's JSON document as types: what `build_trend` returns and the renderers read, field
for field as docs/diff.md documents it ("`rdbscan trend`"); tests/test_docs.py holds the two to
each other."""

from __future__ import annotations

from typing import TypedDict

from .data import Redaction

# `from` is a Python keyword: the functional form declares it
TrendOptions = TypedDict(
    "TrendOptions",
    {
        "instance": str | None,
        "top": int,
        "delimiters": str,
        "from": str | None,
        "to": str | None,
    },
)


class TrendSnapshot(TypedDict):
    snapshot_id: int
    snapshot_ms: int
    snapshot_time: str | None
    snapshot_source: str
    dumps: int
    dump_ids: list[int]
    paths: list[str]
    keys: int
    keys_with_ttl: int
    memory_bytes: int
    used_mem: int | None
    complete: bool


class TrendPoint(TypedDict):
    snapshot_id: int
    keys: int
    memory_bytes: int


class TrendFamily(TypedDict):
    """`families[]` and `shrinking[]` (queries/trend_families.sql)."""

    pattern: str
    points: list[TrendPoint]
    first_keys: int
    last_keys: int
    first_memory_bytes: int
    last_memory_bytes: int
    memory_growth: float | None
    memory_per_day: float | None
    keys_per_day: float | None
    rank: int
    vanished: bool


class TrendInstance(TypedDict):
    instance: str | None
    snapshots: list[TrendSnapshot]
    days: float | None
    memory_per_day: float | None
    keys_per_day: float | None
    families_total: int
    families: list[TrendFamily]
    shrinking: list[TrendFamily]


class _TrendData(TypedDict):
    rdbscan_trend: int
    generated_at: str
    database: str
    options: TrendOptions
    instances: list[TrendInstance]
    trend_seconds: float


class TrendData(_TrendData, total=False):
    """The trend (`rdbscan trend --format json`); `redaction` with --redact."""

    redaction: Redaction
