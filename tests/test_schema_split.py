"""`rdbscan schema` and `report --schema` on split-key families (`#` segments): the shards of a
key split by hand get one typed pattern, and a schema inferred from the dump checks clean against
it (tests/fixtures/values, written by a real Redis 7.0)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import tomllib
from common import run_cli

from rdbscan.db.load import load
from rdbscan.reports import schema as sch

VALUES = Path(__file__).parent / "fixtures" / "values"
KEYS = json.loads((VALUES / "truth.json").read_text())["keys"]


@pytest.mark.slow
def test_split_key_patterns_and_check(tmp_path):
    db = str(tmp_path / "v.duckdb")
    load([str(VALUES / "dump.rdb")], db)
    out = tmp_path / "ks.toml"
    assert run_cli("schema", db, "-o", str(out), "-q").exit_code == 0
    fams = {f["pattern"]: f for f in tomllib.loads(out.read_text())["family"]}
    uid = fams["uid#{id}#{id}"]
    assert (uid["type"], uid["observed"]["keys"]) == ("string", 200)
    video = fams["video_info#olympic#{date}#{id}"]
    assert (video["type"], video["observed"]["keys"]) == ("hash", 8)
    assert fams["bigset#{id}"]["observed"]["keys"] == 4
    assert fams["order#{date}"]["observed"]["keys"] == 1
    assert sum(f["observed"]["keys"] for f in fams.values()) == len(KEYS) == 579
    res = run_cli("report", db, "--schema", str(out), "--section", "overview", "-f", "json", "-q")
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout)["schema"]
    assert s["keys_documented"] == s["keys"] == 579
    got = {c["check"]: c["count"] for c in s["checks"]}
    assert got["undocumented"] == got["no-keys"] == 0


def test_placeholders_never_take_a_hash_sign():
    """`{*}` stops at `#` as at a delimiter: a pattern's segments are the family's."""
    rx = sch.pattern_regex("uid#{*}#{id}")
    assert re.fullmatch(rx, "uid#ab#7") and not re.fullmatch(rx, "uid#a#b#7")
    assert re.fullmatch(sch.pattern_regex("a:{*}", "/:"), "a:x") and not re.fullmatch(
        sch.pattern_regex("a:{*}", "/:"), "a:x#1"
    )
