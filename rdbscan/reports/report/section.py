"""What a section of the report is, and what the sections' parts share.

A section is a package of `sections/` (its builder, layout, findings, charts and `--fail-on`
rules) and one `Section` entry in the ordered list `sections.SECTIONS`, which the text,
markdown, JSON and HTML reports, `--section` and `--fail-on` all read.  Adding a section means
adding its package and its entry.  Every figure comes from the bundled SQL its builder runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..document import table
from ..format import fmt_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ..document import Block
    from ..engine.relations import Runner
    from .data import Finding, ReportData

# a section's object: the TypedDict its builder returns and its layout and findings read
D = TypeVar("D")


@dataclass(frozen=True)
class FailRule:
    """A `--fail-on` rule: its threshold when none is given, what it counts, whether it
    compares the share (a fraction, or `N%`) rather than the count, and what `rule:detail`
    names (naming:<rule-id>), if the rule takes one."""

    default: Any
    description: str
    share: bool = False
    detail: str = ""


@dataclass(frozen=True)
class Section(Generic[D]):
    """A section, typed by its object `D` (its `data`): mypy holds its builder, layout and
    findings to that TypedDict, and tests/test_sections.py checks that they name it."""

    # its key in the report object (docs/json.md) and its `--section` name
    name: str
    # (run, options, meta) -> the section's object (its `data`); meta: what query_values()
    # worked out
    build: Callable[[Runner, Any, dict], D]
    # (its object, the report) -> its blocks in the text, markdown and HTML reports
    layout: Callable[[D, ReportData], list[Block]]
    # (its object, the report) -> its findings (finding() below); asked when the object is
    # there, and over many dumps with each dump's object from `by_dump` (with `findings.grouped`
    # as the report: its overview's keys and memory_bytes only)
    findings: Callable[[D, ReportData], list[Finding]] | None = None
    # where its findings go among findings of equal severity, memory and keys
    finding_order: int = 0
    # A report over more than MAX_DUMPS_ALONE dumps (findings.grouped): (run, its object, the
    # `dump_lines` rows by dump id) -> dump id -> its object as far as `findings` reads it for
    # the findings in `dump_findings`, for every dump from grouped queries (GROUP BY dump_id or
    # a ranking per dump), so that those findings say which dumps they concern, in the words
    # of `findings` itself; `dump_checks` names those checks for the line per dump.
    by_dump: Callable[[Runner, dict, dict[int, dict]], dict[int, dict]] | None = None
    dump_findings: tuple[str, ...] = ()
    dump_checks: str = ""
    # `--fail-on` rules; `rule:detail` (naming:<rule-id>) is measured by the rule's section
    fail_rules: dict[str, FailRule] = field(default_factory=dict)
    # (run, report, rule) -> (value, share or None, description or None) for one of its rules
    fail_value: Callable[[Runner, ReportData, str], tuple] | None = None
    # the HTML report: (run, options) -> its part of `charts` (small aggregates), and
    # (report) -> its charts, drawn in the order of the sections (docs/html-report.md)
    chart_data: Callable[[Runner, Any], dict] | None = None
    charts: Callable[[ReportData], list[str]] | None = None
    # the TypedDict of its object, as docs/json.md documents it (tests/test_docs.py)
    data: type[D] | None = None
    # False: not a `--section` choice, built when `enabled(options)` says so (schema: --schema)
    selectable: bool = True
    enabled: Callable[[Any], bool] | None = None
    # fields built even when `--section` leaves the section out: other parts read them
    always: tuple[str, ...] = ()

    def wanted(self, options) -> bool:
        """Whether `options` ask for the section."""
        if self.enabled is not None:
            return self.enabled(options)
        return self.name in options.sections


# --- what the sections' findings share (docs/findings.md) ------------------------------------


def finding(fid, severity, section, message, advice, memory=None, keys=None) -> Finding:
    """One finding: `id severity section memory_bytes keys message advice`."""
    return {
        "id": fid,
        "severity": severity,
        "section": section,
        "memory_bytes": int(memory) if memory is not None else None,
        "keys": int(keys) if keys is not None else None,
        "message": message,
        "advice": advice,
    }


def share(part, whole) -> str:
    """` (12%)`: `part` as a share of `whole`, or nothing when unknown."""
    if not whole or part is None:
        return ""
    return f" ({part / whole:.0%})"


def examples(names, n=2) -> str:
    """The first `n` distinct names, shortened, then `...` (several dumps hold the same key)."""
    names = list(dict.fromkeys(fmt_key(x, 40) for x in names if x is not None))[:n]
    return ", ".join(names) + (" ..." if names else "")


def key_table(
    report: ReportData,
    title: str,
    headers: list[str],
    items: Iterable[Any],
    cells: Callable[[Any], list[str]],
    numeric: Sequence[int] = (),
    at: int = 1,
) -> Block:
    """A table of a row per item (`cells(item)`: its cells).  Over several dumps it has a column
    `dump` at index `at` saying whose row it is (`#2`, as the lines per dump at the top name it):
    a key that several dumps hold is then several rows, not a repeated one."""
    items = list(items)
    rows = [cells(i) for i in items]
    if len(report.get("dumps") or []) > 1:
        headers = [*headers[:at], "dump", *headers[at:]]
        rows = [[*r[:at], f"#{i['dump_id']}", *r[at:]] for i, r in zip(items, rows)]
        numeric = [n + 1 if n >= at else n for n in numeric]
    return table(title, headers, rows, numeric)


def total_memory(report: ReportData) -> int:
    """The memory of every key reported on (the overview's), for shares."""
    return report["overview"]["memory_bytes"] or 0
