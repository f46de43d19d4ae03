"""TTL: keys without expiry, families that look ephemeral, expiry herds, the TTL distribution."""

from ...section import Section
from .build import TtlData, build, by_dump
from .charts import chart_data, charts
from .fail_on import FAIL_RULES, fail_value
from .findings import findings
from .layout import layout

SECTION = Section(
    "ttl",
    build=build,
    layout=layout,
    data=TtlData,
    findings=findings,
    by_dump=by_dump,
    dump_findings=("no-ttl-ephemeral", "ttl-herd", "expired-at-snapshot", "no-ttl-share"),
    dump_checks=(
        "keys without TTL, cache/session-like families without TTL, keys expired at snapshot, "
        "expiry herds"
    ),
    finding_order=2,
    fail_rules=FAIL_RULES,
    fail_value=fail_value,
    chart_data=chart_data,
    charts=charts,
)
