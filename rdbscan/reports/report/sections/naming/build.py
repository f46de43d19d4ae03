"""The naming section: keys breaking the naming rules, per rule and per family."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from ....engine.relations import Runner


class NamingData(TypedDict):
    """The `naming` object (docs/json.md)."""

    keys: int
    memory_bytes: int
    keys_checked: int
    config: dict
    rules: list[dict]
    families: list[dict]
    advice: list[str]


def build(run: Runner, options, meta: dict) -> NamingData:
    rules = run.rows("naming_rules")
    summary = run.one("naming_summary")
    families = run.rows("naming_families")
    advice = []
    broken = [r for r in rules if r["keys"]]
    if broken:
        advice.append(
            "Name keys `<service>:<entity>:<id>[:<field>]` in lowercase ASCII with one delimiter; "
            "rename offenders at write time (RENAME is atomic) or disable rules that do not "
            "apply in a rules file (--rules)."
        )
    return {
        "keys": summary.get("keys", 0),
        "memory_bytes": summary.get("memory_bytes", 0),
        "keys_checked": summary.get("keys_checked", 0),
        "config": options.naming.describe(options.delimiters),
        "rules": rules,
        "families": families,
        "advice": advice,
    }


def by_dump(run: Runner, n: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: the keys breaking any naming rule and
    their memory, and the keys breaking each rule, in the order of the section's rules
    (naming_by_dump: the rules judged per dump, mixed delimiters by the dump's own keys)."""
    order = [r["rule"] for r in n.get("rules") or []]
    out: dict[int, dict] = {d: {"keys": 0} for d in lines}
    for r in run.rows("naming_by_dump"):
        if r["dump_id"] in out:
            keys = {x["rule"]: x["keys"] for x in r["rules"]}
            out[r["dump_id"]] = {
                "keys": r["keys"],
                "memory_bytes": r["memory_bytes"],
                "rules": [{"rule": x, "keys": keys.get(x, 0)} for x in order],
            }
    return out
