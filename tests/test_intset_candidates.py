"""Hashtable sets whose members are all integers: counted by the parser (`int_members`) and
reported as intset candidates under set-max-intset-entries."""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
from common import run_cli
from manifest_compare import compare, manifest_key

from rdbscan.db.load import load

D = Path(__file__).parent / "fixtures" / "redis-7.4.1" / "small"
INT32 = re.compile(r"-?[1-9][0-9]{0,9}|0")


def _is_int32_text(v) -> bool:
    return isinstance(v, str) and bool(INT32.fullmatch(v)) and -(2**31) <= int(v) < 2**31


def test_int_members_match_the_manifest():
    m = json.loads((D / "manifest.json").read_text())
    _, _, recs = compare(str(D / "dump.rdb"), str(D / "manifest.json"))
    got = {(r.db, r.key): r for r in recs}
    checked = 0
    for e in m["keys"]:
        if e["type"] != "set" or e["encoding"] != "hashtable":
            continue
        r = got[(e["db"], manifest_key(e))]
        if "value" in e:  # members listed by the manifest (small sets)
            assert r.int_members == sum(_is_int32_text(v) for v in e["value"])
            checked += 1
        elif e["key"] == "set:int:n513":  # 513 integers, one over the intset limit
            assert r.int_members == e["length"] == 513
            checked += 1
    assert checked >= 2


def test_intset_candidates_follow_the_threshold(tmp_path):
    db = str(tmp_path / "i.duckdb")
    load([str(D / "dump.rdb")], db)
    con = duckdb.connect(db, read_only=True)
    all_int = {
        k
        for (k,) in con.execute(
            "SELECT key FROM keys WHERE encoding = 'hashtable' AND type = 'set' "
            "AND int_members = length"
        ).fetchall()
    }
    con.close()
    assert all_int == {"set:int:n513"}

    def intsets(*params):
        out = run_cli("query", db, "encoding_candidates", "-f", "json", *params)
        assert out.exit_code == 0, out.output
        return {r["key"] for r in json.loads(out.output) if r["target_encoding"] == "intset"}

    assert intsets() == set()  # 513 > 512
    assert intsets("-p", "set_max_intset_entries=513") == all_int
