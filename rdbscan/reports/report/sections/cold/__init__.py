"""Cold keys: keys idle longer than --idle-days (LRU), the hottest keys and families (LFU)."""

from ...section import Section
from .build import ColdData, build, by_dump
from .charts import chart_data, charts
from .findings import findings
from .layout import layout

SECTION = Section(
    "cold",
    build=build,
    layout=layout,
    data=ColdData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("cold-keys",),
    dump_checks="cold keys",
    finding_order=6,
    chart_data=chart_data,
    charts=charts,
)
