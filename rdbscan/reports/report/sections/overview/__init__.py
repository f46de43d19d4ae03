"""The Overview: dumps, databases, types, memory against used_mem, what the figures cover."""

from ...section import Section
from .build import OverviewData, build, by_dump
from .charts import chart_data, charts
from .findings import findings
from .layout import layout

SECTION = Section(
    "overview",
    build=build,
    layout=layout,
    data=OverviewData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("dump-incomplete", "rdbscan-older-than-dump", "checksum-mismatch"),
    dump_checks="the dump itself",
    finding_order=0,
    chart_data=chart_data,
    charts=charts,
    # --section without overview: what other parts read (findings, the HTML header, fail_on)
    always=(
        "keys",
        "keys_by_db",
        "rdb_version",
        "memory_bytes",
        "snapshot_time",
        "snapshot_ms",
        "snapshot_source",
    ),
)
