"""`--fail-on`: parsing the checks, and measuring each on a report (docs/report.md).  The rules
are the sections' (`fail_rules`, sections/__init__.py FAIL_RULES); each is measured by its
section's `fail_value`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import EXIT_FINDINGS
from ..document import Block, table
from ..format import fmt_int, fmt_pct
from .sections import FAIL_OWNERS, FAIL_RULES

if TYPE_CHECKING:
    from ..engine.relations import Runner
    from .data import FailCheck, FailOnData, ReportData


def parse_fail_on(
    spec: str | list | tuple | None, defaults: dict | None = None
) -> list[tuple[str, str]]:
    """`big-keys,no-ttl=10,naming:uppercase=5,no-ttl-share=30%` -> [(rule, threshold text)]."""
    if not spec:
        return []
    parts = spec if isinstance(spec, (list, tuple)) else [spec]
    out = []
    for part in parts:
        for item in str(part).split(","):
            item = item.strip()
            if not item:
                continue
            rule, _, thr = item.partition("=")
            rule = rule.strip()
            base, colon, detail = rule.partition(":")
            base = base.replace("_", "-")  # the section's spelling (big_keys) is accepted too
            rule = base + colon + detail
            if base not in FAIL_RULES:
                details = "".join(f", {r}:{f.detail}" for r, f in FAIL_RULES.items() if f.detail)
                raise ValueError(
                    f"--fail-on: unknown rule {rule!r} (known: {', '.join(FAIL_RULES)}{details})"
                )
            if thr.strip() == "":
                thr = str(
                    (defaults or {}).get(rule, FAIL_RULES[base].default if ":" not in rule else 0)
                )
            _threshold(thr)
            out.append((rule, thr.strip()))
    return out


def _threshold(text: str) -> tuple[float, bool]:
    text = text.strip()
    pct = text.endswith("%")
    try:
        value = float(text[:-1] if pct else text)
    except ValueError:
        raise ValueError(
            f"--fail-on: bad threshold {text!r} (a number, or a percentage like 30%)"
        ) from None
    return value, pct


def _compares_share(rule: str) -> bool:
    """The rule compares the share (no-ttl-share), not the count."""
    found = FAIL_RULES.get(rule)
    return found is not None and found.share


def evaluate_fail_on(run: Runner, report: ReportData, rules: list[tuple[str, str]]) -> FailOnData:
    """Compare findings with thresholds; `failed` is True when any check exceeds its threshold."""
    checks: list[FailCheck] = []
    total_keys = report["overview"]["keys"] or 0
    for rule, thr_text in rules:
        thr, pct = _threshold(thr_text)
        base = rule.split(":", 1)[0]
        measure = FAIL_OWNERS[base].fail_value
        assert measure is not None
        value, share, description = measure(run, report, rule)
        if share is None:
            share = value / total_keys if total_keys else 0.0
        if _compares_share(rule):
            # value is bytes; the rule compares the share (a bare number is a fraction: 0.3 = 30 %)
            measured = share * 100 if pct else share
        else:
            measured = share * 100 if pct else value
        # what was compared with the threshold, in the threshold's unit
        shown = (
            f"{round(measured, 4):g}%"
            if pct
            else (f"{round(measured, 6):g}" if _compares_share(rule) else str(value))
        )
        checks.append(
            {
                "rule": rule,
                "value": value,
                "share": round(share, 6),
                "threshold": thr_text,
                "measured": shown,
                "failed": measured > thr,
                "description": description or FAIL_RULES[base].description,
            }
        )
    failed = any(c["failed"] for c in checks)
    return {"checks": checks, "failed": failed, "exit_code": EXIT_FINDINGS if failed else 0}


def layout(f: FailOnData, report: ReportData) -> list[Block]:
    """The checks' block, after the sections."""
    blocks = [Block("section", "Checks (--fail-on)")]
    blocks.append(
        table(
            "",
            ["check", "measured", "threshold", "result"],
            [
                [
                    c["rule"],
                    f"{fmt_int(c['value'])} ({fmt_pct(c['share'])})"
                    if not _compares_share(c["rule"])
                    else fmt_pct(c["share"]),
                    c["threshold"],
                    "FAIL" if c["failed"] else "ok",
                ]
                for c in f["checks"]
            ],
            (1, 2),
        )
    )
    return blocks
