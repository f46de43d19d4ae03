"""Schema (only with `--schema FILE`): the keys checked against a key schema (docs/schema.md);
the check itself is the key-schema product's (rdbscan/reports/schema/check.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....schema.check import SchemaCheckData
from ....schema.check import fail_value as _measure
from ....schema.check import section as _check
from ...section import FailRule, Section
from .layout import layout

if TYPE_CHECKING:
    from ...data import ReportData


def build(run, options, meta: dict) -> SchemaCheckData:
    return _check(run, options.schema, options.top)


def fail_value(run, report: ReportData, rule: str) -> tuple:
    value, description = _measure(report, rule)
    return value, None, description


SECTION = Section(
    "schema",
    build=build,
    layout=layout,
    data=SchemaCheckData,
    fail_rules={
        "schema": FailRule(
            0,
            "breaks of the key schema (--schema): keys per key check, families per family check",
            detail="<check>",
        )
    },
    fail_value=fail_value,
    selectable=False,
    enabled=lambda options: options.schema is not None,
)
