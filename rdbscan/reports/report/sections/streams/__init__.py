"""Streams and hash field TTLs: consumer groups, pending entries, length."""

from ...section import Section
from .build import StreamsData, build
from .findings import findings
from .layout import layout

SECTION = Section(
    "streams",
    build=build,
    layout=layout,
    data=StreamsData,
    findings=findings,
    finding_order=9,
)
