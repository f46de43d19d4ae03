"""The key-families section: which families hold the keys and the memory, and prefixes."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from ....engine.relations import Runner


class PatternsData(TypedDict):
    """The `patterns` object (docs/json.md)."""

    delimiters: str
    families: int
    items: list[dict]
    prefixes: list[dict]
    advice: list[str]


def build(run: Runner, options, meta: dict) -> PatternsData:
    items = run.rows("patterns", top=max(options.top, 1))
    prefixes = run.rows("prefixes", top=max(options.top, 1))
    families = sum(r["families"] for r in items)
    advice = []
    if items and items[0]["pattern"] != "(other)" and (items[0]["memory_share"] or 0) >= 0.5:
        advice.append(
            f"One family, {items[0]['pattern']}, holds {items[0]['memory_share']:.0%} of the memory: "
            "start any clean-up or resizing there."
        )
    return {
        "delimiters": options.delimiters,
        "families": families,
        "items": items,
        "prefixes": prefixes,
        "advice": advice,
    }


def by_dump(run: Runner, p: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: the family holding the most of its
    memory, the first of its `items` (patterns_by_dump: one ranking per dump)."""
    out: dict[int, dict] = {d: {"items": []} for d in lines}
    for r in run.rows("patterns_by_dump"):
        if r["dump_id"] in out:
            out[r["dump_id"]]["items"].append(r)
    return out
