"""The report's "Value design" section (`values`; docs/report.md): what the key-design guides say
about values, measured on the dump.

- split keys: a big key split by hand into shards (`video_info#olympic#2020-08-29#1`, `#2`, ...)
  reported as the one logical key it is, with its shard count and balance (queries/split_keys.sql);
- big elements: collections whose longest element exceeds 4 KB (queries/big_elements.sql);
- compressible values: per family, how well strings over 1 KB compress (the RDB stores them
  LZF-compressed, with both sizes) and the memory client-side compression would save
  (queries/compressible.sql).

Every number comes from those SQL files; this module slices their rows and words the advice.
"""

from __future__ import annotations

from typing import TypedDict

from ....engine import querylib
from ....format import fmt_bytes


class SplitKeys(TypedDict):
    min_shards: int
    logical_keys: int
    shards: int
    memory_bytes: int
    big_when_joined: int
    big_when_joined_memory_bytes: int
    items: list[dict]


class BigElements(TypedDict):
    threshold_bytes: int
    keys: int
    memory_bytes: int
    keys_by_type: dict[str, int]
    items: list[dict]


class Compressible(TypedDict):
    min_bytes: int
    keys: int
    raw_bytes: int
    stored_bytes: int
    ratio: float | None
    savings_bytes: int
    lzf_strings: int
    families: list[dict]


class ValuesData(TypedDict):
    """The `values` object (docs/json.md): value design."""

    split_keys: SplitKeys
    big_elements: BigElements
    compressible: Compressible
    advice: list[str]


def _param(run, query: str, name: str):
    """A parameter's value for this report: --set, else the default in the SQL file's header."""
    return run.values.get(name, querylib.get_query(query).params[name].default)


def _pop_totals(rows: list[dict], names: tuple[str, ...]) -> dict:
    """The totals every row carries (window functions), removed from the rows."""
    totals = {n: (rows[0][n] if rows else 0) or 0 for n in names}
    for r in rows:
        for n in names:
            r.pop(n, None)
    return totals


SPLIT_TOTALS = (
    "total_logical_keys",
    "total_shards",
    "total_memory_bytes",
    "total_big_when_joined",
    "total_big_when_joined_memory",
)
COMPRESSIBLE_TOTALS = (
    "total_keys",
    "total_raw_bytes",
    "total_stored_bytes",
    "total_savings_bytes",
    "lzf_strings",
)


def _split_keys(rows: list[dict], min_shards) -> tuple[SplitKeys, dict]:
    """The `split_keys` object from split_keys' rows (the totals taken off them), and the totals."""
    st = _pop_totals(rows, SPLIT_TOTALS)
    return {
        "min_shards": min_shards,
        "logical_keys": st["total_logical_keys"],
        "shards": st["total_shards"],
        "memory_bytes": st["total_memory_bytes"],
        "big_when_joined": st["total_big_when_joined"],
        "big_when_joined_memory_bytes": st["total_big_when_joined_memory"],
        "items": rows,
    }, st


def _compressible(rows: list[dict], min_bytes) -> tuple[Compressible, dict]:
    """The `compressible` object from compressible's rows (the totals taken off them), and the
    totals."""
    ct = _pop_totals(rows, COMPRESSIBLE_TOTALS)
    return {
        "min_bytes": min_bytes,
        "keys": ct["total_keys"],
        "raw_bytes": ct["total_raw_bytes"],
        "stored_bytes": ct["total_stored_bytes"],
        "ratio": _ratio(ct["total_raw_bytes"], ct["total_stored_bytes"]),
        "savings_bytes": ct["total_savings_bytes"],
        "lzf_strings": ct["lzf_strings"],
        "families": rows,
    }, ct


def _big_elements(rows: list[dict], element_bytes) -> tuple[BigElements, dict]:
    """The `big_elements` object from big_elements' rows (the totals taken off them), and the
    totals."""
    by_type = {r["type"]: r["type_keys"] for r in rows}
    bt = _pop_totals(rows, ("total_keys", "total_memory_bytes", "type_keys"))
    return {
        "threshold_bytes": element_bytes,
        "keys": bt["total_keys"],
        "memory_bytes": bt["total_memory_bytes"],
        "keys_by_type": dict(sorted(by_type.items())),
        "items": rows,
    }, bt


def build(run, options, meta: dict) -> ValuesData:
    """The `values` part of the report (docs/json.md)."""
    top = max(options.top, 1)
    split = run.rows("split_keys", top=top)
    split_keys, st = _split_keys(split, _param(run, "split_keys", "min_shards"))
    element_bytes = _param(run, "big_elements", "big_element_bytes")
    big_elements, bt = _big_elements(run.rows("big_elements", top=top), element_bytes)
    comp = run.rows("compressible", top=top)
    min_bytes = _param(run, "compressible", "compress_min_bytes")
    compressible, ct = _compressible(comp, min_bytes)
    advice = _advice(split, comp, st, bt, ct, element_bytes, min_bytes)
    return {
        "split_keys": split_keys,
        "big_elements": big_elements,
        "compressible": compressible,
        "advice": advice,
    }


def _ratio(raw, stored):
    return round(raw / stored, 2) if stored else None


def _advice(split, comp, st: dict, bt: dict, ct: dict, element_bytes, min_bytes) -> list[str]:
    advice = []
    joined = [r for r in split if r["big_when_joined"]]
    if joined:
        advice.append(
            f"{st['total_big_when_joined']} logical key(s) split into shards are big keys once "
            f"their shards are added up (e.g. {joined[0]['logical_key']}: {joined[0]['shards']} "
            "shards): reading all shards costs what reading one big key would."
        )
    uneven = [r for r in split if (r["balance"] or 0) >= 2]
    if uneven:
        u = uneven[0]
        advice.append(
            f"The shards of {u['logical_key']} are uneven: the largest ({u['largest_shard']}, "
            f"{fmt_bytes(u['largest_shard_bytes'])}) is {u['balance']:g} times the median; "
            "hash the element into its shard rather than filling shards in turn."
        )
    if bt["total_keys"]:
        advice.append(
            f"{bt['total_keys']} collection(s) hold an element over "
            f"{fmt_bytes(element_bytes)}: HGETALL/LRANGE/SMEMBERS of them "
            "move whole such elements; keep large payloads in their own string keys or compress them."
        )
    if ct["total_savings_bytes"]:
        advice.append(
            f"Compressing string values over {fmt_bytes(min_bytes)} in the "
            f"client would save about {fmt_bytes(ct['total_savings_bytes'])} "
            f"(LZF ratio {_ratio(ct['total_raw_bytes'], ct['total_stored_bytes'])}; "
            f"the most in {comp[0]['pattern']})."
        )
    if ct["total_keys"] and not ct["lzf_strings"]:
        advice.append(
            "No string of this dump is stored LZF-compressed: it was saved with "
            "`rdbcompression no` (or nothing compresses), so compressibility is not measured."
        )
    return advice


def _per_dump(rows: list[dict]) -> dict[int, list[dict]]:
    """A NAME_by_dump query's rows by dump (without dump_id), in its order."""
    out: dict[int, list[dict]] = {}
    for r in rows:
        out.setdefault(r.pop("dump_id"), []).append(r)
    return out


def by_dump(run, v: dict, lines: dict[int, dict]) -> dict[int, dict]:
    """Each dump's object as far as its findings read it: its split keys that are big once
    joined, its collections with big elements and its compressible strings, with the examples
    its report alone lists (split_keys_by_dump, big_elements_by_dump and compressible_by_dump:
    their single queries' own SQL, ranked per dump)."""
    top = max(run.values.get("top", 1), 1)
    split = _per_dump(run.rows("split_keys_by_dump", top=top))
    big = _per_dump(run.rows("big_elements_by_dump", top=top))
    # the first family of each dump is all its findings name
    comp = _per_dump(run.rows("compressible_by_dump", top=1))
    out = {}
    for d in lines:
        out[d] = {
            "split_keys": _split_keys(split.get(d, []), v["split_keys"]["min_shards"])[0],
            "big_elements": _big_elements(big.get(d, []), v["big_elements"]["threshold_bytes"])[0],
            "compressible": _compressible(comp.get(d, []), v["compressible"]["min_bytes"])[0],
        }
    return out
