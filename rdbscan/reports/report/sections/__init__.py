"""The report's sections, one module each: `build(run, options, meta)` returns the section's
object of the report (docs/json.md); every figure comes from the bundled queries it runs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import big_keys, cold, encodings, naming, overview, patterns, slots, streams, ttl
from .values import section as values_section

if TYPE_CHECKING:
    from ...engine.relations import Runner
    from ..build import ReportOptions


def _values(run: Runner, options: ReportOptions, meta: dict) -> dict:
    return values_section(run, options)  # reports/values.py: the Value design section


BUILDERS = {
    "overview": overview.build,
    "big_keys": big_keys.build,
    "patterns": patterns.build,
    "ttl": ttl.build,
    "encodings": encodings.build,
    "values": _values,
    "naming": naming.build,
    "cold": cold.build,
    "slots": slots.build,
    "streams": streams.build,
}
