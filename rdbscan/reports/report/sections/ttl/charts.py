"""The TTL charts: remaining TTL at snapshot time, the expiry timeline with its herds."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ....format import fmt_bytes, fmt_duration_ms, fmt_int, fmt_time
from ....html.svg import chart_box
from ....html.svg import columns as _columns

if TYPE_CHECKING:
    from ...data import ReportData

PER_DECADE = 4  # chart_expiry_timeline's default `per_decade`: buckets per power of ten


def _edge_ms(bucket: int) -> float:
    """Where a bucket of the log-scale timeline starts, in ms after the snapshot."""
    return 1000 * 10 ** (bucket / PER_DECADE)


def chart_data(run, options) -> dict:
    return {"expiry_timeline": run.rows("chart_expiry_timeline")}


def charts(report: ReportData) -> list[str]:
    data = report.get("charts")  # the HTML report's
    out: list[str] = []
    ttl = report.get("ttl")  # --section may leave it out
    if ttl and ttl["distribution"]:
        out.append(
            chart_box(
                "Remaining TTL at snapshot (keys)",
                _columns(
                    "TTL distribution",
                    [
                        (
                            d["bucket"],
                            d.get("keys") or 0,
                            f"{fmt_int(d.get('keys'))} keys, {fmt_bytes(d.get('memory_bytes'))}",
                        )
                        for d in ttl["distribution"]
                    ],
                    values=True,
                ),
            )
        )
    timeline = data["expiry_timeline"] if data else []
    if timeline:
        rows = []
        by = {r["bucket"]: r for r in timeline}
        first, last = timeline[0]["bucket"], timeline[-1]["bucket"]
        for b in range(first, last + 1):
            r = by.get(b) or {"keys": 0, "memory_bytes": 0}
            lo, hi = _edge_ms(b), _edge_ms(b + 1)
            rows.append(
                (
                    "+" + fmt_duration_ms(lo),
                    r["keys"],
                    f"+{fmt_duration_ms(lo)} to +{fmt_duration_ms(hi)}: {fmt_int(r['keys'])} "
                    f"keys, {fmt_bytes(r['memory_bytes'])}",
                )
            )
        herd = ttl["herd"]["seconds"] + ttl["herd"]["minutes"] if ttl else []
        snap = ttl["snapshot_ms"] if ttl else None
        marks = []
        if snap is not None:
            for h in herd:
                at = h["moment_ms"] - snap
                if at <= 0:
                    continue
                pos = (math.log10(max(at, 1000) / 1000) * PER_DECADE - first) / len(rows)
                if 0 <= pos <= 1:
                    marks.append(
                        (
                            pos,
                            f"herd: {h['keys']} keys in one {h['granularity']} at "
                            f"{fmt_time(h['moment_ms'])}",
                        )
                    )
        out.append(
            chart_box(
                "Expiry timeline after the snapshot (keys per bucket, log time axis; red: "
                "bunched expiries)",
                _columns(
                    "Expiry timeline",
                    rows,
                    label_every=PER_DECADE,
                    marks=marks,
                    values=True,
                ),
                "Each step of the axis is ten times the one before: expiries in the next minutes "
                "and in the next years are both visible.",
            )
        )
    return out
