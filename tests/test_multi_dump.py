"""A report over several dumps says, for each dump, what its report alone says (docs/report.md,
"Several dumps"): the fixture dumps of Redis 7.0.15, Redis 7.4.1 (cluster), Redis 8.6.3 and
Valkey 9.1.2 loaded into one database and into one Parquet dataset; and no rule or advice is
applied to a server that does not have it (one test per server family)."""

from __future__ import annotations

import json

import pytest
import rdbwriter as W
from common import FIXTURE_DUMPS, FIXTURES, ROOT

from rdbscan.db.load import load
from rdbscan.fleet.load import load_dataset
from rdbscan.reports.engine import querylib
from rdbscan.reports.engine.database import open_database
from rdbscan.reports.engine.relations import Runner
from rdbscan.reports.engine.thresholds import dump_thresholds, hash_field_ttl_encoding
from rdbscan.reports.report import findings as F
from rdbscan.reports.report.build import ReportOptions, build_report, query_values
from rdbscan.reports.report.run import run_report
from rdbscan.reports.report.sections.ttl.findings import chance_words, expected_words

FOUR = (
    "redis-7.0.15/small",
    "redis-7.4.1/variants/cluster",
    "redis-8.6.3/small",
    "valkey-9.1.2/small",
)
SERVERS = ["redis 7.0.15", "redis 7.4.1", "redis 8.6.3", "valkey 9.1.2"]


def _report(path: str, **options) -> dict:
    run = run_report([path], ReportOptions(**options), quiet=True)
    assert run.report is not None
    return run.report


def _files() -> list[str]:
    return [str(FIXTURES / rel / "dump.rdb") for rel in FOUR]


@pytest.fixture(scope="module")
def four_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("four") / "four.duckdb")
    assert all(r.complete for r in load(_files(), db))
    return db


@pytest.fixture(scope="module")
def four_dataset(tmp_path_factory) -> str:
    root = str(tmp_path_factory.mktemp("four") / "ds")
    assert all(r.complete for r in load_dataset(_files(), root))
    return root


@pytest.fixture(scope="module")
def alone(loaded) -> list[dict]:
    """Each dump's report alone, in the order of FOUR (its dump id in the four: 1..4)."""
    return [_report(loaded(rel)) for rel in FOUR]


@pytest.fixture(scope="module")
def together(four_db) -> dict:
    return _report(four_db)


def _finding(report: dict, fid: str) -> dict | None:
    return next((f for f in report["findings"] if f["id"] == fid), None)


# --- one database, one dataset: the sums of the dumps alone -------------------------------------


def _sums_hold(rep: dict, alone: list[dict]) -> None:
    o = rep["overview"]
    assert o["keys"] == sum(a["overview"]["keys"] for a in alone) == 2452
    # slot announcements, each dump against its own keys: the cluster dump alone has 527, 0 off
    assert [a["slots"]["announced_slots"] for a in alone] == [0, 527, 0, 0]
    assert [a["slots"]["announced_mismatches"] for a in alone] == [0, 0, 0, 0]
    assert rep["slots"]["announced_slots"] == 527 and rep["slots"]["announced_mismatches"] == 0
    assert rep["slots"]["mismatch_dumps"] is None
    assert _finding(rep, "slot-count-mismatch") is None
    # non-compact candidates by each dump's own thresholds: only Valkey's hfe:persisted
    cand = rep["encodings"]["candidates_total"]
    assert [a["encodings"]["candidates_total"]["keys"] for a in alone] == [0, 0, 0, 1]
    assert cand == {
        "keys": 1,
        "savings_bytes": alone[3]["encodings"]["candidates_total"]["savings_bytes"],
    }
    assert [
        (c["dump_id"], c["key"], c["target_encoding"]) for c in rep["encodings"]["candidates"]
    ] == [(4, "hfe:persisted", "listpack")]
    servers = rep["encodings"]["servers"]
    assert [
        (s["dump_id"], s["set_max_listpack_entries"], s["hash_field_ttl_encoding"]) for s in servers
    ] == [
        (1, 0, None),
        (2, 128, "listpackex"),
        (3, 128, "listpackex"),
        (4, 128, None),
    ]
    # big keys: 2 per dump (list:large, bitmap:sparse; hll:dense is none)
    assert [a["big_keys"]["keys"] for a in alone] == [2, 2, 2, 2]
    assert rep["big_keys"]["keys"] == 8 and rep["big_keys"]["string_keys"] == 4
    # each finding: the dumps whose report alone has it; counts that add up are the sums
    for f in rep["findings"]:
        mine = [i + 1 for i, a in enumerate(alone) if _finding_all(a, f["id"])]
        assert f["dumps"] == mine, f["id"]
        if f["id"] in ("big-keys", "encodings", "no-ttl-share", "naming", "big-elements"):
            assert f["keys"] == sum(_finding_all(alone[d - 1], f["id"])["keys"] for d in mine), f[
                "id"
            ]
    assert _finding(rep, "encodings")["dumps"] == [4]
    # what a dump alone says is there: the cluster dump's hot slot (9 % of its keys, 3 % of all)
    assert {f["id"] for a in alone for f in a["findings"]} == {f["id"] for f in rep["findings"]}
    assert (_finding(rep, "hot-slot")["keys"], _finding(rep, "hot-slot")["dumps"]) == (68, [2])
    # expiry herds per dump: two dumps' keys expiring in the same minute are no herd of 20
    assert (_finding(rep, "ttl-herd")["keys"], _finding(rep, "ttl-herd")["dumps"]) == (
        10,
        [1, 3, 4],
    )
    assert _finding(rep, "big-keys")["dumps"] == [1, 2, 3, 4]
    # one line per dump: its server, keys, memory and worst finding, as its report alone says
    assert [f"{d['server']} {d['server_version']}" for d in rep["dumps"]] == SERVERS
    assert [d["keys"] for d in rep["dumps"]] == [562, 722, 584, 584]
    assert [d["keys"] for d in rep["dumps"]] == [a["overview"]["keys"] for a in alone]
    assert [d["memory_bytes"] for d in rep["dumps"]] == [
        a["overview"]["memory_bytes"] for a in alone
    ]
    assert [d["worst"]["id"] for d in rep["dumps"]] == [a["findings"][0]["id"] for a in alone]
    assert all(d["complete"] is True for d in rep["dumps"])


def _finding_all(report: dict, fid: str) -> dict | None:
    """A finding of a report, also one past the ten the verdict lists."""
    return next((f for f in F.build(report, limit=None) if f["id"] == fid), None)


@pytest.mark.slow
def test_four_servers_in_one_database_add_up(together, alone):
    _sums_hold(together, alone)


@pytest.mark.slow
def test_four_servers_in_one_dataset_add_up(four_dataset, together, alone):
    rep = _report(four_dataset)
    _sums_hold(rep, alone)
    assert [(f["id"], f["keys"], f["dumps"]) for f in rep["findings"]] == [
        (f["id"], f["keys"], f["dumps"]) for f in together["findings"]
    ]


@pytest.mark.slow
def test_the_text_report_opens_with_a_line_per_dump(cli, four_db):
    r = cli("report", four_db, "--section", "big_keys", env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[1].startswith("Findings: 4 dumps, 2,452 keys, ")
    assert lines[2].startswith("Memory in ") is False  # --section leaves the families out
    per = [x for x in lines[2:6]]
    assert [x.split("  ")[0] for x in per] == [
        "#1 redis 7.0.15",
        "#2 redis 7.4.1",
        "#3 redis 8.6.3",
        "#4 valkey 9.1.2",
    ]
    assert "cluster/dump.rdb: 722 keys, " in per[1] and ", complete; WARN 2 big keys" in per[1]
    big = next(x for x in lines if x.startswith("WARN 8 big keys"))
    assert "[all 4 dumps]" in big


# --- one rule per server family ------------------------------------------------------------------


def test_field_ttl_encoding_per_server():
    assert hash_field_ttl_encoding("redis", "7.4.1", 12) == "listpackex"
    assert hash_field_ttl_encoding("redis", "8.6.3", 13) == "listpackex"
    assert hash_field_ttl_encoding("redis", "7.2.6", 11) is None
    assert hash_field_ttl_encoding("valkey", "9.1.2", 80) is None
    # what --set fixes holds for every dump, over its server's own defaults
    t70 = dump_thresholds("redis", "7.0.15", 10, {"hash_max_listpack_value": 128})
    t91 = dump_thresholds("valkey", "9.1.2", 80, {"hash_max_listpack_value": 128})
    assert (t70["set_max_listpack_entries"], t70["hash_max_listpack_value"]) == (0, 128)
    assert (t91["set_max_listpack_entries"], t91["hash_max_listpack_value"]) == (128, 128)


def _candidates(rep: dict) -> list[tuple]:
    return sorted(
        (c["dump_id"], c["key"], c["encoding"], c["target_encoding"])
        for c in rep["encodings"]["candidates"]
    )


def test_valkey_gets_no_listpackex(loaded):
    """Valkey 9.1 keeps a hash with field TTLs a hashtable (src/t_hash.c, hashTypeSetExpire):
    no rewrite would compact it; a hash whose field TTLs are gone (hfe:persisted) would."""
    rep = _report(loaded("valkey-9.1.2/small"), sections=("encodings",), top=0)
    assert _candidates(rep) == [(1, "hfe:persisted", "hashtable", "listpack")]
    # with a limit that hfe:biglong's 100-byte value fits: still none with field TTLs
    rep = _report(
        loaded("valkey-9.1.2/small"),
        sections=("encodings",),
        top=200,
        settings={"hash-max-listpack-value": "128"},
    )
    assert [c[1] for c in _candidates(rep) if c[1].startswith("hfe:")] == ["hfe:persisted"]
    assert all(c["target_encoding"] != "listpackex" for c in rep["encodings"]["candidates"])


def test_redis_7_4_gets_listpackex(loaded):
    """Redis 7.4+ has listpackex: the same hash fits it once the value limit allows."""
    rep = _report(loaded("redis-7.4.1/variants/cluster"), sections=("encodings",), top=0)
    assert _candidates(rep) == []
    rep = _report(
        loaded("redis-7.4.1/variants/cluster"),
        sections=("encodings",),
        top=200,
        settings={"hash-max-listpack-value": "128"},
    )
    assert [c for c in _candidates(rep) if c[1] == "hfe:biglong"] == [
        (1, "hfe:biglong", "hashtable", "listpackex")
    ]


def test_redis_7_0_has_no_listpack_sets(loaded):
    """Redis 7.0 has no listpack sets: its 128 strings in a hashtable set are no candidate,
    while the same set in a Redis 7.2+ dump that was not converted would be."""
    rep = _report(loaded("redis-7.0.15/small"), sections=("encodings",), top=0)
    assert rep["encodings"]["thresholds"]["set-max-listpack-entries"] == 0
    assert _candidates(rep) == []


def test_redis_6_2_is_advised_ziplist_not_listpack(loaded):
    """Redis before 7.0 names its compact encoding ziplist and has no listpack sets: nothing
    near a threshold is proposed a listpack."""
    rep = _report(
        loaded(ROOT / "sample_dumps" / "redis-6.2.16.rdb"), sections=("encodings",), top=0
    )
    e = rep["encodings"]
    assert (e["compact_encoding"], e["list_compact_encoding"]) == ("ziplist", "none")
    assert e["thresholds"]["set-max-listpack-entries"] == 0 and _candidates(rep) == []
    near = {(n["key"], n["target_encoding"]) for n in e["near_threshold"]}
    assert ("hash:n513", "ziplist") in near and ("zset:n129", "ziplist") in near
    assert {t for _, t in near} == {"ziplist"}


@pytest.mark.slow
def test_each_dump_by_its_own_server_in_one_database(four_db):
    """The same --set over the four: Redis 7.4.1 and 8.6.3 get listpackex for hfe:biglong,
    Valkey does not, Redis 7.0.15 has no such hash and no listpack sets."""
    rep = _report(
        four_db, sections=("encodings",), top=0, settings={"hash-max-listpack-value": "128"}
    )
    hfe = [c for c in _candidates(rep) if c[1].startswith("hfe:")]
    assert hfe == [
        (2, "hfe:biglong", "hashtable", "listpackex"),
        (3, "hfe:biglong", "hashtable", "listpackex"),
        (4, "hfe:persisted", "hashtable", "listpack"),
    ]
    assert not [
        c for c in _candidates(rep) if c[0] == 1 and c[2] == "hashtable" and c[1].startswith("set:")
    ]


def test_a_dense_hyperloglog_is_no_big_key_and_a_bitmap_is_not_compressed(loaded):
    rep = _report(loaded("redis-8.6.3/small"), sections=("big_keys", "values"))
    assert [i["key"] for i in rep["big_keys"]["items"]] == ["list:large", "bitmap:sparse"]
    assert rep["big_keys"]["string_keys"] == 1
    big = _finding(rep, "big-keys")
    assert big["advice"] == (
        "split collections into buckets and strings into chunks; delete with UNLINK; see Big keys"
    )
    families = [f["pattern"] for f in rep["values"]["compressible"]["families"]]
    assert "bitmap:sparse" not in families and "hll:dense" not in families
    assert families[0] == "cache:page:{id}"


# --- words ----------------------------------------------------------------------------------------


def test_plain_words_for_expiry_herds():
    assert expected_words(7.7e-07) == "where evenly spread TTLs would put almost none"
    assert expected_words(0.4) == "where evenly spread TTLs would put less than one"
    assert expected_words(12.4) == "where evenly spread TTLs would put about 12"
    assert chance_words({"log10_p_value": -67.7}) == "practically none"
    assert chance_words({"log10_p_value": -3.0}) == "1 in 1,000"


def test_which_dumps_a_finding_concerns():
    dumps = [{"dump_id": i, "server": "redis", "server_version": f"7.{i}"} for i in (1, 2, 3, 4, 5)]
    assert F._which_dumps({"dumps": [1, 2, 3, 4, 5]}, dumps) == " [all 5 dumps]"
    assert F._which_dumps({"dumps": [2, 5]}, dumps) == " [#2 redis 7.2, #5 redis 7.5]"
    assert F._which_dumps({"dumps": [1, 2, 3, 4]}, dumps) == " [4 of 5 dumps]"
    assert F._which_dumps({"dumps": [1]}, dumps[:1]) == ""


def test_the_verdict_opens_with_where_the_memory_goes(loaded):
    rep = _report(loaded("redis-7.0.15/small"), sections=("patterns",))
    assert F._where_memory_goes(rep) == [
        ("Memory in", "list:large 24.7%, hash:large 16.0%, bitmap:sparse 10.4%"),
        ("Largest key", "list:large: 302.6 KiB (24.7%)"),
    ]
    assert "dumps" not in rep  # one dump: no line per dump


def test_ties_name_the_first_key_in_byte_order(tmp_path):
    """Keys of one family with the same memory: the family's and the slot's largest key is the
    first in byte order, whatever order the dump holds them in (two runs agree)."""
    names = [f"tie:{i}" for i in (7, 3, 9, 1, 5, 8, 2, 6, 4)]
    body = b"\xfe\x00" + b"".join(W.key(0, n, W.string("x" * 100)) for n in names)
    rdb = tmp_path / "ties.rdb"
    rdb.write_bytes(W.rdb(body, version=11, aux={"redis-ver": "7.2.6"}))
    db = str(tmp_path / "ties.duckdb")
    assert all(r.complete for r in load([str(rdb)], db))
    rep = _report(db, sections=("patterns",))
    [fam] = [i for i in rep["patterns"]["items"] if i["pattern"] == "tie:{id}"]
    assert (fam["keys"], fam["largest_key"]) == (9, "tie:1")


@pytest.mark.slow
def test_a_damaged_dump_among_others_is_named_in_its_own_words(cli):
    """A truncated dump beside a sound one: its line says it was not read to the end, and the
    finding about it gives its own 389 keys, not the 951 of both."""
    f = FIXTURES / "redis-7.0.15"
    r = cli(
        "report", str(f / "variants/truncated/dump.rdb"), str(f / "small/dump.rdb"), "-f", "json"
    )
    assert r.exit_code == 4, r.output  # docs/exit-codes.md: a dump is damaged
    rep = json.loads(r.stdout)
    assert [(d["keys"], d["complete"], d["worst"]["id"]) for d in rep["dumps"]] == [
        (389, False, "dump-incomplete"),
        (562, True, "big-keys"),
    ]
    first = rep["findings"][0]
    assert (first["id"], first["keys"], first["dumps"]) == ("dump-incomplete", 389, [1])
    assert first["message"] == (
        "The dump could not be read to the end: the figures cover the 389 keys read before the damage."
    )


# the queries written once with a NAME_by_dump form (querylib: `-- by dump:`, /*by dump: ...*/)
BY_DUMP = (
    "big_elements",
    "big_keys",
    "cold_summary",
    "compressible",
    "split_keys",
    "strings_to_hashes",
)
# their single forms list keys with the dump of each (as every key row does)
KEY_ROWS = ("big_elements", "big_keys")


def test_each_query_per_dump_is_its_single_form_grouped_by_dump(tmp_path):
    """A query grouped by dump is written once: NAME_by_dump is NAME's file with the text of its
    /*by dump: ...*/ comments (querylib), and no file of its own."""
    queries = querylib.bundled_queries()
    assert sorted(n for n, q in queries.items() if q.by_dump) == list(BY_DUMP)
    for name in BY_DUMP:
        alone, per = queries[name], queries[name + "_by_dump"]
        assert (per.path, per.params, per.answers) == (alone.path, alone.params, alone.by_dump)
        assert "/*by dump" not in per.sql and "dump_id" in per.sql
    # the per-dump queries of their own: another shape than any single query (a count and the
    # keys listed; a family table per dump; the mixed delimiters worked out again per dump)
    assert [p.stem for p in querylib.query_files() if p.stem.endswith("_by_dump")] == [
        "_rfamilies_by_dump",
        "encoding_candidates_by_dump",
        "naming_by_dump",
        "patterns_by_dump",
        "slots_by_dump",
        "streams_by_dump",
        "ttl_families_by_dump",
    ]
    sql = tmp_path / "fam.sql"
    sql.write_text(
        "-- name: fam\n-- answers: Families.\n-- by dump: Families per dump,\n--          each.\n"
        "SELECT /*by dump: dump_id,*/ pattern, count(*) AS keys FROM rkeys\n"
        "GROUP BY /*by dump: dump_id,*/ pattern\n"
    )
    q = querylib.parse_query(sql)
    assert (q.answers, q.by_dump) == ("Families.", "Families per dump, each.")
    assert querylib.by_dump(q).name == "fam_by_dump"
    assert querylib.by_dump(q).sql.splitlines()[-2:] == [
        "SELECT dump_id, pattern, count(*) AS keys FROM rkeys",
        "GROUP BY dump_id, pattern",
    ]


def test_each_query_per_dump_has_the_rows_of_each_dump_alone(four_db):
    """NAME_by_dump over the four dumps gives, for each dump, the rows NAME gives over that dump
    alone (--dump-id N): the same figures, examples and order."""
    con = open_database(four_db, read_only=True)
    try:
        per: dict[str, dict[int, list]] = {}
        run = Runner(con, query_values(con, ReportOptions())[0])
        for name in BY_DUMP:
            rows = run.rows(name + "_by_dump")
            per[name] = {
                d: [
                    {k: v for k, v in r.items() if k != "dump_id" or name in KEY_ROWS}
                    for r in rows
                    if r["dump_id"] == d
                ]
                for d in (1, 2, 3, 4)
            }
        for d in (1, 2, 3, 4):
            alone = Runner(con, query_values(con, ReportOptions(dump_id=d))[0])
            for name in BY_DUMP:
                assert alone.rows(name) == per[name][d], (name, d)
    finally:
        con.close()
    # the dumps hold what each query counts (cold keys: none of the four has LRU or LFU data)
    assert [len(per["big_keys"][d]) for d in (1, 2, 3, 4)] == [2, 2, 2, 2]
    assert [len(per["big_elements"][d]) for d in (1, 2, 3, 4)] == [1, 1, 1, 1]
    assert [per["cold_summary"][d][0]["keys_with_idle"] for d in (1, 2, 3, 4)] == [0, 0, 0, 0]
    assert [bool(per["strings_to_hashes"][d]) for d in (1, 2, 3, 4)] == [True] * 4


# --- a fleet: more than MAX_DUMPS_ALONE dumps ---------------------------------------------------

FLEET = 36  # > F.MAX_DUMPS_ALONE: no dump's report is built alone


def _fleet_dump(i: int) -> bytes:
    """Dump i of the fleet (1..FLEET): i keys of 100 bytes (with a TTL in 2100 in the last dump,
    without elsewhere); every 5th dump also one big string (20,000 bytes), dump 7 one critical
    big string (1.1 MB), dump 3 one key expired in 1970; dump 2 is cut short (its second key,
    and the end of the file, are missing)."""
    ttl = b"\xfc" + (4102444800000).to_bytes(8, "little") if i == FLEET else b""
    keys = [ttl + W.key(0, f"k:{i}:{n}", W.string("x" * 100)) for n in range(i)]
    if i == 3:
        keys.append(b"\xfc" + (1000).to_bytes(8, "little") + W.key(0, "gone:3", W.string("g")))
    if i % 5 == 0:
        keys.append(W.key(0, f"big:{i}", W.string("b" * 20_000)))
    if i == 7:
        keys.append(W.key(0, "huge:7", W.string("h" * 1_100_000)))
    data = W.rdb(b"\xfe\x00" + b"".join(keys), version=11, aux={"redis-ver": "7.2.6"})
    return data[:-60] if i == 2 else data


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> tuple[str, dict]:
    tmp = tmp_path_factory.mktemp("fleet")
    files = []
    for i in range(1, FLEET + 1):
        (tmp / f"node{i:02}.rdb").write_bytes(_fleet_dump(i))
        files.append(str(tmp / f"node{i:02}.rdb"))
    db = str(tmp / "fleet.duckdb")
    assert [r.complete for r in load(files, db)] == [i != 2 for i in range(1, FLEET + 1)]
    return db, _report(db)


def test_a_fleet_has_a_line_per_dump_from_one_grouped_pass(fleet):
    _, rep = fleet
    assert FLEET > F.MAX_DUMPS_ALONE
    lines = rep["dumps"]
    assert [d["dump_id"] for d in lines] == list(range(1, FLEET + 1))
    # keys per dump: i small keys, plus the big ones
    assert [d["keys"] for d in lines] == [
        i + (i % 5 == 0) + (i == 7) + (i == 3) - (i == 2) for i in range(1, FLEET + 1)
    ]
    assert sum(d["keys"] for d in lines) == rep["overview"]["keys"] == 666 + 7 + 1 + 1 - 1
    assert sum(d["memory_bytes"] for d in lines) == rep["overview"]["memory_bytes"]
    assert [d["complete"] for d in lines] == [d["dump_id"] != 2 for d in lines]
    assert all(d["worst_of"] == F.GROUPED_CHECKS for d in lines)
    assert {(d["server"], d["server_version"]) for d in lines} == {("redis", "7.2.6")}
    assert lines[0]["path"].endswith("node01.rdb")
    worst = {d["dump_id"]: d["worst"] for d in lines if d["worst"]}
    assert sorted(worst) == list(range(1, FLEET + 1))
    assert {d: w["id"] for d, w in worst.items() if w["id"] != "no-ttl-share"} == {
        **{d: "big-keys" for d in (5, 10, 15, 20, 25, 30, 35)},
        7: "big-keys-critical",
        2: "dump-incomplete",
        36: "dominant-family",  # every key has a TTL: its one family is what it says
    }
    assert worst[36]["message"] == (
        "One family, k:{id}:{id}, holds 100% of the memory (5.8 KiB, 36 keys)"
    )
    assert worst[1]["message"] == "100% of the memory (160 B) is in keys without TTL (1 key)"
    assert worst[7] == {
        "id": "big-keys-critical",
        "severity": "critical",
        "message": "1 critical big key hold 1.3 MiB (100%): huge:7 ...",
    }
    assert (worst[5]["id"], worst[5]["message"]) == (
        "big-keys",
        "1 big key (over 10.0 KiB or 5,000 elements) hold 20.0 KiB (96%): big:5 ...",
    )
    # dump 3: its keys without TTL, and the key expired at snapshot time
    assert worst[2]["message"] == (
        "The dump could not be read to the end: the figures cover the 1 key read before the damage."
    )
    # and each its dominant family (dump 1: its one key; a tie goes to the TTL check)
    assert [d["findings"] for d in lines if d["dump_id"] in (1, 2, 3, 5, 7, 36)] == [
        2,
        3,
        3,
        3,
        3,
        1,
    ]


def test_a_fleets_findings_say_which_dumps_they_concern(fleet):
    _, rep = fleet
    by_id = {f["id"]: f for f in rep["findings"]}
    # the per-dump truth: the dumps holding such keys
    # one dump's finding in its own words: the 1 key read before the damage, not all dumps' keys
    assert (by_id["dump-incomplete"]["keys"], by_id["dump-incomplete"]["dumps"]) == (1, [2])
    assert by_id["dump-incomplete"]["message"] == (
        "The dump could not be read to the end: the figures cover the 1 key read before the damage."
    )
    assert by_id["big-keys-critical"]["dumps"] == [7]
    assert by_id["big-keys-critical"]["keys"] == 1
    assert by_id["big-keys"]["dumps"] == [5, 10, 15, 20, 25, 30, 35]
    assert by_id["big-keys"]["keys"] == 7
    assert (by_id["expired-at-snapshot"]["keys"], by_id["expired-at-snapshot"]["dumps"]) == (1, [3])
    assert by_id["no-ttl-share"]["dumps"] == list(range(1, FLEET))
    # a check that does not group by dump: over all dumps together, no `dumps`
    assert all("dumps" not in f for f in rep["findings"] if f["id"] not in F.GROUPED_FINDINGS)


def test_a_fleets_text_shows_the_worst_dumps_then_how_many_more(fleet):
    _, rep = fleet
    text = "\n".join(str(b.items or b.text) for b in F.layout(rep))
    shown = [d for d in rep["dumps"] if f"'#{d['dump_id']} redis 7.2.6'" in text]
    # the 2 critical dumps (cut short, a critical big key), the 7 with big keys, then the 11
    # info ones holding the most memory, in dump order: the smallest are left out
    shown_ids = [d["dump_id"] for d in shown]
    assert shown_ids == [2, 5, 7, 10, 15, 20] + list(range(23, 37))
    assert "('...', '16 more dumps (all in the JSON: dumps[])')" in text
    assert f"that of the checks that group by dump ({F.GROUPED_CHECKS})" in text
    # every check groups by dump: none is judged over all dumps together
    assert "judged over all dumps together" not in text
    line7 = (
        "fleet0/node07.rdb: 8 keys, 1.3 MiB, complete; CRIT 1 critical big key hold 1.3 MiB "
        "(100%): huge:7 ..."
    )
    assert f"'#7 redis 7.2.6', '{line7}'" in text
    assert "#22 redis" not in text


@pytest.mark.slow
def test_a_fleets_lines_are_what_each_dump_alone_says(fleet):
    """For the checks that group by dump, each line's findings are those of the dump's report
    alone (--dump-id N), in the same order and words (the big keys with their examples)."""
    db, rep = fleet
    by_id = {d["dump_id"]: d for d in rep["dumps"]}
    for d in (1, 2, 3, 5, 7, FLEET):
        alone = [f for f in _report(db, dump_id=d)["findings"] if f["id"] in F.GROUPED_FINDINGS]
        assert by_id[d]["findings"] == len(alone)
        worst = by_id[d]["worst"]
        if not alone:
            assert worst is None
            continue
        assert (worst["id"], worst["severity"]) == (alone[0]["id"], alone[0]["severity"])
        assert alone[0]["message"] == worst["message"]


def test_a_dump_with_nothing_to_report_says_which_checks_ran():
    """Every check grouped by dump: `nothing to report`; --section: in which checks."""
    line = {"dump_id": 3, "server": "redis", "server_version": "7.2.6", "path": "a/b/c.rdb"}
    line |= {"keys": 4, "memory_bytes": 400, "complete": True, "worst": None}
    assert F._dump_line({**line, "worst_of": F.GROUPED_CHECKS}) == (
        "#3 redis 7.2.6",
        "b/c.rdb: 4 keys, 400 B, complete; nothing to report",
    )
    assert F._dump_line({**line, "worst_of": "the dump itself, big keys"})[1].endswith(
        "; nothing to report in the dump itself, big keys"
    )


def test_a_fleets_lines_cover_the_sections_computed(fleet):
    """--section big_keys: the lines' worst findings are big keys or the dump itself, and say so."""
    db, _ = fleet
    rep = _report(db, sections=("big_keys",))
    lines = rep["dumps"]
    assert len(lines) == FLEET
    assert {d["worst_of"] for d in lines} == {"the dump itself, big keys"}
    assert {d["dump_id"]: d["worst"]["id"] for d in lines if d["worst"]} == {
        2: "dump-incomplete",
        7: "big-keys-critical",
        **{d: "big-keys" for d in (5, 10, 15, 20, 25, 30, 35)},
    }


# Over MAX_DUMPS_ALONE fixture dumps: the first 36 in FIXTURE_DUMPS order (the diff snapshots
# with big keys and expiry herds, two cluster dumps that announce their slots, streams), and a
# dump newer than rdbscan, a damaged one and two whose checksum does not match; then a cluster
# dump with a hot slot, the value-design dump (keys split into shards), and three dumps written
# under an LRU or LFU policy (cold keys).  (A second load of the same file is refused,
# docs/loading.md: every dump here is a different file.)
MANY = [d for d in FIXTURE_DUMPS[:36]] + [
    str(FIXTURES / p)
    for p in (
        "public/librdb/test/dumps/future_v19.rdb",
        "public/redis-replicator/src/test/resources/module.rdb",
        "public/redis-tests-assets/tests/assets/corrupt_ziplist.rdb",
        "redis-7.0.15/variants/corrupt-value/dump.rdb",
        "redis-7.4.1/variants/cluster/dump.rdb",
        "values/dump.rdb",
        "redis-7.0.15/variants/lru/dump.rdb",
        "redis-7.0.15/variants/lfu/dump.rdb",
        "values/lfu.rdb",
    )
]


def _grouped_parts(db: str, **options) -> tuple[dict, list[dict], dict]:
    """The report over every dump of `db`, and what findings.grouped words each dump's findings
    from: the `dump_lines` rows and the sections' objects per dump (their `by_dump`)."""
    opts = ReportOptions(**options)
    con = open_database(db, read_only=True)
    try:
        rep = build_report(con, opts)
        values, _ = query_values(con, opts)
        run = Runner(con, values)
        rows = run.rows("dump_lines")
        lines = {r["dump_id"]: r for r in rows}
        per = {s.name: s.by_dump(run, rep[s.name], lines) for s in F.grouped_sections(rep)}
    finally:
        con.close()
    return rep, rows, per


def _own_alone(db: str, dumps: int, **options) -> dict[int, list[dict]]:
    """dump id -> the findings of its report alone (--dump-id N) that GROUPED_FINDINGS names."""
    own = {}
    for d in range(1, dumps + 1):
        alone = F.build(_report(db, dump_id=d, **options), limit=None)
        own[d] = [f for f in alone if f["id"] in F.GROUPED_FINDINGS]
    return own


def _same_as_alone(
    rep: dict, rows: list[dict], per: dict, own: dict, monkeypatch, sections=None
) -> None:
    """Each dump's findings, worded from the sections' by_dump, are those of its report alone
    (the big keys with their examples); every finding over all dumps names the dumps whose
    report alone has it; each line counts them and opens with the worst.  `sections`: those
    sections only (without the lines)."""
    chosen = [s for s in F.grouped_sections(rep) if sections is None or s.name in sections]
    grouped = F.own_findings(rows, per, chosen)
    if sections is not None:
        ids = {f for s in chosen for f in s.dump_findings}
        own = {d: [f for f in fs if f["id"] in ids] for d, fs in own.items()}
    assert sorted(grouped) == sorted(own)
    for d, mine in own.items():
        assert [f["id"] for f in grouped[d]] == [f["id"] for f in mine], d
        for g, a in zip(grouped[d], mine):
            assert g == a, (d, a["id"])
    # every finding, not only the verdict's first ten
    monkeypatch.setattr(F, "MAX_FINDINGS", 1000)
    found, lines = F.grouped({k: v for k, v in rep.items() if k != "findings"}, rows, per)
    for fid in {f for s in chosen for f in s.dump_findings}:
        having = [d for d, fs in own.items() if any(f["id"] == fid for f in fs)]
        named = sorted({d for f in found if f["id"] == fid for d in f["dumps"]})
        assert named == having, fid
    assert all("dumps" not in f for f in found if f["id"] not in F.GROUPED_FINDINGS)
    if sections is not None:
        return
    for line in lines:
        mine = own[line["dump_id"]]
        assert line["findings"] == len(mine), line
        if not mine:
            assert line["worst"] is None
            continue
        assert (line["worst"]["id"], line["worst"]["severity"]) == (
            mine[0]["id"],
            mine[0]["severity"],
        )
        assert mine[0]["message"] == line["worst"]["message"]


@pytest.fixture(scope="module")
def many(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("many") / "many.duckdb")
    results = load(MANY, db)
    assert [r.dump_id for r in results] == list(range(1, len(MANY) + 1))
    return db


@pytest.mark.slow
def test_over_many_dumps_each_finding_names_the_dumps_whose_report_alone_has_it(many, monkeypatch):
    """Every finding that the sections' by_dump answer names the dumps whose report alone
    (--dump-id N) has it, in the same words and figures: the dump itself, big keys, the family
    holding most memory, keys without TTL and cache-like families without TTL, expired keys,
    expiry herds, compact encodings and strings cheaper as hash fields (each dump by its own
    server), value design, naming (mixed delimiters judged within each dump), cold keys, slot
    announcements and hot slots, pending stream entries."""
    assert len(MANY) > F.MAX_DUMPS_ALONE
    assert F.GROUPED_FINDINGS == (
        "dump-incomplete",
        "rdbscan-older-than-dump",
        "checksum-mismatch",
        "big-keys-critical",
        "big-keys",
        "dominant-family",
        "no-ttl-ephemeral",
        "ttl-herd",
        "expired-at-snapshot",
        "no-ttl-share",
        "encodings",
        "strings-to-hashes",
        "split-big-keys",
        "big-elements",
        "compressible-strings",
        "naming",
        "cold-keys",
        "slot-count-mismatch",
        "hot-slot",
        "stream-pending",
    )
    rep, rows, per = _grouped_parts(many)
    own = _own_alone(many, len(MANY))
    having = {
        fid: [d for d, fs in own.items() if any(f["id"] == fid for f in fs)]
        for fid in F.GROUPED_FINDINGS
    }
    # what the dumps hold: the checks fire on some dumps and not others (cold keys: below)
    assert {fid: having[fid] for fid in F.GROUPED_FINDINGS if len(having[fid]) < 20} == {
        "dump-incomplete": [39],
        "rdbscan-older-than-dump": [38],
        "checksum-mismatch": [37, 40],
        "big-keys-critical": [5, 7, 9],
        "big-keys": [5, 6, 7, 8, 10, 40, 41, 43, 44],
        "no-ttl-ephemeral": [5, 7, 9, 40, 41, 43, 44],
        "ttl-herd": [5, 6, 7, 8, 9, 10, 40, 43, 44],
        "expired-at-snapshot": [5, 7, 9],
        "encodings": [14, 29, 39],
        "strings-to-hashes": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14, 39, 40, 41, 43, 44],
        "split-big-keys": [42],
        "big-elements": [40, 41, 42, 43, 44],
        "compressible-strings": [40, 41, 42, 43, 44, 45],
        "cold-keys": [],
        "slot-count-mismatch": [],
        "hot-slot": [41],
        "stream-pending": [],
    }
    assert [len(having[f]) for f in ("dominant-family", "no-ttl-share", "naming")] == [37, 38, 35]
    assert set(having["dominant-family"]) - set(having["naming"]) == {1, 2, 3, 4, 6, 8, 10, 45}
    # the big keys of each dump in its own words, with the examples its report alone names
    big = F.own_findings(rows, per, [s for s in F.grouped_sections(rep) if s.name == "big_keys"])
    two = "2 big keys (over 10.0 KiB or 5,000 elements) hold"
    assert {d: [f["message"] for f in fs] for d, fs in big.items() if fs} == {
        5: [
            "2 critical big keys hold 1.6 MiB (83%): big:blob:2, big:list:1 ...",
            f"{two} 50.0 KiB (3%): big:blob:new1, queue:1 ...",
        ],
        6: [
            "4 big keys (over 10.0 KiB or 5,000 elements) hold 78.1 KiB (67%): big:blob:0, big:blob:1 ..."
        ],
        7: [
            "1 critical big key hold 1.3 MiB (91%): big:blob:2 ...",
            f"{two} 50.0 KiB (4%): big:blob:new1, queue:1 ...",
        ],
        8: ["1 big key (over 10.0 KiB or 5,000 elements) hold 20.1 KiB (53%): big:blob:2 ..."],
        9: ["1 critical big key hold 324.7 KiB (63%): big:list:1 ..."],
        10: [
            "3 big keys (over 10.0 KiB or 5,000 elements) hold 58.1 KiB (76%): big:blob:0, big:blob:1 ..."
        ],
        **{d: [f"{two} 430.6 KiB (35%): list:large, bitmap:sparse ..."] for d in (40, 41, 43, 44)},
    }
    _same_as_alone(rep, rows, per, own, monkeypatch)
    # the verdict's first ten
    assert all("dumps" in f for f in rep["findings"] if f["id"] in F.GROUPED_FINDINGS)


@pytest.mark.slow
def test_over_many_dumps_cold_keys_are_each_dumps_own(many, monkeypatch):
    """Cold keys by each dump's own LRU or LFU data (its policy): with a threshold that the
    fixture dumps' idle times (5-9 s) and LFU counters (5-22) cross, over the same dumps."""
    options = {"sections": ("cold",), "idle_days": 6 / 86400, "max_freq": 5}
    rep, rows, per = _grouped_parts(many, **options)
    own = _own_alone(many, len(MANY), **options)
    cold = {d: f for d, fs in own.items() for f in fs if f["id"] == "cold-keys"}
    # LFU dumps 24 and 44 (23, 45: counters over 5), LRU dumps 25 and 26 (43: idle 5 s)
    assert {d: f["message"] for d, f in cold.items()} == {
        24: "1 keys with an LFU counter <= 5 hold 56 B (100%); 0 of them without TTL",
        25: "1 keys idle for more than 6.94444e-05 days hold 56 B (100%); 0 of them without TTL",
        26: "1 keys idle for more than 6.94444e-05 days hold 56 B (100%); 0 of them without TTL",
        44: "401 keys with an LFU counter <= 5 hold 424.1 KiB (35%); 399 of them without TTL",
    }
    _same_as_alone(rep, rows, per, own, monkeypatch, sections=("cold",))


@pytest.mark.slow
def test_over_many_dumps_mixed_delimiters_are_judged_within_each_dump(tmp_path, monkeypatch):
    """The delimiters most keys of a family root use are each dump's own: the odd dumps write
    app:1..3 and app.1, the even ones app.1..3 and app:1. Over all 33 dumps `:` has the most
    keys (67 to 65), but each dump flags its own odd one out, as its report alone does."""
    files = []
    for i in range(1, 34):
        odd, even = ("app:", "app.") if i % 2 else ("app.", "app:")
        names = [f"{odd}{n}" for n in (1, 2, 3)] + [f"{even}1x"]
        body = b"\xfe\x00" + b"".join(W.key(0, n, W.string(f"v{i}")) for n in names)
        files.append(tmp_path / f"node{i:02}.rdb")
        files[-1].write_bytes(W.rdb(body, version=11, aux={"redis-ver": "7.2.6"}))
    db = str(tmp_path / "app.duckdb")
    assert all(r.complete for r in load([str(f) for f in files], db))
    options = {"sections": ("naming",)}
    rep, rows, per = _grouped_parts(db, **options)
    own = _own_alone(db, len(files), **options)
    rules = {d: per["naming"][d]["rules"] for d in (1, 2)}
    assert {d: {r["rule"]: r["keys"] for r in rs if r["keys"]} for d, rs in rules.items()} == {
        1: {"mixed-delimiters": 1, "no-delimiter": 1},  # app.1x
        2: {"mixed-delimiters": 1, "no-delimiter": 3},  # app:1x; app.1 .. app.3
    }
    assert [f["message"] for f in own[2]] == [
        "4 keys break a naming rule (no-delimiter 3, mixed-delimiters 1)"
    ]
    _same_as_alone(rep, rows, per, own, monkeypatch, sections=("naming",))


@pytest.mark.slow
def test_over_many_dumps_big_keys_name_the_examples_of_the_report_alone(tmp_path):
    """The examples are the first distinct names, shortened to 40 characters: two big keys that
    differ only past that read as one, and the next key is the second example, over 33 dumps
    as in dump 1's report alone (big_keys_by_dump gives each dump the keys its report lists)."""
    long = "session:" + "a" * 40  # 48 characters: shortened to the same 39 and `…`
    files = []
    for i in range(1, 34):
        body = [W.key(0, f"k:{i}", W.string("v"))]
        if i == 1:
            body += [
                W.key(0, f"{long}:1", W.string("x" * 30_000)),
                W.key(0, f"{long}:2", W.string("x" * 20_000)),
                W.key(0, "blob:3", W.string("x" * 15_000)),
            ]
        files.append(tmp_path / f"node{i:02}.rdb")
        files[-1].write_bytes(W.rdb(b"\xfe\x00" + b"".join(body), aux={"redis-ver": "7.2.6"}))
    db = str(tmp_path / "fleet.duckdb")
    assert all(r.complete for r in load([str(f) for f in files], db))
    rep, rows, per = _grouped_parts(db, sections=("big_keys",))
    big = [s for s in F.grouped_sections(rep) if s.name == "big_keys"]
    grouped = F.own_findings(rows, per, big)
    alone = [f for f in _report(db, dump_id=1)["findings"] if f["id"] == "big-keys"]
    assert (
        [f["message"] for f in grouped[1]]
        == [f["message"] for f in alone]
        == [
            "3 big keys (over 10.0 KiB or 5,000 elements) hold 68.2 KiB (100%): "
            "session:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…, blob:3 ..."
        ]
    )
    assert all(not grouped[d] for d in range(2, 34))
