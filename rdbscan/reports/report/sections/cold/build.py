"""The cold-keys section: keys idle longer than --idle-days (LRU) and the hottest keys and families
(LFU)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:
    from ....engine.relations import Runner


class _ColdAlways(TypedDict):
    available: bool
    policy: str | None
    reason: str | None
    items: list[dict]
    hot: list[dict]
    hot_families: list[dict]
    advice: list[str]


class ColdData(_ColdAlways, total=False):
    """The `cold` object (docs/json.md); with LRU or LFU data (`available`), also the options
    and queries/cold_summary.sql's row."""

    idle_days: float
    max_freq: int
    keys: int
    keys_with_idle: int
    keys_with_freq: int
    cold_idle_keys: int
    cold_idle_memory: int
    cold_freq_keys: int
    cold_freq_memory: int
    cold_without_ttl: int
    max_idle_seconds: int | None
    median_idle_seconds: float | None
    min_freq: int | None
    median_freq: float | None
    max_freq_seen: int | None


def build(run: Runner, options, meta: dict) -> ColdData:
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
    return cast(
        ColdData,
        {
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
        },
    )


def by_dump(run: Runner, c: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: whether it carries LRU idle times or
    LFU counters (its policy), and its cold keys (cold_summary_by_dump: cold_summary's own
    SQL, GROUP BY dump_id)."""
    out: dict[int, dict] = {d: {"available": False} for d in lines}
    for r in run.rows("cold_summary_by_dump"):
        d = r.pop("dump_id")
        if d in out and (r["keys_with_idle"] or r["keys_with_freq"]):
            out[d] = {
                "available": True,
                "policy": "lfu" if r["keys_with_freq"] else "lru",
                "idle_days": run.values["idle_days"],
                "max_freq": run.values["max_freq"],
                **r,
            }
    return out
