"""Streams and hash field TTLs: consumer groups, pending entries, length."""

from ...section import Section
from .build import StreamsData, build, by_dump
from .findings import findings
from .layout import layout

SECTION = Section(
    "streams",
    build=build,
    layout=layout,
    data=StreamsData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("stream-pending",),
    dump_checks="pending stream entries",
    finding_order=9,
)
