"""`--fail-on`: the rules, parsing them, and measuring each on a report (docs/report.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import EXIT_FINDINGS

if TYPE_CHECKING:
    from ..engine.relations import Runner


FAIL_RULES = {
    # rule: (default threshold, description)
    "big-keys": (0, "keys over any big-key threshold"),
    "big-keys-critical": (0, "keys over a critical big-key threshold"),
    "no-ttl": (0, "keys without TTL in cache/session-like families"),
    "no-ttl-share": ("50%", "share of memory held by keys without TTL"),
    "expired": (0, "keys already expired at snapshot time"),
    "naming": (0, "keys breaking any enabled naming rule"),
    "encodings": (0, "non-compact keys that fit the compact thresholds"),
    "schema": (
        0,
        "breaks of the key schema (--schema): keys per key check, families per family check",
    ),
}


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
            base = rule.split(":", 1)[0]
            if base not in FAIL_RULES:
                raise ValueError(
                    f"--fail-on: unknown rule {rule!r} (known: {', '.join(FAIL_RULES)}, "
                    "naming:<rule-id>, schema:<check>)"
                )
            if thr.strip() == "":
                thr = str((defaults or {}).get(rule, FAIL_RULES[base][0] if ":" not in rule else 0))
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


def evaluate_fail_on(run: Runner, report: dict, rules: list[tuple[str, str]]) -> dict:
    """Compare findings with thresholds; `failed` is True when any check exceeds its threshold."""
    checks = []
    total_keys = report["overview"]["keys"] or 0
    for rule, thr_text in rules:
        thr, pct = _threshold(thr_text)
        if rule.split(":", 1)[0] == "schema":
            from ..schema_check import fail_value

            (value, description), share = fail_value(report, rule), None
        else:
            value, share, description = _fail_value(run, rule)
        if share is None:
            share = value / total_keys if total_keys else 0.0
        if rule == "no-ttl-share":
            # value is bytes; the rule compares the share (a bare number is a fraction: 0.3 = 30 %)
            measured = share * 100 if pct else share
        else:
            measured = share * 100 if pct else value
        # what was compared with the threshold, in the threshold's unit
        shown = (
            f"{round(measured, 4):g}%"
            if pct
            else (f"{round(measured, 6):g}" if rule == "no-ttl-share" else str(value))
        )
        checks.append(
            {
                "rule": rule,
                "value": value,
                "share": round(share, 6),
                "threshold": thr_text,
                "measured": shown,
                "failed": measured > thr,
                "description": description or FAIL_RULES[rule.split(":", 1)[0]][1],
            }
        )
    failed = any(c["failed"] for c in checks)
    return {"checks": checks, "failed": failed, "exit_code": EXIT_FINDINGS if failed else 0}


def _fail_value(run: Runner, rule: str):
    """(count, share or None, description or None) measured for one --fail-on rule."""
    if rule.startswith("naming:"):
        rid = rule.split(":", 1)[1]
        by_rule = {r["rule"]: r for r in run.rows("naming_rules", examples=0)}
        if rid not in by_rule:
            raise ValueError(f"--fail-on: unknown or disabled naming rule {rid!r}")
        return (
            by_rule[rid]["keys"],
            None,
            f"keys breaking naming rule {rid}: {by_rule[rid]['description']}",
        )
    value, share = _fail_measure(run, rule)
    return value, share, None


def _fail_measure(run: Runner, rule: str):
    """(count or bytes, share or None) measured for one --fail-on rule (not naming:<id>)."""
    if rule in ("big-keys", "big-keys-critical"):
        rows = run.rows("big_keys", top=1)
        return (
            rows[0]["total_keys" if rule == "big-keys" else "total_critical"] if rows else 0
        ), None
    if rule == "no-ttl":
        rows = run.rows("ttl_families", top=0)
        return sum(r["keys_without_ttl"] for r in rows if r["looks_ephemeral"]), None
    if rule == "no-ttl-share":
        s = run.one("ttl_summary")
        return s["memory_without_ttl"], s["memory_share_without_ttl"]
    if rule == "expired":
        return run.one("ttl_summary")["expired_at_snapshot"], None
    if rule == "naming":
        return run.one("naming_summary")["keys"], None
    if rule == "encodings":
        return sum(r["keys"] for r in run.rows("encoding_candidates_summary")), None
    raise ValueError(f"--fail-on: unknown rule {rule!r}")
