"""The diff as text, markdown and JSON (docs/diff.md): the verdict, then the sections
(layout.py), as blocks that rdbscan.reports.document draws; JSON is the dict itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..document import Block, draw_markdown, draw_text, render_json
from ..format import (
    fmt_bytes,
    fmt_int,
    fmt_key,
)
from .blocks import _measured, fmt_growth, fmt_signed_bytes, fmt_signed_int
from .layout import diff_sections

if TYPE_CHECKING:
    from .data import DiffData, FailCheck

__all__ = ["diff_document", "render_diff", "render_json"]


VERDICT_LINES = 10


def diff_verdict(d: DiffData) -> list[Block]:
    """The verdict before the sections: one line of totals, then at most VERDICT_LINES lines, the
    failed --fail-on checks first (critical), then what needs a look (warning: keys past a
    critical big-key threshold, new big keys, keys that lost their expiry), then the biggest
    changes (info: the families that changed most, keys added/removed/changed, conversions)."""
    t = d["totals"]["all"]
    head = (
        f"Verdict: memory {fmt_signed_bytes(t['delta_memory_bytes'])} "
        f"({fmt_growth(t['memory_growth'])}) to {fmt_bytes(t['new_memory_bytes'])}, keys "
        f"{fmt_signed_int(t['delta_keys'])} to {fmt_int(t['new_keys'])}"
    )
    lines: list[tuple[str, str, str]] = []
    checks = d["fail_on"]["checks"] if "fail_on" in d else []
    for c in checks:
        if c["failed"]:
            lines.append(
                (
                    "critical",
                    f"--fail-on {c['rule']} failed: {_measured(c)} (threshold {c['threshold']})",
                    "see Checks (--fail-on)",
                )
            )
    lines += _warnings(d) + _changes(d, checks)
    order = {"critical": 0, "warning": 1, "info": 2}
    lines.sort(key=lambda x: order[x[0]])  # stable: within a severity, the order above
    return [Block("section", head)] + [
        Block("finding", items=list(line)) for line in lines[:VERDICT_LINES]
    ]


def _warnings(d: DiffData) -> list[tuple[str, str, str]]:
    """Keys past a critical big-key threshold, new big keys, keys that lost their expiry."""
    lines: list[tuple[str, str, str]] = []
    if d["reordered"]:
        lines.append(
            (
                "warning",
                f"OLD ({d['new']['label']}) was taken after NEW ({d['old']['label']}): "
                "compared in time order, the earlier snapshot as old",
                "see Snapshots",
            )
        )
    k = d["keys"]
    b = k["big_keys"]
    for kind, n, what, advice in (
        (
            "past-critical",
            b["past_critical"],
            "big keys grew past a critical threshold",
            "split them or delete with UNLINK",
        ),
        ("new", b["new"], "new big keys", "check that they are meant to be this big"),
    ):
        if n:
            names = [r["key"] for r in b["items"] if r["kind"] == kind][:3]
            lines.append(
                (
                    "warning",
                    f"{fmt_int(n)} {what}"
                    + (f": {', '.join(fmt_key(x, 40) for x in names)}" if names else "")
                    + (" ..." if n > len(names) else ""),
                    f"{advice}; see Keys",
                )
            )
    ttl = d["ttl"]
    if ttl["lost_expiry"]:
        fams = [fmt_key(r["pattern"], 40) for r in ttl["lost_expiry_families"][:2]]
        lines.append(
            (
                "warning",
                f"{fmt_int(ttl['lost_expiry'])} keys lost their expiry "
                f"({fmt_bytes(ttl['lost_expiry_memory_bytes'])})"
                + (f": {', '.join(fams)}" if fams else ""),
                "set the expiry where these keys are written; see Expiry",
            )
        )
    return lines


def _changes(d: DiffData, checks: list[FailCheck]) -> list[tuple[str, str, str]]:
    """The families that changed most, keys added/removed/changed, conversions, type changes,
    and the --fail-on checks when every one passed."""
    k = d["keys"]
    lines: list[tuple[str, str, str]] = []
    for r in [r for r in d["families"]["items"] if r["delta_memory_bytes"]][:3]:
        status = {"new": " (new family)", "vanished": " (vanished)"}.get(r["status"], "")
        lines.append(
            (
                "info",
                f"{fmt_key(r['pattern'], 40)}{status}: {fmt_signed_bytes(r['delta_memory_bytes'])} "
                f"({fmt_bytes(r['old_memory_bytes'])} -> {fmt_bytes(r['new_memory_bytes'])}), "
                f"keys {fmt_int(r['old_keys'])} -> {fmt_int(r['new_keys'])}",
                "see Families",
            )
        )
    lines.append(
        (
            "info",
            f"{fmt_int(k['added'])} keys added, {fmt_int(k['removed'])} removed, "
            f"{fmt_int(k['changed'])} changed, {fmt_int(k['unchanged'])} unchanged",
            "see Keys",
        )
    )
    ec = k["encoding_conversions"]
    if ec["total"]:
        parts = [
            f"{fmt_int(c['keys'])} {c['type']} {c['old_encoding']} -> {c['new_encoding']}"
            + (f" ({c['threshold']})" if c["threshold"] else "")
            for c in ec["conversions"][:2]
        ]
        lines.append(
            (
                "info",
                f"{fmt_int(ec['total'])} encoding conversions: {', '.join(parts)}"
                + (" ..." if len(ec["conversions"]) > 2 else ""),
                "see Keys",
            )
        )
    tc = k["type_changes"]
    if tc["total"]:
        lines.append(("info", f"{fmt_int(tc['total'])} keys changed type", "see Keys"))
    if checks and not any(c["failed"] for c in checks):
        lines.append(
            (
                "info",
                f"every --fail-on check passed ({', '.join(c['rule'] for c in checks)})",
                "see Checks (--fail-on)",
            )
        )
    return lines


def diff_document(d: DiffData) -> list[Block]:
    """The verdict, then the sections."""
    return diff_verdict(d) + diff_sections(d)


def render_diff(d: DiffData, fmt: str) -> str | None:
    """text is printed (rich); markdown and json are returned."""
    if fmt == "json":
        return render_json(dict(d))
    if fmt == "markdown":
        return draw_markdown(diff_document(d), "rdbscan diff")
    draw_text(diff_document(d))
    return None
