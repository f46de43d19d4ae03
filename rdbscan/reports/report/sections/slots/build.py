"""The cluster-slots section: keys and memory per hash slot, and hashtags."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict, cast

if TYPE_CHECKING:
    from ....engine.relations import Runner


class SlotsData(TypedDict):
    """The `slots` object (docs/json.md): queries/slot_summary.sql's row, then the lists."""

    slots_used: int
    keys: int
    avg_keys_per_slot: float | None
    max_keys_in_slot: int | None
    max_memory_in_slot: int | None
    announced_slots: int | None
    announced_mismatches: int | None
    mismatch_dumps: list[int] | None
    hottest: list[dict]
    by_memory: list[dict]
    hashtags: list[dict]
    advice: list[str]


def build(run: Runner, options, meta: dict) -> SlotsData:
    summary = run.one("slot_summary")
    summary.pop("mismatches_by_dump", None)  # by_dump's
    hottest = run.rows("slots")
    by_memory = run.rows("slots_by_memory")
    tags = run.rows("hashtags")
    advice = []
    if tags and hottest and hottest[0]["keys"] >= 10 and hottest[0]["hashtags"]:
        advice.append(
            f"Slot {hottest[0]['slot']} holds {hottest[0]['keys']} keys because of hashtag(s) "
            f"{', '.join(hottest[0]['hashtags'])}: keep hashtags for keys that need multi-key "
            "operations, and make the tag include the entity id."
        )
    if summary.get("announced_mismatches"):
        advice.append(
            "The per-slot counts announced in the dump disagree with the keys read: the dump "
            "may be damaged or truncated."
        )
    return cast(
        SlotsData,
        {
            **summary,
            "hottest": hottest,
            "by_memory": by_memory,
            "hashtags": tags,
            "advice": advice,
        },
    )


def by_dump(run: Runner, s: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: the slots of each dump that disagree
    with what it announced (slot_summary, the query the section ran), and its hottest slot
    with the hashtags that fill it (slots_by_dump: one ranking per dump)."""
    wrong = {r["dump_id"]: r["slots"] for r in run.one("slot_summary")["mismatches_by_dump"] or []}
    hot = {r["dump_id"]: r for r in run.rows("slots_by_dump")}
    return {
        d: {"announced_mismatches": wrong.get(d, 0), "hottest": [hot[d]] if d in hot else []}
        for d in lines
    }
