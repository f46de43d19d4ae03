"""The report as OpenMetrics text (`rdbscan report --format openmetrics`, docs/export.md): gauges
a Prometheus textfile collector or a Pushgateway takes night after night.

Reads only the report dict (docs/json.md) that rdbscan.report() returns:

    text = render_openmetrics(rdbscan.report(["dump.rdb"]), instance="cache-1")

Every series carries the labels `rdb_instance` (the instance the dumps are snapshots of) and
`server` (`redis 7.4.1`); per-dump series add `dump` (its path), per-family series `family` (the
report's top families and one `other` series holding the rest, so that the family series of a
metric add up to the whole).  The snapshot time is a gauge (`rdbscan_snapshot_timestamp_seconds`)
and a label of `rdbscan_snapshot_info` only: as a label of every series it would start new
series every night.  `instance` is not used as a label name: Prometheus sets it to the scraped
target (node_exporter's), and would rename ours `exported_instance`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from typing import Any

PREFIX = "rdbscan_"
OTHER = "other"  # the family series that holds every family not listed
SEVERITIES = ("critical", "warning", "info")


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(labels: dict[str, Any]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape(str(v))}"' for k, v in labels.items()) + "}"


def _number(value: float | int) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value))


class _Writer:
    def __init__(self, base: dict[str, str]):
        self.base = base
        self.lines: list[str] = []

    def gauge(
        self, name: str, help_text: str, samples: Iterable[tuple[dict[str, Any], Any]]
    ) -> None:
        """One metric family: its HELP and TYPE lines and one sample per (labels, value)."""
        rows = [(labels, value) for labels, value in samples if value is not None]
        if not rows:
            return
        full = PREFIX + name
        self.lines.append(f"# TYPE {full} gauge")
        self.lines.append(f"# HELP {full} {_escape(help_text)}")
        for labels, value in rows:
            self.lines.append(f"{full}{_labels({**self.base, **labels})} {_number(value)}")


def default_instance(report: dict) -> str:
    """The rdb_instance label when none is given: the first dump's file name without its
    extensions (`dump` for /backups/dump.rdb.gz)."""
    dumps = (report.get("overview") or {}).get("dumps") or []
    path = str(dumps[0].get("path") or "") if dumps else ""
    name = os.path.basename(path.rstrip("/")) or "rdb"
    return name.split(".")[0] or name


def _families(
    items: list[dict], total: float | int | None, value_key: str
) -> list[tuple[dict[str, Any], float | int]]:
    """The listed families' values and an `other` series with what they leave of `total`."""
    out: list[tuple[dict[str, Any], float | int]] = []
    listed = 0
    for item in items:
        v = item.get(value_key)
        if v is None:
            continue
        out.append(({"family": item["pattern"]}, v))
        listed += v
    if total is not None:
        out.append(({"family": OTHER}, max(total - listed, 0)))
    return out


def render_openmetrics(report: dict, instance: str | None = None) -> str:
    """The report as OpenMetrics text (ends with `# EOF`)."""
    ov = report.get("overview") or {}
    server = " ".join(str(x) for x in (ov.get("server"), ov.get("server_version")) if x)
    w = _Writer(
        {"rdb_instance": instance or default_instance(report), "server": server or "unknown"}
    )
    _snapshot_metrics(w, ov)
    _total_metrics(w, report, ov)
    _dump_metrics(w, ov.get("dumps") or [])
    _family_metrics(w, report, ov)
    return "\n".join(w.lines) + "\n# EOF\n"


def _snapshot_metrics(w: _Writer, ov: dict) -> None:
    """The snapshot: when it was taken, what it is, and whether every dump was read whole."""
    dumps = ov.get("dumps") or []
    snap_ms = ov.get("snapshot_ms")
    w.gauge(
        "snapshot_timestamp_seconds",
        "When the snapshot was taken (aux ctime, else the file's modification time), Unix seconds.",
        [({}, snap_ms / 1000 if snap_ms is not None else None)],
    )
    w.gauge(
        "snapshot_info",
        "Always 1: the snapshot's time, RDB version and filter as labels.",
        [
            (
                {
                    "snapshot": str(ov.get("snapshot_time") or ""),
                    "rdb_version": str(ov.get("rdb_version") or ""),
                    "filter": str((ov.get("filter") or {}).get("filter") or ""),
                },
                1,
            )
        ],
    )
    w.gauge("dumps", "Dumps the report covers.", [({}, len(dumps))])
    w.gauge(
        "complete",
        "1 when every dump was read to its end, else 0 (the figures cover the keys read).",
        [({}, bool(ov.get("complete")))],
    )


def _total_metrics(w: _Writer, report: dict, ov: dict) -> None:
    """The whole report's figures: keys, memory, big keys and the verdict's findings."""
    ttl = report.get("ttl") or {}
    big = report.get("big_keys") or {}
    w.gauge("keys", "Keys.", [({}, ov.get("keys"))])
    w.gauge("keys_with_ttl", "Keys with a TTL.", [({}, ov.get("keys_with_ttl"))])
    w.gauge(
        "memory_bytes",
        "Estimated memory of the keys (MEMORY USAGE of the server that wrote the dump), bytes.",
        [({}, ov.get("memory_bytes"))],
    )
    w.gauge(
        "memory_total_bytes",
        "Estimated memory with the keyspace's bucket arrays and expires entries, bytes.",
        [({}, ov.get("memory_total_bytes"))],
    )
    w.gauge(
        "memory_without_ttl_bytes",
        "Estimated memory of the keys without a TTL, bytes.",
        [({}, ttl.get("memory_without_ttl"))],
    )
    w.gauge(
        "used_memory_bytes",
        "The servers' used_memory when they saved (aux used-mem), bytes.",
        [({}, ov.get("used_mem"))],
    )
    w.gauge(
        "expired_keys",
        "Keys already expired when the snapshot was taken.",
        [({}, ttl.get("expired_at_snapshot"))],
    )
    w.gauge(
        "big_keys",
        "Big keys by severity (the report's big-key rules).",
        [
            ({"severity": "critical"}, big.get("critical")),
            (
                {"severity": "warning"},
                (big["keys"] - (big.get("critical") or 0)) if big.get("keys") is not None else None,
            ),
        ],
    )
    w.gauge(
        "big_keys_memory_bytes",
        "Estimated memory of the big keys, bytes.",
        [({}, big.get("memory_bytes"))],
    )
    findings = report.get("findings") or []
    w.gauge(
        "findings",
        "Findings of the report's verdict by severity.",
        [({"severity": s}, sum(1 for f in findings if f.get("severity") == s)) for s in SEVERITIES],
    )
    w.gauge(
        "finding_memory_bytes",
        "Estimated memory each finding of the verdict concerns, bytes.",
        [
            ({"finding": f["id"], "severity": f.get("severity") or ""}, f.get("memory_bytes"))
            for f in findings
            if f.get("id")
        ],
    )


def _dump_metrics(w: _Writer, dumps: list[dict]) -> None:
    """One series per dump (label `dump`): its keys, memory, file size, completeness, CRC."""

    def per_dump(key: str) -> list[tuple[dict[str, Any], Any]]:
        return [({"dump": str(d.get("path") or d.get("dump_id"))}, d.get(key)) for d in dumps]

    w.gauge("dump_keys", "Keys of each dump.", per_dump("keys"))
    w.gauge("dump_keys_with_ttl", "Keys with a TTL of each dump.", per_dump("expires"))
    w.gauge(
        "dump_memory_bytes",
        "Estimated memory of each dump's keys, bytes.",
        per_dump("memory_bytes"),
    )
    w.gauge(
        "dump_used_memory_bytes",
        "Each server's used_memory when it saved, bytes.",
        per_dump("used_mem"),
    )
    w.gauge("dump_file_bytes", "Size of each dump file, bytes.", per_dump("file_size"))
    w.gauge(
        "dump_complete",
        "1 when the dump was read to its end.",
        [(lab, bool(v)) for lab, v in per_dump("complete")],
    )
    w.gauge(
        "dump_checksum_ok",
        "1 when the dump's CRC64 matched (0: mismatch; absent when it was not checked).",
        [(lab, v == "ok") for lab, v in per_dump("checksum") if v in ("ok", "mismatch")],
    )


def _family_metrics(w: _Writer, report: dict, ov: dict) -> None:
    """One series per family of the report's top families, and `other` holding the rest, so
    that a metric's family series add up to its whole-report figure."""
    ttl = report.get("ttl") or {}
    big = report.get("big_keys") or {}
    patterns = (report.get("patterns") or {}).get("items") or []
    w.gauge(
        "family_keys",
        "Keys of each key family (the top families, and `other` for the rest).",
        _families(patterns, ov.get("keys"), "keys"),
    )
    w.gauge(
        "family_memory_bytes",
        "Estimated memory of each key family, bytes (the top families, and `other`).",
        _families(patterns, ov.get("memory_bytes"), "memory_bytes"),
    )
    w.gauge(
        "family_memory_without_ttl_bytes",
        "Estimated memory of the keys without a TTL of each family, bytes (the families with "
        "most such memory, and `other`).",
        _families(ttl.get("families") or [], ttl.get("memory_without_ttl"), "memory_without_ttl"),
    )
    big_items = big.get("items") or []
    by_family: dict[str, int] = {}
    for item in big_items:
        fam = item.get("pattern") or item.get("key") or ""
        by_family[fam] = by_family.get(fam, 0) + 1
    w.gauge(
        "family_big_keys",
        "Big keys of each family (of the big keys the report lists, and `other` for the rest).",
        _families(
            [{"pattern": f, "keys": n} for f, n in by_family.items()], big.get("keys"), "keys"
        ),
    )
