"""Value design: keys split into shards, collections with big elements, compressible strings."""

from ...section import Section
from .build import ValuesData, build, by_dump
from .findings import findings
from .layout import layout

SECTION = Section(
    "values",
    build=build,
    layout=layout,
    data=ValuesData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("split-big-keys", "big-elements", "compressible-strings"),
    dump_checks="value design",
    finding_order=4,
)
