"""Value design: keys split into shards, collections with big elements, compressible strings."""

from ...section import Section
from .build import ValuesData, build
from .findings import findings
from .layout import layout

SECTION = Section(
    "values",
    build=build,
    layout=layout,
    data=ValuesData,
    findings=findings,
    finding_order=4,
)
