"""`rdbscan diff --fail-on`: the rules, parsing them, and measuring each on a diff (docs/diff.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from ...db.sizes import parse_size
from ...errors import EXIT_FINDINGS
from ..format import plain
from .snapshots import DiffError

if TYPE_CHECKING:
    from .data import DiffBody, FailCheck, FailOn
    from .runner import DiffRunner

FAIL_RULES = {
    # rule: (default threshold, description)
    "growth": ("20%", "growth of the keyspace's memory (N% of the old memory, or N bytes: 500MB)"),
    "family-growth": (
        "10%",
        "families that grew by more than N% of their old memory (families in "
        "both snapshots), or by more than N bytes (new families too)",
    ),
    "new-big-keys": (0, "keys that became big"),
    "lost-ttl": (0, "keys that lost their expiry"),
}


def parse_threshold(text: str) -> tuple[float, bool]:
    """'20%' -> (20.0, True); '500MB' -> (500e6, False); '3' -> (3.0, False)."""
    text = text.strip()
    if text.endswith("%"):
        try:
            return float(text[:-1]), True
        except ValueError:
            pass
    else:
        try:
            return float(parse_size(text)), False
        except ValueError:
            pass
    raise DiffError(
        f"--fail-on: bad threshold {text!r} (a number, a size like 500MB, or a percentage like 20%)"
    )


def parse_fail_on(spec: str | None) -> list[tuple[str, str]]:
    """'growth=20%,family-growth=10%,new-big-keys,lost-ttl=0' -> [(rule, threshold text)]."""
    out = []
    for item in (spec or "").split(","):
        item = item.strip()
        if not item:
            continue
        rule, _, thr = item.partition("=")
        rule = rule.strip()
        if rule not in FAIL_RULES:
            raise DiffError(f"--fail-on: unknown rule {rule!r} (known: {', '.join(FAIL_RULES)})")
        thr = thr.strip() or str(FAIL_RULES[rule][0])
        value, pct = parse_threshold(thr)
        if pct and rule in ("new-big-keys", "lost-ttl"):
            raise DiffError(f"--fail-on: {rule} counts keys: give a number, not {thr!r}")
        out.append((rule, thr))
    return out


def evaluate_fail_on(run: DiffRunner, diff: DiffBody, rules: list[tuple[str, str]]) -> FailOn:
    """Compare the diff with thresholds; `failed` when any check exceeds its threshold."""
    checks: list[FailCheck] = []
    total = diff["totals"]["all"]
    for rule, thr_text in rules:
        thr, pct = parse_threshold(thr_text)
        offenders = None
        if rule == "growth":
            value = total["delta_memory_bytes"]
            measured = (total["memory_growth"] or 0) * 100 if pct else value
            if pct and total["old_memory_bytes"] == 0:
                measured = float("inf") if value > 0 else 0.0
        elif rule == "family-growth":
            over = run.one("family_growth_over", threshold=thr, pct=pct)
            value = measured = over["families"]
            offenders = over["first"]
            thr = 0 if thr >= 0 else thr
        elif rule == "new-big-keys":
            value = measured = diff["keys"]["big_keys"]["new"]
        elif rule == "lost-ttl":
            value = measured = diff["ttl"]["lost_expiry"]
        else:  # pragma: no cover - parse_fail_on refuses it
            raise DiffError(f"--fail-on: unknown rule {rule!r}")
        check: FailCheck = {
            "rule": rule,
            "value": value,
            "threshold": thr_text,
            "failed": measured > thr,
            "description": FAIL_RULES[rule][1],
        }
        if rule == "growth":
            check["growth"] = total["memory_growth"]
        if offenders is not None:
            check["families"] = offenders
        checks.append(cast("FailCheck", plain(check)))
    failed = any(c["failed"] for c in checks)
    return {"checks": checks, "failed": failed, "exit_code": EXIT_FINDINGS if failed else 0}
