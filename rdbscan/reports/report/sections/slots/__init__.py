"""Cluster slots: keys and memory per hash slot, and hashtags."""

from ...section import Section
from .build import SlotsData, build, by_dump
from .charts import charts
from .findings import findings
from .layout import layout

SECTION = Section(
    "slots",
    build=build,
    layout=layout,
    data=SlotsData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("slot-count-mismatch", "hot-slot"),
    dump_checks="slot announcements, hot slots",
    finding_order=8,
    charts=charts,
)
