"""The report's value-design section (`values`: split keys, big elements, compressible values)
against what a real Redis 7.0 said about every key (tests/fixtures/values: dump.rdb, lfu.rdb and
truth.json, written by make_values.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W
from common import run_cli

from rdbscan.api import load
from rdbscan.errors import EXIT_FINDINGS
from rdbscan.reports import report as rpt
from rdbscan.reports.engine.database import open_database
from rdbscan.reports.report.rules import load_rules

HERE = Path(__file__).parent / "fixtures" / "values"
TRUTH = json.loads((HERE / "truth.json").read_text())
KEYS = TRUTH["keys"]
COLLECTIONS = ("list", "set", "zset", "hash", "stream")


@pytest.fixture(scope="module")
def db(loaded):
    return loaded(HERE / "dump.rdb")


def _report(path: str, **options) -> dict:
    con = open_database(path, read_only=True)
    try:
        options.setdefault("sections", ("values",))
        return rpt.build_report(con, rpt.ReportOptions(top=options.pop("top", 100), **options))
    finally:
        con.close()


@pytest.fixture(scope="module")
def values(db) -> dict:
    return _report(db)["values"]


def test_split_key_families(db):
    con = duckdb.connect(db, read_only=True)
    fams = dict(con.execute("SELECT family, count(*) FROM keys GROUP BY family").fetchall())
    assert fams["uid#{id}#{id}"] == sum(k.startswith("uid#") for k in KEYS) == 200
    assert fams["video_info#olympic#{date}#{id}"] == 8
    assert fams["bigset#{id}"] == 4 and fams["feed#{id}"] == 3
    assert fams["order#{date}"] == 1 and fams["page#about"] == 1


def test_split_keys_are_logical_keys_with_shards_and_balance(values):
    sk = values["split_keys"]
    # the fixture's design: names ending in `#<integer>`, grouped by the rest, 2+ shards
    groups: dict[str, list[str]] = {}
    for k in KEYS:
        m = re.fullmatch(r"(.*)#([0-9]+)", k)
        if m and k != "order#20240131":  # a date, not a shard number
            groups.setdefault(m[1], []).append(k)
    groups = {g: ks for g, ks in groups.items() if len(ks) >= 2}
    assert sorted(groups) == sorted(
        ["video_info#olympic#2020-08-29", "feed", "bigset"] + [f"uid#{u}" for u in range(20)]
    )
    assert (sk["logical_keys"], sk["shards"]) == (23, 215)
    assert sk["shards"] == sum(len(v) for v in groups.values())
    assert sk["memory_bytes"] == sum(KEYS[k]["memory"] for v in groups.values() for k in v)
    assert sk["big_when_joined"] == 1
    items = {r["logical_key"]: r for r in sk["items"]}
    assert set(items) == set(groups)
    for name, shard_keys in groups.items():
        mem = sorted(KEYS[k]["memory"] for k in shard_keys)
        r = items[name]
        assert r["shards"] == len(shard_keys), name
        assert r["memory_bytes"] == sum(mem), name
        assert r["length"] == sum(KEYS[k]["length"] for k in shard_keys), name
        assert r["largest_shard_bytes"] == mem[-1], name
        assert r["median_shard_bytes"] == mem[(len(mem) - 1) // 2], name  # quantile_disc
        assert r["balance"] == round(mem[-1] / mem[(len(mem) - 1) // 2], 2), name
        assert r["type"] == KEYS[shard_keys[0]]["type"]
    video = items["video_info#olympic#2020-08-29"]
    assert video["largest_shard"] == "video_info#olympic#2020-08-29#8" and video["balance"] > 5
    assert video["length"] == 7 * 50 + 400
    big = items["bigset"]  # 4 sets of 2,000: 8,000 elements once joined, over 5,000
    assert (big["big_when_joined"], big["big_shard"], big["length"]) == (True, False, 8000)
    assert [r["logical_key"] for r in sk["items"]][:2] == [
        "bigset",
        "video_info#olympic#2020-08-29",
    ]
    assert any("uneven" in a and "video_info" in a for a in values["advice"])


def test_split_keys_min_shards_and_top(db):
    v = _report(db, top=3, settings={"min_shards": "5"})["values"]["split_keys"]
    # 5+ shards: video_info (8) and the 20 uid#N (10 each)
    assert (v["logical_keys"], v["shards"], v["min_shards"]) == (21, 208, 5)
    assert len(v["items"]) == 3


def test_big_elements_match_the_server(values):
    be = values["big_elements"]
    want = {
        k: t
        for k, t in KEYS.items()
        if t["type"] in COLLECTIONS and (t["max_element_bytes"] or 0) > 4096
    }
    assert sorted(want) == ["board:big", "doc:1", "doc:2", "doc:4", "jobs:big", "members:big"]
    assert KEYS["doc:3"]["max_element_bytes"] == 4096  # exactly 4 KB: not over
    assert be["keys"] == len(want) == 6
    assert be["keys_by_type"] == {"hash": 3, "list": 1, "set": 1, "zset": 1}
    assert {r["key"]: r["max_elem_bytes"] for r in be["items"]} == {
        k: t["max_element_bytes"] for k, t in want.items()
    }
    assert [r["key"] for r in be["items"]][0] == "jobs:big"  # the longest element first
    assert {r["key"]: r["length"] for r in be["items"]} == {k: t["length"] for k, t in want.items()}


def test_max_elem_bytes_is_the_servers_longest_element(db):
    con = duckdb.connect(db, read_only=True)
    got = dict(
        con.execute(
            "SELECT key, max_elem_bytes FROM keys WHERE type IN ('list', 'set', 'zset', 'hash')"
        ).fetchall()
    )
    want = {k: t["max_element_bytes"] for k, t in KEYS.items() if t["type"] in COLLECTIONS}
    assert got == want and len(got) > 50


def _compressible_truth(keys: dict, min_bytes: int) -> dict:
    """Per family (the key without its trailing number), what the server's DUMP and MEMORY USAGE say."""
    fams: dict[str, dict] = {}
    for k, t in keys.items():
        if t["type"] != "string" or t["length"] <= min_bytes:
            continue
        f = fams.setdefault(
            re.sub(r"[0-9]+$", "{id}", k),
            {"keys": 0, "raw_bytes": 0, "stored_bytes": 0, "lzf_keys": 0, "savings_bytes": 0},
        )
        f["keys"] += 1
        f["raw_bytes"] += t["length"]
        f["stored_bytes"] += t["lzf_bytes"] if t["lzf"] else t["length"]
        f["lzf_keys"] += t["lzf"]
        if t["lzf"]:
            f["savings_bytes"] += t["memory"] - t["memory_if_compressed"]
    return fams


@pytest.mark.slow
@pytest.mark.parametrize("dump,keys", [("dump.rdb", "keys"), ("lfu.rdb", "lfu_keys")])
def test_compressible_values_match_the_server(tmp_path, dump, keys):
    """dump.rdb has an LRU idle time in every record, lfu.rdb an LFU counter; some keys a TTL."""
    path = str(tmp_path / "c.duckdb")
    load([str(HERE / dump)], path)
    truth = TRUTH[keys]
    for min_bytes in (1024, 20):  # 20: every string the server may compress
        cp = _report(path, settings={"compress_min_bytes": str(min_bytes)})["values"][
            "compressible"
        ]
        want = _compressible_truth(truth, min_bytes)
        got = {
            r["pattern"]: {
                n: r[n] for n in ("keys", "raw_bytes", "stored_bytes", "lzf_keys", "savings_bytes")
            }
            for r in cp["families"]
        }
        assert got == want, min_bytes
        assert cp["keys"] == sum(f["keys"] for f in want.values())
        assert cp["savings_bytes"] == sum(f["savings_bytes"] for f in want.values())
        assert cp["lzf_strings"] == sum(t["type"] == "string" and t["lzf"] for t in truth.values())
        assert cp["ratio"] == round(cp["raw_bytes"] / cp["stored_bytes"], 2)
    assert set(want) >= {"html:{id}", "rnd:{id}", "snip:{id}"}
    assert want["rnd:{id}"]["lzf_keys"] == 0 and want["html:{id}"]["lzf_keys"] == 12


def test_compressible_families_and_advice(values):
    cp = values["compressible"]
    assert [r["pattern"] for r in cp["families"]] == ["html:{id}", "rnd:{id}"]
    html = cp["families"][0]
    assert html["ratio"] > 2 and cp["families"][1]["ratio"] == 1.0
    assert cp["min_bytes"] == 1024 and cp["lzf_strings"] == 20
    assert any("Compressing string values" in a for a in values["advice"])


def test_a_dump_without_lzf_strings_says_nothing_was_measured(tmp_path):
    """Strings stored as they are (rdbcompression no, or incompressible): ratio 1, and the
    advice says the ratio was not measured."""
    body = b"\xfe\x00" + b"".join(
        W.key(0, f"blob:{i}", W.string(bytes(range(256)) * 8)) for i in range(3)
    )
    rdb = tmp_path / "raw.rdb"
    rdb.write_bytes(W.rdb(body, version=10))
    path = str(tmp_path / "raw.duckdb")
    load([str(rdb)], path)
    v = _report(path)["values"]
    cp = v["compressible"]
    assert (cp["keys"], cp["raw_bytes"], cp["stored_bytes"], cp["savings_bytes"]) == (
        3,
        6144,
        6144,
        0,
    )
    assert cp["lzf_strings"] == 0
    assert any("rdbcompression no" in a for a in v["advice"])


def test_text_and_markdown_render_the_section(db):
    from rdbscan.reports.report.render import render_markdown

    rep = _report(db)
    md = render_markdown(rep)
    assert "Value design" in md and "olympic#2020-08-29 | hash | 8 |" in md
    assert "Collections with an element over 4.0 KiB" in md


def _type_named(key: str) -> set[str]:
    return set(re.split("[:#]", key.lower())) & {"string", "hash", "list", "set", "zset", "stream"}


@pytest.mark.slow
def test_type_name_rule_is_opt_in_and_exact(db, tmp_path):
    want = sorted(k for k, t in KEYS.items() if _type_named(k) and t["type"] not in _type_named(k))
    assert want == ["app:hash:6", "cfg:colors:string", "tags:set:1"]
    assert len([k for k in KEYS if _type_named(k)]) == 14  # `hashes:seen` names no type

    def naming(**kw) -> dict:
        con = open_database(db, read_only=True)
        try:
            return rpt.build_report(con, rpt.ReportOptions(sections=("naming",), **kw))["naming"]
        finally:
            con.close()

    off = naming()
    assert "type-name" not in {r["rule"] for r in off["rules"]}
    assert "type-name" in off["config"]["disabled"]
    rules = tmp_path / "rules.toml"
    rules.write_text("[rules.type-name]\nenabled = true\n")
    on = naming(naming=load_rules(str(rules)).naming)
    got = {r["rule"]: r for r in on["rules"]}["type-name"]
    assert got["keys"] == len(want) == 3 and sorted(got["examples"]) == want
    assert got["memory_bytes"] == sum(KEYS[k]["memory"] for k in want)
    assert "type-name" not in on["config"]["disabled"]
    assert on["keys"] - off["keys"] == 3  # none of them breaks another rule
    # every key longer than 4 bytes breaks recommended-length: the three type-name keys too, so
    # turning type-name on adds rows to rnaming but no key to the count (naming_summary counts
    # each key once: its first_rule row, and the keys that break type-name alone apart)
    rules.write_text("[rules.recommended-length]\nmax_bytes = 4\n")
    short = naming(naming=load_rules(str(rules)).naming)
    rules.write_text(
        "[rules.type-name]\nenabled = true\n[rules.recommended-length]\nmax_bytes = 4\n"
    )
    both = naming(naming=load_rules(str(rules)).naming)
    assert all(len(k.encode()) > 4 for k in want)
    assert {r["rule"]: r["keys"] for r in both["rules"]}["type-name"] == 3
    assert short["keys"] >= len([k for k in KEYS if len(k.encode()) > 4]) > off["keys"]
    assert (both["keys"], both["memory_bytes"]) == (short["keys"], short["memory_bytes"])
    res = run_cli(
        "report",
        db,
        "--rules",
        str(rules),
        "--section",
        "naming",
        "-q",
        "-f",
        "json",
        "--fail-on",
        "naming:type-name=2",
    )
    assert res.exit_code == EXIT_FINDINGS, res.output
    assert json.loads(res.stdout)["fail_on"]["checks"][0]["value"] == 3


def test_findings(db):
    rep = _report(db, sections=("overview", "values"))
    found = {f["id"]: f for f in rep["findings"]}
    split = found["split-big-keys"]
    assert (split["severity"], split["keys"]) == ("warning", 1)
    assert split["memory_bytes"] == sum(KEYS[f"bigset#{i}"]["memory"] for i in range(1, 5))
    assert "bigset" in split["message"] and "8,000 elements" in split["message"]
    big = found["big-elements"]
    assert (big["severity"], big["keys"]) == ("info", 6)
    comp = found["compressible-strings"]
    want = _compressible_truth(KEYS, 1024)
    assert comp["memory_bytes"] == sum(f["savings_bytes"] for f in want.values()) > 0
    assert comp["keys"] == sum(f["keys"] for f in want.values()) == 18


def test_key_meta_opcodes_do_not_read_as_compression(tmp_path):
    """RDB 13's KEY_META before a record counts in serialized_bytes: a raw string behind one
    still reads as stored raw, and an LZF string's payload length stays exact without one."""
    import struct

    import lzf

    meta = b"\xf3" + W.length(1) + struct.pack("<I", 7) + W.length(2) + W.length(42) + W.length(0)
    raw = bytes(range(256)) * 8
    text = b"<p>the quick brown fox</p>" * 100
    packed = lzf.compress(text)
    body = (
        b"\xfe\x00"
        + meta
        + W.key(0, "raw:1", W.string(raw))
        + W.key(0, "lzf:1", b"\xc3" + W.length(len(packed)) + W.length(len(text)) + packed)
    )
    rdb = tmp_path / "meta.rdb"
    rdb.write_bytes(W.rdb(body, version=13))
    path = str(tmp_path / "meta.duckdb")
    load([str(rdb)], path)
    fams = {r["pattern"]: r for r in _report(path)["values"]["compressible"]["families"]}
    assert (fams["raw:{id}"]["stored_bytes"], fams["raw:{id}"]["lzf_keys"]) == (len(raw), 0)
    assert (fams["lzf:{id}"]["stored_bytes"], fams["lzf:{id}"]["lzf_keys"]) == (len(packed), 1)
    assert fams["lzf:{id}"]["raw_bytes"] == len(text) == 2600
