"""Naming: keys breaking the naming rules, per rule and per family."""

from ...section import Section
from .build import NamingData, build
from .fail_on import FAIL_RULES, fail_value
from .findings import findings
from .layout import layout

SECTION = Section(
    "naming",
    build=build,
    layout=layout,
    data=NamingData,
    findings=findings,
    finding_order=7,
    fail_rules=FAIL_RULES,
    fail_value=fail_value,
)
