"""The TTL section: keys without expiry, families that look ephemeral, expiry herds, the TTL
distribution."""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, TypedDict, cast

from .words import expected_words

if TYPE_CHECKING:
    from ....engine.relations import Runner


class Herd(TypedDict):
    seconds: list[dict]
    minutes: list[dict]


class TtlData(TypedDict):
    """The `ttl` object (docs/json.md): queries/ttl_summary.sql's row, then the lists."""

    keys: int
    keys_with_ttl: int
    keys_without_ttl: int
    memory_bytes: int
    memory_without_ttl: int
    memory_share_without_ttl: float | None
    key_share_without_ttl: float | None
    expired_at_snapshot: int
    memory_expired_at_snapshot: int
    expiring_within_1h: int
    hashes_with_field_ttl: int
    snapshot_ms: int | None
    snapshot_time: str | None
    families: list[dict]
    herd: Herd
    distribution: list[dict]
    advice: list[str]


def _ms_to_iso(ms):
    if ms is None:
        return None
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.timezone.utc).isoformat()


def build(run: Runner, options, meta: dict) -> TtlData:
    s = run.one("ttl_summary")
    families = run.rows("ttl_families")
    # the section's table: the herds among the `top` of all dumps (by_dump reads the others)
    herd = [_herd_row(h) for h in run.rows("ttl_herd") if h["listed"]]
    dist = run.rows("ttl_distribution")
    advice = []
    eph = [f for f in families if f["looks_ephemeral"]]
    if eph:
        names = ", ".join(f["pattern"] for f in eph[:3])
        advice.append(
            f"Cache/session-like families without TTL ({names}): give them an expiry "
            "(SET ... EX, EXPIRE) so they cannot grow without bound."
        )
    if herd:
        worst = min(herd, key=lambda h: h["log10_p_value"])  # the least plausible
        advice.append(
            f"{worst['keys']} keys of {worst['pattern']} expire in the same {worst['granularity']} "
            f"({worst['moment']}) {expected_words(worst['expected_keys'])}: add random jitter "
            "to their TTLs to spread expiry load."
        )
    if s.get("expired_at_snapshot"):
        advice.append(
            f"{s['expired_at_snapshot']} key(s) were already expired at snapshot time: active "
            "expiry is falling behind (raise `hz` or check for blocked event loops)."
        )
    return cast(
        TtlData,
        {
            **s,
            "snapshot_time": _ms_to_iso(s.get("snapshot_ms")),
            "families": families,
            "herd": {
                "seconds": [h for h in herd if h["granularity"] == "second"],
                "minutes": [h for h in herd if h["granularity"] == "minute"],
            },
            "distribution": dist,
            "advice": advice,
        },
    )


def _herd_row(h: dict) -> dict:
    """A row of ttl_herd as the `herd` lists hold it (without which ranking listed it)."""
    return {k: v for k, v in h.items() if k not in ("listed", "dump_listed")}


def by_dump(run: Runner, t: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it for keys without TTL, keys expired at
    snapshot (its `dump_lines` row), expiry herds (ttl_herd: the `top` of each dump, from
    the query the section ran) and cache/session-like families without TTL
    (ttl_families_by_dump: those among the `top` families of each dump)."""
    herds: dict[int, list[dict]] = {d: [] for d in lines}
    for h in run.rows("ttl_herd"):
        if h["dump_listed"] and h["dump_id"] in herds:
            herds[h["dump_id"]].append(_herd_row(h))
    families: dict[int, list[dict]] = {d: [] for d in lines}
    for f in run.rows("ttl_families_by_dump"):
        if f["dump_id"] in families:
            families[f["dump_id"]].append(f)
    out = {}
    for d, r in lines.items():
        out[d] = {
            "expired_at_snapshot": r["expired_at_snapshot"],
            "memory_expired_at_snapshot": r["memory_expired_at_snapshot"],
            "keys_without_ttl": r["keys_without_ttl"],
            "memory_without_ttl": r["memory_without_ttl"],
            "memory_share_without_ttl": (
                r["memory_without_ttl"] / r["memory_bytes"] if r["memory_bytes"] else 0
            ),
            "herd": {
                "seconds": [h for h in herds[d] if h["granularity"] == "second"],
                "minutes": [h for h in herds[d] if h["granularity"] == "minute"],
            },
            "families": families[d],
        }
    return out
