"""`rdbscan diff`: pairs of real dumps (Redis 7.0, tests/fixtures/diff/make_pairs.py) with a
scripted set of changes; every figure of the diff is checked against what the server said about
each key before each save (changes.json), or, for memory, against the rows of each dump loaded
on its own."""

from __future__ import annotations

import collections
import json
import re
import shutil
from fractions import Fraction
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W
from common import run_cli

from rdbscan.db.load import load
from rdbscan.reports import diff as D
from rdbscan.reports.diff.blocks import fmt_per_day_bytes

FIX = Path(__file__).parent / "fixtures" / "diff"
TRUTH = json.loads((FIX / "changes.json").read_text())
COLLECTIONS = ("list", "set", "zset", "hash", "stream")


def family(key: str) -> str:
    """The family the fixtures' keys have: all-digit segments are ids."""
    return ":".join("{id}" if seg.isdigit() else seg for seg in key.split(":"))


class Side:
    """One snapshot of changes.json: {(db, key): (type, encoding, length, expire_at_ms, digest)}."""

    def __init__(self, manifest: dict):
        self.rows = {
            (int(db), k): tuple(v) for db, keys in manifest.items() for k, v in keys.items()
        }


def truth(scenario: str):
    sc = TRUTH[scenario]
    return Side(sc["old"]["keys"]), Side(sc["new"]["keys"]), sc["changes"]


def invisible(steps) -> set:
    return {k for s in steps if s.get("invisible") for k in s["keys"]}


def expected_changes(old: Side, new: Side, steps) -> dict:
    """(db, key) -> added | removed | changed, from the server's view of each key: a change of
    the value (DUMP digest) or of the expiry, except the scripted same-size rewrite."""
    out = {}
    hidden = invisible(steps)
    for k in new.rows.keys() - old.rows.keys():
        out[k] = "added"
    for k in old.rows.keys() - new.rows.keys():
        out[k] = "removed"
    for k in old.rows.keys() & new.rows.keys():
        o, n = old.rows[k], new.rows[k]
        if (o[4] != n[4] or o[3] != n[3]) and k[1] not in hidden:
            out[k] = "changed"
    return out


def memory_rows(tmp_path_factory, files: list[str]) -> dict:
    """(db, key) -> memory_bytes of the dumps loaded on their own (the figure the diff subtracts)."""
    path = tmp_path_factory.mktemp("mem") / "m.duckdb"
    load([str(FIX / f) for f in files], str(path))
    return key_memory(path)


def key_memory(path) -> dict:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {
            (db, k): m
            for db, k, m in con.execute("SELECT db, key, memory_bytes FROM keys").fetchall()
        }
    finally:
        con.close()


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    res = run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "-f", "json", "-q", "--top", "1000")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def pair_dbs(tmp_path_factory):
    """old.rdb and new.rdb loaded once, each into a database of its own."""
    d = tmp_path_factory.mktemp("dbs")
    load([str(FIX / "old.rdb")], str(d / "old.duckdb"))
    load([str(FIX / "new.rdb")], str(d / "new.duckdb"))
    return d / "old.duckdb", d / "new.duckdb"


@pytest.fixture(scope="module")
def pair_memory(pair_dbs):
    return key_memory(pair_dbs[0]), key_memory(pair_dbs[1])


@pytest.fixture(scope="module")
def pair_changes(tmp_path_factory):
    """Every key's classification, read from the diff's dchanges table."""
    db = tmp_path_factory.mktemp("pair") / "pair.duckdb"
    load([str(FIX / "old.rdb")], str(db))
    load([str(FIX / "new.rdb")], str(db))
    ws = D.Workspace()
    try:
        old, new = D.history_pair(ws, str(db), None, None, None)
        D.build_diff(ws, old, new)
        return {
            (db_, k): c
            for c, db_, k in ws.con.execute("SELECT change, db, key FROM dchanges").fetchall()
        }
    finally:
        ws.close()


def test_every_key_classified_as_scripted(pair_changes):
    old, new, steps = truth("pair")
    want = expected_changes(old, new, steps)
    assert pair_changes == want
    # the script's intent, step by step
    for s in steps:
        db = s.get("db", 0)
        for k in s["keys"]:
            if s.get("invisible"):
                assert (db, k) not in pair_changes
            elif s.get("added"):
                assert pair_changes[(db, k)] == "added"
            elif s.get("removed"):
                assert pair_changes[(db, k)] == "removed"
            else:
                assert pair_changes[(db, k)] == "changed"


@pytest.mark.slow
def test_totals_per_db_and_type(pair, pair_memory):
    old, new, _ = truth("pair")
    mem_old, mem_new = pair_memory
    t = pair["totals"]

    def count(side, pick):
        return sum(1 for k, v in side.rows.items() if pick(k, v))

    a = t["all"]
    assert (a["old_keys"], a["new_keys"]) == (len(old.rows), len(new.rows))
    assert a["delta_keys"] == len(new.rows) - len(old.rows)
    assert a["keys_growth"] == pytest.approx(
        (len(new.rows) - len(old.rows)) / len(old.rows), abs=1e-6
    )
    assert a["old_keys_with_ttl"] == count(old, lambda k, v: v[3] is not None)
    assert a["new_keys_with_ttl"] == count(new, lambda k, v: v[3] is not None)
    assert (a["old_memory_bytes"], a["new_memory_bytes"]) == (
        sum(mem_old.values()),
        sum(mem_new.values()),
    )
    assert a["delta_memory_bytes"] == sum(mem_new.values()) - sum(mem_old.values())
    assert a["memory_growth"] == pytest.approx(
        a["delta_memory_bytes"] / a["old_memory_bytes"], abs=1e-6
    )
    assert a["delta_used_mem"] == pair["new"]["used_mem"] - pair["old"]["used_mem"]
    assert {r["name"]: (r["old_keys"], r["new_keys"]) for r in t["by_db"]} == {
        str(db): (
            count(old, lambda k, v, db=db: k[0] == db),
            count(new, lambda k, v, db=db: k[0] == db),
        )
        for db in (0, 1)
    }
    types = {v[0] for v in old.rows.values()} | {v[0] for v in new.rows.values()}
    assert {
        r["name"]: (r["old_keys"], r["new_keys"], r["old_keys_with_ttl"], r["new_keys_with_ttl"])
        for r in t["by_type"]
    } == {
        ty: (
            count(old, lambda k, v, ty=ty: v[0] == ty),
            count(new, lambda k, v, ty=ty: v[0] == ty),
            count(old, lambda k, v, ty=ty: v[0] == ty and v[3] is not None),
            count(new, lambda k, v, ty=ty: v[0] == ty and v[3] is not None),
        )
        for ty in types
    }
    for r in t["by_db"]:
        db = int(r["name"])
        assert r["delta_memory_bytes"] == sum(m for k, m in mem_new.items() if k[0] == db) - sum(
            m for k, m in mem_old.items() if k[0] == db
        )


def test_families_ranked_with_keys_added_removed_changed(pair, pair_memory):
    old, new, steps = truth("pair")
    mem_old, mem_new = pair_memory
    changes = expected_changes(old, new, steps)
    f = pair["families"]
    fams = {family(k) for _, k in old.rows} | {family(k) for _, k in new.rows}
    assert f["total"] == len(fams)
    items = {r["pattern"]: r for r in f["items"]}
    assert set(items) == fams  # --top 1000: every family
    new_fams = {family(k) for _, k in new.rows} - {family(k) for _, k in old.rows}
    gone_fams = {family(k) for _, k in old.rows} - {family(k) for _, k in new.rows}
    assert (
        {p for p, r in items.items() if r["status"] == "new"}
        == new_fams
        == {"order:{id}", "big:blob:new1", "temp:{id}"}
    )
    assert (
        {p for p, r in items.items() if r["status"] == "vanished"} == gone_fams == {"legacy:{id}"}
    )
    assert (f["new"], f["vanished"]) == (len(new_fams), len(gone_fams))
    days = pair["interval_days"]
    assert days == pytest.approx(
        (pair["new"]["snapshot_ms"] - pair["old"]["snapshot_ms"]) / 86400000, rel=1e-3
    )
    for p, r in items.items():
        assert r["old_keys"] == sum(1 for _, k in old.rows if family(k) == p)
        assert r["new_keys"] == sum(1 for _, k in new.rows if family(k) == p)
        assert r["old_memory_bytes"] == sum(m for (_, k), m in mem_old.items() if family(k) == p)
        assert r["new_memory_bytes"] == sum(m for (_, k), m in mem_new.items() if family(k) == p)
        assert r["delta_memory_bytes"] == r["new_memory_bytes"] - r["old_memory_bytes"]
        for what in ("added", "removed", "changed"):
            assert r[what] == sum(
                1 for (_, k), c in changes.items() if c == what and family(k) == p
            ), (p, what)
        span_days = (pair["new"]["snapshot_ms"] - pair["old"]["snapshot_ms"]) / 86400000
        assert r["memory_per_day"] == pytest.approx(r["delta_memory_bytes"] / span_days, rel=1e-6)
    ranked = [abs(r["delta_memory_bytes"]) for r in f["items"]]
    assert ranked == sorted(ranked, reverse=True)
    assert f["items"][0]["pattern"] == "big:blob:{id}"  # 20,000 -> 1,200,000 bytes


def test_top_cuts_lists_not_counts(pair, pair_dbs):
    f = pair["families"]
    res = run_cli("diff", *pair_dbs, "-f", "json", "--top", "3")
    short = json.loads(res.stdout)
    assert [r["pattern"] for r in short["families"]["items"]] == [
        r["pattern"] for r in f["items"][:3]
    ]
    assert (
        short["families"]["total"] == f["total"] and short["keys"]["added"] == pair["keys"]["added"]
    )


def test_keys_counts_per_family(pair):
    old, new, steps = truth("pair")
    changes = expected_changes(old, new, steps)
    k = pair["keys"]
    counts = collections.Counter(changes.values())
    assert (k["added"], k["removed"], k["changed"]) == (
        counts["added"],
        counts["removed"],
        counts["changed"],
    )
    assert (k["added"], k["removed"], k["changed"]) == (61, 41, 33)
    assert k["unchanged"] == len(new.rows) - counts["added"] - counts["changed"]
    by = {r["pattern"]: (r["added"], r["removed"], r["changed"]) for r in k["by_family"]}
    want = collections.defaultdict(lambda: [0, 0, 0])
    for (_, key), c in changes.items():
        want[family(key)][("added", "removed", "changed").index(c)] += 1
    assert by == {p: tuple(v) for p, v in want.items()}


def test_top_growers(pair, pair_memory):
    mem_old, mem_new = pair_memory
    growth = {k: m - mem_old.get(k, 0) for k, m in mem_new.items() if m > mem_old.get(k, 0)}
    got = [(r["db"], r["key"], r["delta_memory_bytes"]) for r in pair["keys"]["top_growers"]]
    assert {(db, k): d for db, k, d in got} == growth
    assert [d for _, _, d in got] == sorted(growth.values(), reverse=True)
    first = pair["keys"]["top_growers"][0]
    assert (first["key"], first["old_length"], first["new_length"]) == (
        "big:blob:2",
        20000,
        1200000,
    )


def test_big_keys(pair):
    old, new, steps = truth("pair")
    b = pair["keys"]["big_keys"]

    def big(v):
        return v is not None and (
            (v[0] == "string" and v[2] > 10240) or (v[0] in COLLECTIONS and v[2] > 5000)
        )

    def critical(v):
        return v is not None and (
            (v[0] == "string" and v[2] > 1048576) or (v[0] in COLLECTIONS and v[2] > 100000)
        )

    keys = old.rows.keys() | new.rows.keys()
    want = {"new": set(), "past-critical": set(), "gone": set()}
    for k in keys:
        o, n = old.rows.get(k), new.rows.get(k)
        if big(n) and not big(o):
            want["new"].add(k[1])
        elif critical(n) and not critical(o):
            want["past-critical"].add(k[1])
        elif big(o) and not big(n):
            want["gone"].add(k[1])
    got = {kind: {r["key"] for r in b["items"] if r["kind"] == kind} for kind in want}
    assert got == want
    scripted = {
        kind: {k for s in steps if s.get("big") == kind for k in s["keys"]} for kind in want
    }
    assert got == scripted
    assert (b["new"], b["past_critical"], b["gone"]) == (2, 2, 2)
    crit = {
        r["key"]: (r["old_severity"], r["new_severity"])
        for r in b["items"]
        if r["kind"] == "past-critical"
    }
    assert crit == {"big:list:1": ("warning", "critical"), "big:blob:2": ("warning", "critical")}


def test_type_changes(pair):
    old, new, _ = truth("pair")
    want = {
        k[1]: (old.rows[k][0], new.rows[k][0])
        for k in old.rows.keys() & new.rows.keys()
        if old.rows[k][0] != new.rows[k][0]
    }
    t = pair["keys"]["type_changes"]
    assert {r["key"]: (r["old_type"], r["new_type"]) for r in t["items"]} == want
    assert want == {"queue:0": ("list", "string"), "cache:item:0": ("string", "hash")}
    assert t["total"] == 2
    assert sorted((p["old_type"], p["new_type"], p["keys"]) for p in t["pairs"]) == [
        ("list", "string", 1),
        ("string", "hash", 1),
    ]


def test_encoding_conversions_name_the_threshold(pair):
    old, new, steps = truth("pair")
    want = {
        k[1]: (old.rows[k][1], new.rows[k][1])
        for k in old.rows.keys() & new.rows.keys()
        if old.rows[k][0] == new.rows[k][0] != "string" and old.rows[k][1] != new.rows[k][1]
    }
    e = pair["keys"]["encoding_conversions"]
    got = {r["key"]: (r["old_encoding"], r["new_encoding"]) for r in e["items"]}
    assert got == want
    scripted = {k: s["threshold"] for s in steps if "conversion" in s for k in s["keys"]}
    assert {r["key"]: r["threshold"] for r in e["items"]} == scripted
    assert e["total"] == len(want) == 12
    for r in e["items"]:
        if r["threshold"] == "hash-max-listpack-entries":
            assert (r["threshold_value"], r["measured"]) == (512, new.rows[(0, r["key"])][2]) and r[
                "measured"
            ] > 512
        if r["threshold"] == "hash-max-listpack-value":
            assert (r["threshold_value"], r["measured"]) == (64, 100)
        if r["threshold"] == "zset-max-listpack-entries":
            assert (r["threshold_value"], r["measured"]) == (128, 220)
        if r["threshold"] == "set-max-intset-entries":
            assert (r["threshold_value"], r["measured"]) == (512, 610)
    assert e["threshold_sources"]["hash-max-listpack-entries"] == "redis 7.0.15 defaults"


def test_expiry(pair):
    old, new, steps = truth("pair")
    both = old.rows.keys() & new.rows.keys()
    lost = {k[1] for k in both if old.rows[k][3] is not None and new.rows[k][3] is None}
    gained = {k[1] for k in both if old.rows[k][3] is None and new.rows[k][3] is not None}
    assert lost == {k for s in steps if s.get("lost_ttl") for k in s["keys"]}
    assert gained == {k for s in steps if s.get("gained_ttl") for k in s["keys"]}
    t = pair["ttl"]
    assert (t["lost_expiry"], t["gained_expiry"], t["expiry_moved"]) == (len(lost), len(gained), 0)
    assert {r["pattern"]: r["keys"] for r in t["lost_expiry_families"]} == dict(
        collections.Counter(family(k) for k in lost)
    )
    snap_old, snap_new = pair["old"]["snapshot_ms"], pair["new"]["snapshot_ms"]
    assert (
        t["old_expired_at_snapshot"]
        == sum(1 for v in old.rows.values() if v[3] is not None and v[3] <= snap_old)
        == 0
    )
    expired = {k[1] for k, v in new.rows.items() if v[3] is not None and v[3] <= snap_new}
    assert expired == {k for s in steps if s.get("expired_at_snapshot") for k in s["keys"]}
    assert t["new_expired_at_snapshot"] == len(expired) == 5

    def bucket(ttl):
        if ttl is None:
            return "no ttl"
        for limit, name in (
            (0, "expired"),
            (60000, "< 1 min"),
            (3600000, "1 min - 1 h"),
            (86400000, "1 h - 1 d"),
            (604800000, "1 d - 7 d"),
            (2592000000, "7 d - 30 d"),
            (31536000000, "30 d - 1 y"),
        ):
            if ttl <= 0 if limit == 0 else ttl < limit:
                return name
        return ">= 1 y"

    want_old = collections.Counter(
        bucket(None if v[3] is None else v[3] - snap_old) for v in old.rows.values()
    )
    want_new = collections.Counter(
        bucket(None if v[3] is None else v[3] - snap_new) for v in new.rows.values()
    )
    got = {r["bucket"]: (r["old_keys"], r["new_keys"], r["delta_keys"]) for r in t["distribution"]}
    assert got == {
        b: (want_old[b], want_new[b], want_new[b] - want_old[b]) for b in want_old | want_new
    }


def test_family_ttl_changes(pair):
    old, new, _ = truth("pair")
    got = {r["pattern"]: r for r in pair["families"]["ttl_changes"]}

    def coverage(side, p):
        rows = [v for (_, k), v in side.rows.items() if family(k) == p]
        return sum(1 for v in rows if v[3] is not None) / len(rows)

    # session: 5 of 70 lost their TTL; cache:item: 4 of 60; user profiles: 2 of 120 gained one
    assert set(got) == {"session:{id}", "cache:item:{id}", "user:{id}:profile"}
    for p, r in got.items():
        assert r["old_ttl_coverage"] == pytest.approx(coverage(old, p), abs=1e-6)
        assert r["new_ttl_coverage"] == pytest.approx(coverage(new, p), abs=1e-6)
    assert got["user:{id}:profile"]["old_median_ttl_ms"] is None
    assert 7190000 < got["user:{id}:profile"]["new_median_ttl_ms"] <= 7200000


@pytest.mark.slow
def test_fail_on_rules_and_exit_code(pair_dbs):
    args = ["diff", *pair_dbs, "-q", "-f", "json"]
    res = run_cli(*args, "--fail-on", "growth=20%,family-growth=10%,new-big-keys,lost-ttl=0")
    assert res.exit_code == 3
    checks = {c["rule"]: c for c in json.loads(res.stdout)["fail_on"]["checks"]}
    assert all(c["failed"] for c in checks.values())
    assert checks["new-big-keys"]["value"] == 2 and checks["lost-ttl"]["value"] == 9
    assert "exceeds --fail-on" in res.stderr
    # thresholds above what the change measures pass
    d = json.loads(run_cli(*args).stdout)
    growth = d["totals"]["all"]["memory_growth"] * 100
    res = run_cli(*args, "--fail-on", f"growth={growth + 1:.0f}%,new-big-keys=2,lost-ttl=9")
    assert res.exit_code == 0, res.output
    res = run_cli(*args, "--fail-on", f"growth={d['totals']['all']['delta_memory_bytes']}")
    assert res.exit_code == 0
    res = run_cli(*args, "--fail-on", f"growth={d['totals']['all']['delta_memory_bytes'] - 1}")
    assert res.exit_code == 3
    # family-growth in %: families in both snapshots only; in bytes: new ones too
    fams = d["families"]["items"]
    over = [
        f["pattern"]
        for f in fams
        if f["status"] != "new"
        and f["old_memory_bytes"]
        and f["delta_memory_bytes"] > 0.5 * f["old_memory_bytes"]
    ]
    res = run_cli(*args, "--fail-on", "family-growth=50%")
    c = json.loads(res.stdout)["fail_on"]["checks"][0]
    assert c["value"] == len(over) and set(c["families"]) == set(over[:10])
    bigger = [f["pattern"] for f in fams if f["delta_memory_bytes"] > 30000]
    res = run_cli(*args, "--fail-on", "family-growth=30000")
    assert json.loads(res.stdout)["fail_on"]["checks"][0]["value"] == len(bigger) == 6
    assert run_cli(*args, "--fail-on", "nope").exit_code == 2
    assert run_cli(*args, "--fail-on", "lost-ttl=5%").exit_code == 2


@pytest.mark.slow
def test_cluster_as_a_whole(tmp_path_factory):
    """Two shards per snapshot, keys of slots 7000-8191 moved between them: the cluster diff
    is the keyspace diff, and moved keys are unchanged."""
    res = run_cli(
        "diff",
        "--old",
        FIX / "shard*-old.rdb",
        "--new",
        FIX / "shard*-new.rdb",
        "-f",
        "json",
        "-q",
        "--top",
        "1000",
    )
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    old, new, steps = truth("cluster")
    changes = expected_changes(old, new, steps)
    counts = collections.Counter(changes.values())
    assert (d["keys"]["added"], d["keys"]["removed"], d["keys"]["changed"]) == (
        counts["added"],
        counts["removed"],
        counts["changed"],
    )
    touched = {k for s in steps for k in s["keys"]}
    moved = set(TRUTH["cluster"]["moved"]) - touched
    assert moved and not moved & {k for _, k in changes}
    assert d["old"]["dump_ids"] == [1, 2] and d["new"]["dump_ids"] == [3, 4]
    assert d["totals"]["all"]["old_keys"] == len(old.rows) and d["totals"]["all"][
        "new_keys"
    ] == len(new.rows)
    mem_old = memory_rows(tmp_path_factory, TRUTH["cluster"]["old"]["files"])
    mem_new = memory_rows(tmp_path_factory, TRUTH["cluster"]["new"]["files"])
    assert d["totals"]["all"]["delta_memory_bytes"] == sum(mem_new.values()) - sum(mem_old.values())
    assert (
        d["totals"]["all"]["old_used_mem"] == d["old"]["used_mem"]
    )  # both shards' used-mem summed
    # the same scripted changes as the pair's db 0
    pair_old, pair_new, pair_steps = truth("pair")
    pair0 = {k: c for k, c in expected_changes(pair_old, pair_new, pair_steps).items() if k[0] == 0}
    assert changes == pair0
    by = {r["pattern"]: (r["added"], r["removed"], r["changed"]) for r in d["keys"]["by_family"]}
    assert by["user:{id}:profile"] == (20, 0, 10) and by["legacy:{id}"] == (0, 30, 0)
    # unquoted patterns expanded by the shell leave extra arguments: a clear usage error
    res = run_cli(
        "diff",
        "--old",
        FIX / "shard1-old.rdb",
        FIX / "shard2-old.rdb",
        "--new",
        FIX / "shard1-new.rdb",
    )
    assert res.exit_code == 2 and "quote patterns" in res.output


@pytest.mark.slow
def test_databases_as_inputs(tmp_path, pair_dbs):
    old_db, new_db = pair_dbs
    from_dumps = json.loads(
        run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "-f", "json", "-q").stdout
    )
    res = run_cli("diff", old_db, new_db, "-f", "json")
    assert res.exit_code == 0, res.output
    from_dbs = json.loads(res.stdout)
    for part in ("totals", "families", "keys", "ttl"):
        assert from_dbs[part] == from_dumps[part], part
    # DB#N: one dump of a database holding several
    both = tmp_path / "both.duckdb"
    load([str(FIX / "old.rdb")], str(both))
    load([str(FIX / "new.rdb")], str(both))
    res = run_cli("diff", f"{both}#1", f"{both}#2", "-f", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["keys"] == from_dumps["keys"]
    res = run_cli("diff", both, new_db)
    assert res.exit_code == 2 and "holds 2 snapshots" in res.output
    # a dump on one side, a database on the other
    res = run_cli("diff", old_db, FIX / "new.rdb", "-f", "json", "-q")
    assert res.exit_code == 0 and json.loads(res.stdout)["keys"] == from_dumps["keys"]
    assert run_cli("diff", old_db, new_db, "-o", tmp_path / "x.duckdb").exit_code == 2
    before = both.read_bytes()
    res = run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "--database", both, "-q")
    assert (res.exit_code, res.stderr) == (
        7,
        f"rdbscan: error: {both}: exists; give a new file for the database (or compare the "
        f"databases themselves)\n",
    )
    assert both.read_bytes() == before  # never overwritten


def test_output_database_keeps_both_snapshots(tmp_path):
    out = tmp_path / "kept.duckdb"
    # -j 1: the sides loaded one after the other (the other tests load them at once)
    first = run_cli(
        "diff", FIX / "old.rdb", FIX / "new.rdb", "-o", out, "-f", "json", "-q", "-j", "1"
    )
    assert first.exit_code == 0
    again = run_cli("diff", out, "-f", "json")  # its two snapshots: the last two
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["keys"] == json.loads(first.stdout)["keys"]


@pytest.mark.slow
def test_damaged_dump_is_not_compared(tmp_path):
    cut = tmp_path / "cut.rdb"
    data = (FIX / "new.rdb").read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    res = run_cli("diff", FIX / "old.rdb", cut, "-q")
    assert res.exit_code == 4
    assert "not compared" in res.stderr and res.stdout == ""
    res = run_cli("diff", FIX / "old.rdb", tmp_path / "missing.rdb", "-q")
    assert (res.exit_code, res.stderr) == (
        6,
        f"rdbscan: error: {tmp_path / 'missing.rdb'}: no such file\n",
    )


def test_text_and_markdown(pair_dbs):
    res = run_cli("diff", *pair_dbs)
    assert res.exit_code == 0
    out = res.stdout
    for heading in ("Snapshots", "Totals", "Families", "Keys", "Expiry"):
        assert re.search(rf"^{heading} ─", out, re.M), heading
    assert "hash-max-listpack-entries 512" in out and "legacy:{id}" in out
    md = run_cli("diff", *pair_dbs, "-f", "markdown").stdout
    assert md.startswith("# rdbscan diff\n") and "## Totals" in md and "| family |" in md


@pytest.mark.slow
def test_load_instance_records_snapshots(tmp_path):
    db = tmp_path / "h.duckdb"
    res = run_cli(
        "load",
        "-q",
        "--instance",
        "cache-1",
        FIX / "shard1-old.rdb",
        FIX / "shard2-old.rdb",
        "-o",
        db,
    )
    assert res.exit_code == 0, res.output
    # a dump without aux ctime (Redis 2.8): the file's modification time
    legacy = tmp_path / "legacy.rdb"
    shutil.copyfile(next((FIX.parent / "redis-2.8.24").rglob("*.rdb")), legacy)
    import os

    os.utime(legacy, (1700000000, 1700000000))
    assert run_cli("load", "-q", "--instance", "old-box", legacy, "-o", db).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT dump_id, instance, snapshot_id, snapshot_ms, snapshot_source, ctime FROM dumps "
        "ORDER BY dump_id"
    ).fetchall()
    con.close()
    assert [r[:3] for r in rows] == [(1, "cache-1", 1), (2, "cache-1", 1), (3, "old-box", 3)]
    assert rows[0][3] == rows[0][5] * 1000 and rows[0][4] == "ctime"
    assert rows[2][3:5] == (1700000000000, "file-mtime") and rows[2][5] is None


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Four snapshots of instance cache-1 (one `load --instance` each), and the pair as instance other."""
    db = tmp_path_factory.mktemp("history") / "history.duckdb"
    for snap in TRUTH["history"]["snapshots"]:
        assert (
            run_cli("load", "-q", "--instance", "cache-1", FIX / snap["file"], "-o", db).exit_code
            == 0
        )
    for f in ("old.rdb", "new.rdb"):
        assert run_cli("load", "-q", "--instance", "other", FIX / f, "-o", db).exit_code == 0
    return db


def _regression(xs, ys):
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _exact_slope(ms: list[int], ys: list[int]) -> Fraction:
    """The least-squares slope per day of ys over snapshot times in ms, in exact arithmetic."""
    xs = [Fraction(m, 86400000) for m in ms]
    mx = sum(xs) / len(xs)
    return sum((x - mx) * y for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


def _is_exact(got, exact: Fraction) -> bool:
    """A slope as JSON has it (format.plain: a whole number as an integer) against the exact one:
    equal when the exact one is whole, else within a double's rounding."""
    if exact.denominator == 1:
        return isinstance(got, int) and got == exact
    return got == pytest.approx(float(exact), rel=1e-12)


@pytest.mark.slow
def test_trend_follows_families_over_snapshots(history):
    res = run_cli("trend", history, "--instance", "cache-1", "-f", "json", "--top", "0")
    assert res.exit_code == 0, res.output
    t = json.loads(res.stdout)
    assert [i["instance"] for i in t["instances"]] == ["cache-1"]
    inst = t["instances"][0]
    snaps = TRUTH["history"]["snapshots"]
    assert [s["keys"] for s in inst["snapshots"]] == [s["keys"] for s in snaps]
    assert [s["paths"] for s in inst["snapshots"]] == [[str(FIX / s["file"])] for s in snaps]
    days = [
        (s["snapshot_ms"] - inst["snapshots"][0]["snapshot_ms"]) / 86400000
        for s in inst["snapshots"]
    ]
    assert inst["days"] == pytest.approx(days[-1])
    fams = {f["pattern"]: f for f in inst["families"]}
    assert (
        set(fams) == {"events:{id}", "cache:{id}", "old:{id}", "jobs:{id}"}
        and inst["families_total"] == 4
    )
    for pattern, f in fams.items():
        keys = [s["families"][pattern] for s in snaps]
        assert [p["keys"] for p in f["points"]] == keys, pattern
        assert (f["first_keys"], f["last_keys"]) == (keys[0], keys[-1])
        assert f["keys_per_day"] == pytest.approx(_regression(days, keys), rel=1e-6)
        mem = [p["memory_bytes"] for p in f["points"]]
        assert f["memory_per_day"] == pytest.approx(_regression(days, mem), rel=1e-6)
        # and exactly (diff/queries/_tfit.sql: integer sums, one division)
        ms = [s["snapshot_ms"] for s in inst["snapshots"]]
        assert _is_exact(f["memory_per_day"], _exact_slope(ms, mem)), pattern
        assert _is_exact(f["keys_per_day"], _exact_slope(ms, keys)), pattern
        assert (f["first_memory_bytes"], f["last_memory_bytes"]) == (mem[0], mem[-1])
    # every event key has the same size: memory grows in step with the keys
    ev = fams["events:{id}"]["points"]
    assert len({p["memory_bytes"] // p["keys"] for p in ev}) == 1 and ev[0]["memory_bytes"] > 0
    assert fams["old:{id}"]["points"][-1] == {"snapshot_id": 4, "keys": 0, "memory_bytes": 0}
    assert fams["jobs:{id}"]["memory_growth"] is None and fams["cache:{id}"]["memory_growth"] == 0
    # fastest growers first
    assert [f["pattern"] for f in inst["families"]] == [
        "events:{id}",
        "jobs:{id}",
        "cache:{id}",
        "old:{id}",
    ]
    total = [s["memory_bytes"] for s in inst["snapshots"]]
    assert inst["memory_per_day"] == pytest.approx(_regression(days, total), rel=1e-6)
    # every family of every instance, growing or shrinking, has its exact slope (instance
    # `other`'s session:{id} lost 1,040 bytes in 3 s: -29,952,000 a day, which regr_slope gave
    # a few ulps off, -29952000.0 in the JSON)
    every = json.loads(run_cli("trend", history, "-f", "json", "--top", "0").stdout)
    assert [i["instance"] for i in every["instances"]] == ["cache-1", "other"]
    for i in every["instances"]:
        ms = [s["snapshot_ms"] for s in i["snapshots"]]
        for f in i["families"] + i["shrinking"]:
            points = f["points"]
            for field, key in (("memory_per_day", "memory_bytes"), ("keys_per_day", "keys")):
                exact = _exact_slope(ms, [p[key] for p in points])
                assert _is_exact(f[field], exact), (i["instance"], f["pattern"], field)
    other = {f["pattern"]: f for f in every["instances"][1]["shrinking"]}
    assert other["session:{id}"]["memory_per_day"] == -29952000
    # --top, --from/--to, every instance, text
    top1 = json.loads(
        run_cli("trend", history, "--instance", "cache-1", "-f", "json", "--top", "1").stdout
    )
    assert [f["pattern"] for f in top1["instances"][0]["families"]] == ["events:{id}"]
    assert top1["instances"][0]["families_total"] == 4
    window = json.loads(
        run_cli(
            "trend", history, "--instance", "cache-1", "--from", "2", "--to", "3", "-f", "json"
        ).stdout
    )
    assert [s["snapshot_id"] for s in window["instances"][0]["snapshots"]] == [2, 3]
    both = json.loads(run_cli("trend", history, "-f", "json").stdout)
    assert [i["instance"] for i in both["instances"]] == ["cache-1", "other"]
    assert [s["keys"] for s in both["instances"][1]["snapshots"]] == [
        len(Side(TRUTH["pair"][w]["keys"]).rows) for w in ("old", "new")
    ]
    text = run_cli("trend", history).stdout
    assert "Instance cache-1" in text and "events:{id}" in text
    assert run_cli("trend", history, "--instance", "nope").exit_code == 2


@pytest.mark.slow
def test_diff_picks_snapshots_of_a_history(history, pair_dbs):
    def keys_of(*args):
        res = run_cli("diff", history, *args, "-f", "json")
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)

    res = run_cli("diff", history)
    assert res.exit_code == 2 and "several instances" in res.output
    last = keys_of("--instance", "cache-1")
    assert (last["old"]["snapshot_id"], last["new"]["snapshot_id"]) == (3, 4)
    assert (last["keys"]["added"], last["keys"]["removed"]) == (
        110,
        20,
    )  # events +100, jobs +10; old -20
    span = keys_of("--instance", "cache-1", "--from", "1", "--to", "4")
    assert (span["keys"]["added"], span["keys"]["removed"], span["keys"]["changed"]) == (330, 60, 0)
    assert {f["pattern"]: f["status"] for f in span["families"]["items"]} == {
        "events:{id}": "changed",
        "old:{id}": "vanished",
        "jobs:{id}": "new",
        "cache:{id}": "unchanged",
    }
    # by time: the last snapshot taken at or before it
    t2 = span["old"]["snapshot_ms"] + 0  # snapshot 1's time
    import datetime as dt

    when = dt.datetime.fromtimestamp(t2 / 1000, dt.timezone.utc).isoformat()
    by_time = keys_of("--instance", "cache-1", "--from", when)
    assert (by_time["old"]["snapshot_id"], by_time["new"]["snapshot_id"]) == (1, 4)
    other = keys_of("--instance", "other")
    assert other["keys"] == json.loads(run_cli("diff", *pair_dbs, "-f", "json").stdout)["keys"]
    assert run_cli("diff", history, "--instance", "cache-1", "--from", "9").exit_code == 2
    assert (
        run_cli("diff", history, "--instance", "cache-1", "--from", "4", "--to", "4").exit_code == 2
    )
    assert run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "--from", "1").exit_code == 2


def test_same_dump_on_both_sides():
    """A dump given as old and new is loaded once (the loader knows it by its fingerprint) and
    compares equal to itself."""
    res = run_cli("diff", FIX / "old.rdb", FIX / "old.rdb", "-f", "json", "-q")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["old"]["dump_ids"] == d["new"]["dump_ids"] == [1]
    assert (d["keys"]["added"], d["keys"]["removed"], d["keys"]["changed"]) == (0, 0, 0)
    assert (
        d["keys"]["unchanged"]
        == d["totals"]["all"]["new_keys"]
        == len(Side(TRUTH["pair"]["old"]["keys"]).rows)
    )


@pytest.mark.slow
def test_one_dump_a_side_is_loaded_apart_with_the_same_diff():
    """With one dump a side and -j 2 each side is loaded into a database of its own (nothing
    copied, db/parallel.load_each); -j 1 loads both into one.  The diffs are the same."""
    apart = run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "-f", "json", "-q", "-j", "2")
    one = run_cli("diff", FIX / "old.rdb", FIX / "new.rdb", "-f", "json", "-q", "-j", "1")
    assert apart.exit_code == one.exit_code == 0, apart.output + one.output
    a, b = json.loads(apart.stdout), json.loads(one.stdout)
    assert (a["old"]["dump_ids"], a["new"]["dump_ids"]) == ([1], [1])
    assert (b["old"]["dump_ids"], b["new"]["dump_ids"]) == ([1], [2])
    assert [a[s]["snapshot_id"] for s in ("old", "new")] == [1, 1]
    assert [b[s]["snapshot_id"] for s in ("old", "new")] == [1, 2]
    assert a["old"]["database"].endswith("/old.duckdb")
    assert a["new"]["database"].endswith("/new.duckdb")
    for d in (a, b):
        d.pop("generated_at"), d.pop("diff_seconds")
        for side in ("old", "new"):
            for name in ("dump_ids", "snapshot_id", "database"):
                d[side].pop(name)
    assert a == b
    old, new, steps = truth("pair")
    assert a["keys"]["added"] == len(new.rows.keys() - old.rows.keys())
    assert a["keys"]["removed"] == len(old.rows.keys() - new.rows.keys())


def test_snapshots_given_newest_first_are_compared_in_time_order(pair_dbs):
    """`diff NEW OLD` compares in time order and says so: the same totals and a positive interval
    as `diff OLD NEW`, a warning first in the verdict, `reordered` in the JSON."""
    old, new = pair_dbs
    forward = json.loads(run_cli("diff", old, new, "-f", "json").stdout)
    res = run_cli("diff", new, old, "-f", "json")
    assert res.exit_code == 0, res.output
    swapped = json.loads(res.stdout)
    assert (forward["reordered"], swapped["reordered"]) == (False, True)
    assert forward["interval_seconds"] == swapped["interval_seconds"] == 3.0
    assert swapped["totals"] == forward["totals"]
    assert swapped["totals"]["all"]["delta_memory_bytes"] > 0
    assert (swapped["old"]["label"], swapped["new"]["label"]) == (str(old), str(new))
    text = run_cli("diff", new, old, env={"COLUMNS": "400"}).stdout.splitlines()  # (two paths)
    assert text[2].rstrip() == (
        f"WARN OLD ({new}) was taken after NEW ({old}): compared in time order, the earlier "
        "snapshot as old -> see Snapshots"
    )
    assert "Interval  3 s" in [ln.rstrip() for ln in text]
    assert (
        "The snapshots were given newest first: the diff compares them in time order "
        "(old = the earlier snapshot)." in text
    )
    assert not any("newest first" in ln for ln in run_cli("diff", old, new).stdout.splitlines())


@pytest.mark.slow
def test_trend_shows_shrinking_and_vanished_families(tmp_path):
    """With --top 1 the fastest grower is listed, and the family that went from 3,840 B to
    nothing is listed as vanished under the shrinking families (not hidden)."""
    db = tmp_path / "h.duckdb"
    for n in range(1, 5):
        assert (
            run_cli("load", "-q", "--instance", "c", FIX / f"history-{n}.rdb", "-o", db).exit_code
            == 0
        )
    t = json.loads(run_cli("trend", db, "--top", "1", "-f", "json").stdout)
    inst = t["instances"][0]
    assert [f["pattern"] for f in inst["families"]] == ["events:{id}"]
    assert inst["families"][0]["vanished"] is False
    [gone] = inst["shrinking"]
    assert gone["pattern"] == "old:{id}" and gone["vanished"] is True
    assert [p["memory_bytes"] for p in gone["points"]] == [3840, 2560, 1280, 0]
    assert [p["keys"] for p in gone["points"]] == [60, 40, 20, 0]
    assert (gone["first_memory_bytes"], gone["last_memory_bytes"], gone["memory_growth"]) == (
        3840,
        0,
        -1,
    )
    assert gone["memory_per_day"] < 0
    text = run_cli("trend", db, "--top", "1", env={"COLUMNS": "120"}).stdout.splitlines()
    rows = [ln.split() for ln in text if ln.startswith("old:{id} ")]
    per_day = fmt_per_day_bytes(gone["memory_per_day"])
    assert rows == [
        ["old:{id}", "3.8", "KiB", "2.5", "KiB", "1.2", "KiB", "0", "B", "vanished"]
        + per_day.split()
        + ["-100.0%"]
    ]
    assert any(
        ln.startswith(f"info c: old:{{id}} vanished {per_day} (3.8 KiB -> 0 B)") for ln in text
    )


def test_a_database_of_the_older_family_rule_diffs_like_with_like(tmp_path):
    """A database whose families an older rdbscan stored (`ratelimit:10.0.0.1` a family of its
    own, no `family_rule` in rdbscan_meta), diffed read-only against a dump loaded now: its keys
    get their family again in the diff (Workspace.family_sql), so `ratelimit:{ip}` is one family
    on both sides, not two vanished and one new."""

    def dump(name: str, keys: list[bytes]) -> Path:
        path = tmp_path / name
        path.write_bytes(W.rdb(b"\xfe\x00" + b"".join(W.key(0, k, W.string(b"1")) for k in keys)))
        return path

    old = dump("old.rdb", [b"ratelimit:10.0.0.1", b"ratelimit:10.0.0.2", b"user:1"])
    new = dump("new.rdb", [b"ratelimit:10.0.0.3", b"ratelimit:10.0.0.2", b"user:1", b"user:2"])
    db = tmp_path / "old.duckdb"
    assert all(r.complete for r in load([str(old)], str(db)))
    with duckdb.connect(str(db)) as c:  # what the older rule stored
        c.execute("UPDATE key_rows SET family = key WHERE key LIKE 'ratelimit:%'")
        c.execute("DELETE FROM rdbscan_meta WHERE name = 'family_rule'")
    res = run_cli("diff", db, new, "-f", "json")
    assert res.exit_code == 0, res.output
    fams = json.loads(res.stdout)["families"]
    assert (fams["total"], fams["new"], fams["vanished"]) == (2, 0, 0)
    got = {
        f["pattern"]: (f["old_keys"], f["new_keys"], f["added"], f["removed"])
        for f in fams["items"]
    }
    assert got == {"ratelimit:{ip}": (2, 2, 1, 1), "user:{id}": (1, 2, 1, 0)}
    with duckdb.connect(str(db), read_only=True) as c:  # a diff reads, never writes
        assert c.execute(
            "SELECT count(*) FROM keys WHERE family = 'ratelimit:{ip}'"
        ).fetchone() == (0,)
