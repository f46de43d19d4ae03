"""Compact encodings: keys in a non-compact encoding that fit the thresholds, keys just over,
what raising a threshold would convert, strings cheaper as hash fields."""

from ...section import Section
from .build import EncodingsData, build, by_dump
from .fail_on import FAIL_RULES, fail_value
from .findings import findings
from .layout import layout

SECTION = Section(
    "encodings",
    build=build,
    layout=layout,
    data=EncodingsData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("encodings", "strings-to-hashes"),
    dump_checks="compact encodings",
    finding_order=3,
    fail_rules=FAIL_RULES,
    fail_value=fail_value,
)
