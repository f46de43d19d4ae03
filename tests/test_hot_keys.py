"""Hot keys by LFU counter (the cold section's counterpart), against the lfu fixture's manifest."""

from __future__ import annotations

import re

from report_truth import manifest

from rdbscan.db.load import load
from rdbscan.reports import report as rpt
from rdbscan.reports.engine.database import open_database

REL = "redis-7.0.15/variants/lfu"


def test_hot_keys_and_families_match_manifest(tmp_path):
    m = manifest(REL)
    db = str(tmp_path / "lfu.duckdb")
    assert load([str(m.dump)], db)[0].complete
    con = open_database(db)
    try:
        rep = rpt.build_report(
            con, rpt.ReportOptions(sections=("cold",), top=10, settings={"hot_freq": "9"})
        )
    finally:
        con.close()
    c = rep["cold"]
    freqs = sorted((k.lfu_freq for k in m.keys), reverse=True)
    assert [h["lfu_freq"] for h in c["hot"]] == freqs[:10]
    assert c["hot"][0]["key"] == max(m.keys, key=lambda k: k.lfu_freq).text
    fams = {f["pattern"]: f for f in c["hot_families"]}
    counters = [k for k in m.keys if re.fullmatch(r"counter:\d+", k.text)]
    top = max(k.lfu_freq for k in counters)
    assert fams["counter:{id}"]["max_freq"] == top
    assert fams["counter:{id}"]["keys"] == len(counters)
    assert fams["counter:{id}"]["hot_keys"] == sum(1 for k in counters if k.lfu_freq >= 9)
    assert fams["counter:{id}"]["hottest_key"] == min(k.text for k in counters if k.lfu_freq == top)
    assert [f["max_freq"] for f in c["hot_families"]] == sorted(
        (f["max_freq"] for f in c["hot_families"]), reverse=True
    )


def test_no_hot_keys_without_lfu(tmp_path):
    m = manifest("redis-7.0.15/variants/lru")
    db = str(tmp_path / "lru.duckdb")
    load([str(m.dump)], db)
    con = open_database(db)
    try:
        c = rpt.build_report(con, rpt.ReportOptions(sections=("cold",)))["cold"]
    finally:
        con.close()
    assert c["policy"] == "lru" and c["hot"] == [] and c["hot_families"] == []
