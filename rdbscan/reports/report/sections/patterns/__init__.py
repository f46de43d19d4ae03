"""Key families: which families hold the keys and the memory, and prefixes."""

from ...section import Section
from .build import PatternsData, build
from .findings import findings
from .layout import layout

SECTION = Section(
    "patterns",
    build=build,
    layout=layout,
    data=PatternsData,
    findings=findings,
    finding_order=5,
)
