"""The big-keys findings: critical big keys, the other big keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_int
from ...section import examples, finding, share, total_memory

if TYPE_CHECKING:
    from ...data import Finding, ReportData
    from .build import BigKeysData


def _advice(b: BigKeysData) -> str:
    """What to do, by what the big keys are: collections split into buckets, strings do not."""
    strings = b["string_keys"] or 0
    what = []
    if strings < b["keys"]:
        what.append("collections into buckets")
    if strings:
        what.append("strings into chunks")
    return f"split {' and '.join(what)}; delete with UNLINK; see Big keys"


def _for_example(keys) -> str:
    """`: big:5 ...` (the first distinct names of the keys listed), or nothing without keys."""
    names = examples(keys)
    return f": {names}" if names else ""


def findings(b: BigKeysData, report: ReportData) -> list[Finding]:
    if not b["keys"]:
        return []
    out: list[Finding] = []
    crit = b["critical"] or 0
    items = b["items"] or []
    crit_items = [i for i in items if i.get("severity") == "critical"]
    if crit:
        mem = b["critical_memory_bytes"]
        if mem is None:
            mem = sum(i.get("memory_bytes") or 0 for i in crit_items)
        out.append(
            finding(
                "big-keys-critical",
                "critical",
                "big_keys",
                f"{fmt_int(crit)} critical big key{'s' if crit != 1 else ''} hold "
                f"{fmt_bytes(mem)}{share(mem, total_memory(report))}"
                f"{_for_example(i['key'] for i in crit_items)}",
                "split or UNLINK them; see Big keys",
                memory=mem,
                keys=crit,
            )
        )
    rest = b["keys"] - crit
    if rest > 0:
        mem = b["memory_bytes"]
        if mem is None:
            mem = sum(i.get("memory_bytes") or 0 for i in items if i.get("severity") != "critical")
        elif b["critical_memory_bytes"] is not None:
            mem = mem - b["critical_memory_bytes"]
        out.append(
            finding(
                "big-keys",
                "warning",
                "big_keys",
                f"{fmt_int(rest)} big key{'s' if rest != 1 else ''} "
                f"(over {fmt_bytes(b['thresholds']['string_bytes'])} or "
                f"{fmt_int(b['thresholds']['collection_length'])} elements) hold "
                f"{fmt_bytes(mem)}{share(mem, total_memory(report))}"
                f"{_for_example(i['key'] for i in items if i.get('severity') != 'critical')}",
                _advice(b),
                memory=mem,
                keys=rest,
            )
        )
    return out
