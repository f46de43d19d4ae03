"""The TTL charts: remaining TTL at snapshot time, the expiry timeline with its herds."""

from __future__ import annotations

from ....format import fmt_bytes, fmt_duration_ms, fmt_int, fmt_time
from ....html.svg import chart_box
from ....html.svg import columns as _columns

TIMELINE_BUCKETS = 120  # chart_expiry_timeline's default `buckets`


def chart_data(run, options) -> dict:
    return {"expiry_timeline": run.rows("chart_expiry_timeline")}


def charts(report: dict) -> list[str]:
    data = report.get("charts") or {}
    out: list[str] = []
    ttl = report.get("ttl") or {}
    if ttl.get("distribution"):
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
                ),
            )
        )
    timeline = data.get("expiry_timeline") or []
    if timeline:
        width_ms = timeline[0]["bucket_ms"]
        n = TIMELINE_BUCKETS
        by = {r["bucket"]: r for r in timeline}
        rows = []
        for b in range(n + 1):
            r = by.get(b)
            if b == n and not r:
                break
            label = "later" if b == n else "+" + fmt_duration_ms(b * width_ms)
            rows.append(
                (
                    label,
                    r["keys"] if r else 0,
                    f"{fmt_int(r['keys'] if r else 0)} keys, {fmt_bytes(r['memory_bytes'] if r else 0)}",
                )
            )
        herd = (ttl.get("herd") or {}).get("seconds", []) + (ttl.get("herd") or {}).get(
            "minutes", []
        )
        snap = ttl.get("snapshot_ms")
        marks = []
        if snap is not None:
            for h in herd:
                pos = (h["moment_ms"] - snap) / (width_ms * n)
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
                "Expiry timeline after the snapshot (keys per bucket; red: bunched expiries)",
                _columns("Expiry timeline", rows, label_every=max(1, n // 8), marks=marks),
            )
        )
    return out
