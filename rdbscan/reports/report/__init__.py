"""The report (`rdbscan report`, docs/report.md): its sections, each a package of `sections/`
registered once in `sections.SECTIONS`; `build` runs them into the report dict (the JSON
contract, docs/json.md); `findings` (the verdict) and `fail_on` (`--fail-on`) read what the
sections say; `render` and `html` draw it; `run` loads, then reports; `rules` reads a rules
file."""

from .build import REPORT_FORMAT, ReportOptions, build_report
from .fail_on import parse_fail_on
from .sections import FAIL_RULES, SECTION_NAMES

__all__ = [
    "FAIL_RULES",
    "REPORT_FORMAT",
    "SECTION_NAMES",
    "ReportOptions",
    "build_report",
    "parse_fail_on",
]
