"""Key families: which families hold the keys and the memory, and prefixes."""

from ...section import Section
from .build import PatternsData, build, by_dump
from .findings import findings
from .layout import layout

SECTION = Section(
    "patterns",
    build=build,
    layout=layout,
    data=PatternsData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("dominant-family",),
    dump_checks="a family holding most memory",
    finding_order=5,
)
