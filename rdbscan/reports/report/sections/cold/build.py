"""The cold-keys section: keys idle longer than --idle-days (LRU) and the hottest keys and families
(LFU)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ....engine.relations import Runner
    from ...build import ReportOptions


def build(run: Runner, options: ReportOptions, meta: dict) -> dict:
    s = run.one("cold_summary")
    has_idle, has_freq = bool(s.get("keys_with_idle")), bool(s.get("keys_with_freq"))
    if not (has_idle or has_freq):
        return {
            "available": False,
            "policy": None,
            "reason": "This dump has no LRU idle times or LFU counters: Redis writes them only when "
            "maxmemory-policy is an LRU or LFU policy, and this server was not using one "
            "when it saved, so key idleness cannot be known offline.",
            "items": [],
            "hot": [],
            "hot_families": [],
            "advice": [],
        }
    items = run.rows("cold_keys")
    hot = run.rows("hot_keys") if has_freq else []
    hot_families = run.rows("hot_families") if has_freq else []
    advice = []
    cold_nottl = s.get("cold_without_ttl") or 0
    if cold_nottl:
        advice.append(
            f"{cold_nottl} cold key(s) have no TTL: review them for deletion or give them an expiry."
        )
    return {
        "available": True,
        "policy": "lfu" if has_freq else "lru",
        "idle_days": options.idle_days,
        "max_freq": options.max_freq,
        **s,
        "reason": None,
        "items": items,
        "hot": hot,
        "hot_families": hot_families,
        "advice": advice,
    }
