"""The report's sections, in the order of the report: the one list the text, markdown, JSON and
HTML reports, `--section` and `--fail-on` read.  Each is a package of this folder (its builder,
layout, findings, charts and `--fail-on` rules; report/section.py says what each part is)."""

from __future__ import annotations

from ..section import FailRule, Section
from . import (
    big_keys,
    cold,
    encodings,
    naming,
    overview,
    patterns,
    schema,
    slots,
    streams,
    ttl,
    values,
)

SECTIONS: tuple[Section, ...] = (
    overview.SECTION,
    big_keys.SECTION,
    patterns.SECTION,
    ttl.SECTION,
    encodings.SECTION,
    values.SECTION,
    naming.SECTION,
    cold.SECTION,
    slots.SECTION,
    streams.SECTION,
    schema.SECTION,
)

# the `--section` choices, in order
SECTION_NAMES = tuple(s.name for s in SECTIONS if s.selectable)

# every `--fail-on` rule, and the section that measures it
FAIL_RULES: dict[str, FailRule] = {r: f for s in SECTIONS for r, f in s.fail_rules.items()}
FAIL_OWNERS: dict[str, Section] = {r: s for s in SECTIONS for r in s.fail_rules}
