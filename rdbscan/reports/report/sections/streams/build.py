"""The streams section: consumer groups, pending entries, length; hash fields with TTLs."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from ....engine.relations import Runner


class StreamsData(TypedDict):
    """The `streams` object (docs/json.md)."""

    items: list[dict]
    hash_field_ttl: list[dict]
    advice: list[str]


def build(run: Runner, options, meta: dict) -> StreamsData:
    items = run.rows("streams")
    hfe = run.rows("hash_field_ttl")
    advice = []
    pel = [s for s in items if (s["pending"] or 0) >= 1000]
    if pel:
        advice.append(
            f"Stream {pel[0]['key']} has {pel[0]['pending']} pending entries: consumers do not "
            "XACK; claim (XAUTOCLAIM) or acknowledge them."
        )
    untrimmed = [s for s in items if (s["length"] or 0) >= 100_000]
    if untrimmed:
        advice.append(
            f"Stream {untrimmed[0]['key']} holds {untrimmed[0]['length']} entries: cap it with "
            "XADD ... MAXLEN ~ N or XTRIM."
        )
    return {"items": items, "hash_field_ttl": hfe, "advice": advice}


def by_dump(run: Runner, st: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: the streams its report alone lists
    (streams_by_dump: one ranking per dump)."""
    out: dict[int, dict] = {d: {"items": []} for d in lines}
    for r in run.rows("streams_by_dump"):
        if r["dump_id"] in out:
            out[r["dump_id"]]["items"].append(r)
    return out
