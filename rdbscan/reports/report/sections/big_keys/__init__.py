"""Big keys: keys over the big-key thresholds, the top keys by memory and by length."""

from ...section import Section
from .build import BigKeysData, build, by_dump
from .charts import charts
from .fail_on import FAIL_RULES, fail_value
from .findings import findings
from .layout import layout

SECTION = Section(
    "big_keys",
    build=build,
    layout=layout,
    data=BigKeysData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("big-keys-critical", "big-keys"),
    dump_checks="big keys",
    finding_order=1,
    fail_rules=FAIL_RULES,
    fail_value=fail_value,
    charts=charts,
)
