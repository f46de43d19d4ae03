"""Naming: keys breaking the naming rules, per rule and per family."""

from ...section import Section
from .build import NamingData, build, by_dump
from .fail_on import FAIL_RULES, fail_value
from .findings import findings
from .layout import layout

SECTION = Section(
    "naming",
    build=build,
    layout=layout,
    data=NamingData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("naming",),
    dump_checks="naming rules",
    finding_order=7,
    fail_rules=FAIL_RULES,
    fail_value=fail_value,
)
