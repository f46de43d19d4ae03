"""Big keys: keys over the big-key thresholds, the top keys by memory and by length."""

from ...section import Section
from .build import BigKeysData, build
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
    finding_order=1,
    fail_rules=FAIL_RULES,
    fail_value=fail_value,
    charts=charts,
)
