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
