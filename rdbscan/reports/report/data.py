"""The report object's types (docs/json.md): `ReportData`, whose fields are the sections' types
(`Section.data`, each declared in its section's build.py), the findings, the lines per dump and
the `--fail-on` checks.  Layouts, findings, charts and `--fail-on` read the report through these
types, so that mypy checks every field they read (tests/test_docs.py holds them to the JSON)."""

from __future__ import annotations

from typing import TypedDict

from ..schema.check import SchemaCheckData
from .sections.big_keys.build import BigKeysData
from .sections.cold.build import ColdData
from .sections.encodings.build import EncodingsData
from .sections.naming.build import NamingData
from .sections.overview.build import OverviewData
from .sections.patterns.build import PatternsData
from .sections.slots.build import SlotsData
from .sections.streams.build import StreamsData
from .sections.ttl.build import TtlData
from .sections.values.build import ValuesData


class _Finding(TypedDict):
    """One finding (docs/findings.md): `id severity section memory_bytes keys message advice`."""

    id: str
    severity: str
    section: str
    memory_bytes: int | None
    keys: int | None
    message: str
    advice: str


class Finding(_Finding, total=False):
    """A finding; of a report over several dumps, also `dumps`: the ids of the dumps whose
    report alone has it (or whose figures alone raise it, over more than 32 dumps)."""

    dumps: list[int]


class Worst(TypedDict):
    """A dump's first finding, as its line says it."""

    id: str
    severity: str
    message: str


class _DumpLine(TypedDict):
    """`dumps[]`: one line per dump of a report over several."""

    dump_id: int
    path: str | None
    server: str | None
    server_version: str | None
    keys: int | None
    memory_bytes: int | None
    complete: bool
    findings: int
    worst: Worst | None


class DumpLine(_DumpLine, total=False):
    """A line per dump; over more than 32 dumps also `worst_of`: the checks `findings` and
    `worst` cover (findings.grouped)."""

    worst_of: str


class FailCheck(TypedDict):
    """A `--fail-on` check as measured."""

    rule: str
    value: int | float
    share: float
    threshold: str
    measured: str
    failed: bool
    description: str


class FailOnData(TypedDict):
    """The `fail_on` object."""

    checks: list[FailCheck]
    failed: bool
    exit_code: int


class Options(TypedDict):
    """The `options` object: what the report was asked for."""

    dump_id: int
    top: int
    delimiters: str
    sections: list[str]


class Charts(TypedDict):
    """`charts` (the HTML report only): each section's small aggregates (its `chart_data`,
    gathered whatever `--section` says)."""

    family_tree: list[dict]
    slots: list[dict]
    expiry_timeline: list[dict]
    idle: list[dict]
    lfu: list[dict]


class _Report(TypedDict):
    """What every report object has."""

    rdbscan_report: int
    generated_at: str
    options: Options
    findings: list[Finding]
    overview: OverviewData
    report_seconds: float


class ReportData(_Report, total=False):
    """The report object (docs/json.md).  A section is absent when `--section` leaves it out
    (the overview then keeps only the fields of its `always`); `schema` comes with `--schema`."""

    # a report over several dumps
    dumps: list[DumpLine]
    # a report covering more dumps than it loaded
    note: str
    big_keys: BigKeysData
    patterns: PatternsData
    ttl: TtlData
    encodings: EncodingsData
    values: ValuesData
    naming: NamingData
    cold: ColdData
    slots: SlotsData
    streams: StreamsData
    schema: SchemaCheckData
    fail_on: FailOnData
    # the HTML report only
    charts: Charts
    # --redact (docs/redact.md)
    redaction: dict


class DumpRow(TypedDict):
    """What the line per dump reads of the `dumps` table (report/build.py _each_dump_alone)."""

    dump_id: int
    path: str
    server: str | None
    server_version: str | None
    keys: int
    memory_bytes: int
    complete: bool | None


class AloneReport(ReportData):
    """A dump's report alone (report/build.py _each_dump_alone): also its `dumps` row."""

    dump: DumpRow
