"""The compact-encodings section: keys in a non-compact encoding that fit the thresholds, keys just
over, what raising a threshold would convert."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from ....engine.thresholds import SETTING_NAMES
from ....format import fmt_bytes

if TYPE_CHECKING:
    from ....engine.relations import Runner


class CandidatesTotal(TypedDict):
    keys: int
    savings_bytes: int


class _SeveralDumps(TypedDict, total=False):
    # a report over several dumps: the thresholds each dump is judged by (its own server's)
    servers: list[dict]


class EncodingsData(_SeveralDumps):
    """The `encodings` object (docs/json.md)."""

    server: str | None
    server_version: str | None
    thresholds: dict[str, int]
    threshold_sources: dict[str, str]
    compact_encoding: str
    list_compact_encoding: str
    candidates: list[dict]
    candidates_by_type: list[dict]
    candidates_total: CandidatesTotal
    near_threshold: list[dict]
    what_if: list[dict]
    strings_to_hashes: list[dict]
    advice: list[str]


def build(run: Runner, options, meta: dict) -> EncodingsData:
    values = run.values
    candidates = run.rows("encoding_candidates")
    summary = run.rows("encoding_candidates_summary")
    near = run.rows("encoding_near")
    whatif = run.rows("encoding_whatif")
    s2h = run.rows("strings_to_hashes")
    total: CandidatesTotal = {
        "keys": sum(r["keys"] for r in summary),
        "savings_bytes": sum(r["savings_bytes"] for r in summary),
    }
    thresholds = {name: values[p] for p, name in SETTING_NAMES.items()}
    advice = []
    if total["keys"]:
        advice.append(
            f"{total['keys']} key(s) are non-compact although small enough (about "
            f"{fmt_bytes(total['savings_bytes'])} to save): rewrite them "
            "(DUMP + RESTORE REPLACE, or copy and RENAME) to get the compact encoding back."
        )
    best = max(
        (w for w in whatif if w["change"] != "current thresholds" and w["savings_bytes"] > 0),
        key=lambda w: w["savings_bytes"],
        default=None,
    )
    if best:
        advice.append(
            f"Raising {best['change']} would convert {best['keys']} key(s) and save about "
            f"{fmt_bytes(best['savings_bytes'])} (larger listpacks cost CPU per access)."
        )
    if s2h:
        advice.append(
            f"Small string families such as {s2h[0]['family']} would be cheaper as hash fields "
            f"(HSET {s2h[0]['example_parent']} <field> <value>)."
        )
    out: EncodingsData = {
        "server": meta["server"],
        "server_version": meta["server_version"],
        "thresholds": thresholds,
        "threshold_sources": {SETTING_NAMES[p]: src for p, src in meta["sources"].items()},
        "compact_encoding": values["compact_encoding"],
        "list_compact_encoding": values["list_compact_encoding"],
        "candidates": candidates,
        "candidates_by_type": summary,
        "candidates_total": total,
        "near_threshold": near,
        "what_if": whatif,
        "strings_to_hashes": s2h,
        "advice": advice,
    }
    servers = run.rows("encoding_servers")
    if len(servers) > 1:
        out["servers"] = servers
    return out


def by_dump(run: Runner, e: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it, by the thresholds of its own server:
    its non-compact keys small enough to be compact, with the keys its report alone lists
    (encoding_candidates_by_dump), and its string families cheaper as hash fields
    (strings_to_hashes_by_dump: strings_to_hashes' own SQL, the `top` of each dump)."""
    cand = {r["dump_id"]: r for r in run.rows("encoding_candidates_by_dump")}
    s2h: dict[int, list[dict]] = {d: [] for d in lines}
    for r in run.rows("strings_to_hashes_by_dump"):
        if r["dump_id"] in s2h:
            s2h[r["dump_id"]].append(r)
    out = {}
    for d in lines:
        c = cand.get(d) or {}
        out[d] = {
            "candidates_total": {
                "keys": c.get("keys", 0),
                "savings_bytes": c.get("savings_bytes", 0),
            },
            "candidates": [{"key": k} for k in c.get("listed") or []],
            "strings_to_hashes": s2h[d],
        }
    return out
