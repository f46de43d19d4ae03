"""`rdbscan report / queries / query` through click, the JSON contract, --fail-on exit codes,
rules and config files, and the macros; expected values come from the manifests."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path

import duckdb
import pytest
from common import run_cli
from report_truth import big_key_rules, manifest, naming_violations

from rdbscan.reports.engine.querylib import bundled_queries, query_files

REL = "redis-7.0.15/small"


@pytest.fixture(scope="module")
def db(loaded):
    return loaded(REL)


@pytest.mark.slow
def test_report_json_contract_from_dump(tmp_path):
    """Given a dump, report loads it into a temporary database, reports, and removes it."""
    m = manifest(REL)
    res = run_cli("report", m.dump, "--format", "json", "-q")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    o = rep["overview"]
    assert o["keys"] == len(m.keys)
    assert o["keys_by_db"] == {
        str(k): v for k, v in sorted(collections.Counter(k.db for k in m.keys).items())
    }
    assert o["rdb_version"] == 10 and isinstance(o["memory_bytes"], int)
    for item in rep["big_keys"]["items"]:
        assert {"db", "key", "type", "length", "memory_bytes"} <= set(item)
    for p in rep["patterns"]["items"]:
        assert {"pattern", "keys", "memory_bytes", "memory_share", "ttl_share"} <= set(p)
    assert rep["ttl"]["keys_without_ttl"] == sum(1 for k in m.keys if k.expire_at_ms is None)
    assert isinstance(rep["ttl"]["memory_without_ttl"], int)
    assert rep["ttl"]["expired_at_snapshot"] == 0
    assert isinstance(rep["encodings"]["candidates"], list)
    for c in rep["encodings"]["candidates"]:
        assert {"db", "key", "type", "encoding", "savings_bytes"} <= set(c)
    for r in rep["naming"]["rules"]:
        assert {"rule", "keys", "examples"} <= set(r)
    assert set(rep) >= {
        "overview",
        "big_keys",
        "patterns",
        "ttl",
        "encodings",
        "naming",
        "cold",
        "slots",
        "streams",
    }


def test_report_output_database_kept(tmp_path):
    out = tmp_path / "kept.duckdb"
    res = run_cli(
        "report", manifest(REL).dump, "-o", out, "--format", "json", "-q", "--section", "overview"
    )
    assert res.exit_code == 0
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT count(*) FROM keys").fetchone()[0] == len(manifest(REL).keys)


@pytest.mark.slow
def test_report_text_and_markdown(db):
    res = run_cli("report", db)
    assert res.exit_code == 0, res.output
    for heading in (
        "Overview",
        "Big keys",
        "Key families",
        "TTL",
        "Compact encodings",
        "Naming",
        "Cold keys",
        "Cluster slots",
        "Streams",
    ):
        assert heading in res.stdout
    assert "user:{id}:profile" in res.stdout
    assert "What to do:" in res.stdout
    assert "Traceback" not in res.output
    md = run_cli("report", db, "--format", "markdown")
    assert md.exit_code == 0
    assert md.stdout.startswith("# rdbscan report")
    assert "## Big keys" in md.stdout and "| rule |" in md.stdout
    assert "user:{id}:profile" in md.stdout


@pytest.mark.slow
def test_fail_on_exit_codes(db):
    m = manifest(REL)
    n_big = sum(1 for k in m.keys if big_key_rules(k))
    n_upper = len(naming_violations(m.keys)["uppercase"])
    assert n_big > 0 and n_upper > 0
    res = run_cli("report", db, "--fail-on", "big-keys", "--format", "json")
    assert res.exit_code == 3
    checks = json.loads(res.stdout)["fail_on"]["checks"]
    assert checks[0]["value"] == n_big and checks[0]["failed"]
    assert "findings exceed" in res.stderr
    assert (
        run_cli("report", db, "--fail-on", f"big-keys={n_big}", "--section", "overview").exit_code
        == 0
    )
    assert (
        run_cli(
            "report", db, "--fail-on", f"naming:uppercase={n_upper - 1}", "--section", "overview"
        ).exit_code
        == 3
    )
    assert (
        run_cli(
            "report", db, "--fail-on", f"naming:uppercase={n_upper}", "--section", "overview"
        ).exit_code
        == 0
    )
    # share of memory without TTL: nearly all memory in this fixture
    assert (
        run_cli("report", db, "--fail-on", "no-ttl-share=99.9%", "--section", "overview").exit_code
        == 0
    )
    assert (
        run_cli("report", db, "--fail-on", "no-ttl-share=50%", "--section", "overview").exit_code
        == 3
    )
    bad = run_cli("report", db, "--fail-on", "bogus")
    assert bad.exit_code == 2 and "unknown rule" in bad.output and "Traceback" not in bad.output


@pytest.mark.slow
def test_rules_file(db, tmp_path):
    m = manifest(REL)
    rules = tmp_path / "rules.toml"
    rules.write_text(
        "[rules.uppercase]\nenabled = false\n\n[rules.max-length]\nmax_bytes = 100\n\n"
        "[big-keys]\ncollection_length = 500\n\n[fail-on]\nnaming = 1000000\n"
    )
    res = run_cli("report", db, "--rules", rules, "--format", "json", "--top", "100")
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    got = {r["rule"]: r["keys"] for r in rep["naming"]["rules"]}
    assert "uppercase" not in got
    assert got["max-length"] == len(naming_violations(m.keys, max_length=100)["max-length"])
    big = {r["rule"]: r["keys"] for r in rep["big_keys"]["rules"]}
    assert big["big-collection"] == sum(
        1 for k in m.keys if "big-collection" in big_key_rules(k, coll_len=500)
    )
    assert rep["fail_on"]["checks"][0]["rule"] == "naming" and not rep["fail_on"]["failed"]
    bad = tmp_path / "bad.toml"
    bad.write_text("[rules.no-such-rule]\nenabled = false\n")
    res = run_cli("report", db, "--rules", bad)
    assert res.exit_code == 2 and "unknown naming rule" in res.output


def test_config_file_and_set(db, tmp_path):
    conf = tmp_path / "redis.conf"
    conf.write_text(
        '# test\nhash-max-ziplist-entries 1024\nzset-max-listpack-value "128"\nmaxmemory 1gb\n'
    )
    res = run_cli(
        "report",
        db,
        "--config",
        conf,
        "--set",
        "hash-max-listpack-value=128",
        "--format",
        "json",
        "--section",
        "encodings",
        "--top",
        "200",
    )
    assert res.exit_code == 0, res.output
    e = json.loads(res.stdout)["encodings"]
    assert e["thresholds"]["hash-max-listpack-entries"] == 1024
    assert e["thresholds"]["zset-max-listpack-value"] == 128
    assert e["thresholds"]["hash-max-listpack-value"] == 128
    assert e["threshold_sources"]["hash-max-listpack-entries"].startswith("config ")
    assert "hash:n513" in {c["key"] for c in e["candidates"]}
    res = run_cli("report", db, "--set", "no-such-setting=1")
    assert res.exit_code == 2 and "no-such-setting" in res.output


def test_queries_listing_and_headers():
    res = run_cli("queries", env={"COLUMNS": None})  # a pipe: one line per query
    assert res.exit_code == 0
    names = [line.split()[0] for line in res.stdout.splitlines()]
    files = [p for p in query_files() if not p.stem.startswith("_")]
    # a file with a `by dump:` entry is also NAME_by_dump (querylib.by_dump)
    per_dump = [p.stem + "_by_dump" for p in files if "\n-- by dump: " in p.read_text()]
    assert per_dump == [
        "big_elements_by_dump",
        "big_keys_by_dump",
        "cold_summary_by_dump",
        "compressible_by_dump",
        "split_keys_by_dump",
        "strings_to_hashes_by_dump",
    ]
    assert sorted(names) == sorted([p.stem for p in files] + per_dump)
    for q in bundled_queries(include_base=True).values():
        text = q.path.read_text()
        assert text.startswith(f"-- name: {q.path.stem}\n-- answers: "), q.name
        assert "-- params:" in text, q.name
        assert q.used_params <= set(q.params) | {"dump_id", "delimiters"}, q.name
    verbose = run_cli("queries", "-v")
    assert "--param top=" in verbose.stdout
    # for a terminal 80 columns wide, each question wrapped under itself, nothing lost
    lines = run_cli("queries", env={"COLUMNS": "80"}).stdout.splitlines()
    assert max(map(len, lines)) <= 80
    assert [line.split()[0] for line in lines if not line.startswith(" ")] == names
    assert " ".join(lines).split() == res.stdout.split()
    wide = [x for x in run_cli("queries", "-v", env={"COLUMNS": "80"}).stdout.splitlines()]
    assert {x.split()[0] for x in wide if len(x) > 80} <= {"file:"}  # a path is not cut


def test_query_command(db):
    m = manifest(REL)
    res = run_cli("query", db, "big_keys", "--param", "top=1", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == 1
    res = run_cli("query", db, "big_keys_summary", "--param", "collection_length=100", "-f", "json")
    got = {r["rule"]: r["keys"] for r in json.loads(res.stdout)}
    assert got["big-collection"] == sum(
        1 for k in m.keys if "big-collection" in big_key_rules(k, coll_len=100)
    )
    res = run_cli("query", db, "naming_rules", "-f", "csv")
    assert res.exit_code == 0 and res.stdout.startswith("rule,description,keys")
    assert run_cli("query", db, "nope").exit_code == 2
    bad = run_cli("query", db, "big_keys", "--param", "nope=1")
    assert bad.exit_code == 2 and "nope" in bad.output


def test_wide_results_print_one_block_per_row(db):
    """big_keys has 18 columns: in 80 characters (run_cli is not a terminal) a table of them
    is unreadable, so each row prints as a block of `column  value` lines; a narrow result
    stays a table."""
    want = json.loads(run_cli("query", db, "big_keys", "-p", "top=2", "-f", "json").stdout)
    res = run_cli("query", db, "big_keys", "-p", "top=2")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("-[ row 1 ]") and lines[-1] == f"({len(want)} rows)"
    assert sum(1 for ln in lines if ln.startswith("-[ row ")) == len(want) == 2
    first = dict(re.match(r"(\S+)\s+(.*)$", ln).groups() for ln in lines[1 : 1 + len(want[0])])
    assert list(first) == list(want[0])
    assert first["key"] == want[0]["key"] and first["memory_bytes"] == str(want[0]["memory_bytes"])
    narrow = run_cli("sql", db, "SELECT type, count(*) AS n FROM keys GROUP BY ALL ORDER BY n DESC")
    assert "┃ type" in narrow.stdout and "-[ row" not in narrow.stdout


def test_query_own_sql_file(db, tmp_path):
    sql = tmp_path / "mine.sql"
    sql.write_text(
        "-- name: mine\n-- answers: How many keys per family prefix?\n-- params:\n"
        "--   depth (1)   prefix depth\n"
        "SELECT key_prefix(pattern, $depth) AS prefix, count(*) AS keys FROM rkeys GROUP BY 1 ORDER BY 2 DESC\n"
    )
    res = run_cli("query", db, sql, "-p", "depth=1", "-f", "json")
    assert res.exit_code == 0, res.output
    rows = {r["prefix"]: r["keys"] for r in json.loads(res.stdout)}
    assert rows["user"] == sum(1 for k in manifest(REL).keys if k.raw.startswith(b"user:"))


def test_macros_in_loaded_database(db):
    """The loader creates the macros in every database it writes: plain DuckDB can use them."""
    con = duckdb.connect(db, read_only=True)
    q = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
    assert q("SELECT key_pattern('user:1000:profile')") == "user:{id}:profile"
    assert q("SELECT key_pattern('session:00c2b36c1bdb352c0c6c0e066e358cad')") == "session:{id}"
    assert q("SELECT key_pattern('order:2024-01-31:42')") == "order:{date}:{id}"
    assert q("SELECT key_pattern('u:550e8400-e29b-41d4-a716-446655440000:x')") == "u:{id}:x"
    assert q("SELECT key_pattern('{user:42}:cart')") == "{user:{id}}:cart"
    assert q("SELECT key_pattern('camelCaseKeyName')") == "camelCaseKeyName"
    assert q("SELECT key_pattern('a.1|b', delimiters := '.|')") == "a.{id}|b"
    # key_family: the stored family for ':', key_pattern afresh for other delimiters
    assert q("SELECT key_family('a.1:b', 'stored')") == "stored"
    assert q("SELECT key_family('a.1:b', NULL)") is None  # the stored family, even when null
    assert q("SELECT key_family('a.1:b', 'stored', delimiters := '.:')") == "a.{id}:b"
    assert q("SELECT count(*) FROM keys WHERE key_family(key, family) <> key_pattern(key)") == 0
    assert q("SELECT key_prefix('user:1000:profile', 2)") == "user:1000"
    assert q("SELECT key_prefix('user:1000:profile', 9)") == "user:1000:profile"
    assert q("SELECT key_depth('a:b:c')") == 3
    # format §9 test vectors
    assert q("SELECT key_hashtag('{user1000}.following')") == "user1000"
    assert q("SELECT key_hashtag('foo{}{bar}')") is None
    assert q("SELECT key_hashtag('foo{{bar}}zap')") == "{bar"
    assert q("SELECT key_hashtag('foo{bar}{zap}')") == "bar"
    assert [q(f"SELECT jemalloc_size({n})") for n in (1, 9, 65, 129, 1025, 5000)] == [
        8,
        16,
        80,
        160,
        1280,
        5120,
    ]
    m = manifest(REL)
    fam = collections.Counter()
    for k in m.keys:
        if re.fullmatch(rb"user:\d+:profile", k.raw):
            fam["p"] += 1
    assert q("SELECT count(*) FROM keys WHERE key_pattern(key) = 'user:{id}:profile'") == fam["p"]


def test_errors_are_one_line(tmp_path):
    res = run_cli("report", tmp_path / "missing.rdb")
    assert res.exit_code == 6 and "No such file or directory" in res.output
    empty = tmp_path / "x.duckdb"
    duckdb.connect(str(empty)).execute("CREATE TABLE t(a INT)").close()
    res = run_cli("report", empty)
    assert res.exit_code == 7 and "not an rdbscan database" in res.output


def test_damaged_dump_reports_and_exits_4():
    m = manifest("redis-7.0.15/variants/truncated")
    res = run_cli("report", m.dump, "--format", "json", "-q", "--section", "overview")
    assert res.exit_code == 4
    rep = json.loads(res.stdout)
    assert rep["overview"]["complete"] is False
    assert 0 < rep["overview"]["keys"] < len(m.keys)


@pytest.mark.slow
def test_a_database_of_snapshots_reports_the_latest_not_their_sum(tmp_path):
    """A history database (`load --instance` night after night, for `trend`): the report covers
    the latest snapshot of each instance, and says so; it used to add the nights up (two nights
    of 562 keys reported 1,124 keys, every big key twice).  Dumps loaded without --instance are
    all covered, as before; --dump-id still picks any one dump."""
    from report_truth import FIXTURES

    night1 = FIXTURES / "redis-7.0.15" / "small" / "dump.rdb"  # aux ctime 2026-11-22 ...
    night2 = FIXTURES / "redis-7.2.6" / "small" / "dump.rdb"  # ... a later ctime
    shard = FIXTURES / "redis-6.2.16" / "small" / "dump.rdb"
    db = str(tmp_path / "history.duckdb")
    for args in ([night1], [night2]):
        assert run_cli("load", "-q", "--instance", "cache", *args, "-o", db).exit_code == 0
    assert run_cli("load", "-q", shard, "-o", db).exit_code == 0  # no instance: always covered
    con = duckdb.connect(db, read_only=True)
    ids = con.execute("SELECT dump_id, snapshot_id, keys FROM dumps ORDER BY 1").fetchall()
    ctimes = con.execute("SELECT ctime FROM dumps ORDER BY dump_id").fetchall()
    con.close()
    assert ctimes[0] < ctimes[1]
    (d1, s1, _), (d2, s2, k2), (d3, _, k3) = ids
    out = run_cli("report", "-q", "-f", "json", db)
    assert out.exit_code == 0, out.output
    o = json.loads(out.stdout)["overview"]
    assert [d["dump_id"] for d in o["dumps"]] == [d2, d3]
    assert o["keys"] == k2 + k3
    assert (
        "The database holds 2 snapshots of instance cache: the figures are those of the latest "
        f"(snapshot {s2}), not their sum; `--dump-id N` reports a dump of another, `rdbscan "
        "trend` and `rdbscan diff` compare them."
    ) in o["notes"]
    alone = json.loads(run_cli("report", "-q", "-f", "json", db, "--dump-id", d1).stdout)[
        "overview"
    ]
    assert [d["dump_id"] for d in alone["dumps"]] == [d1] and not any(
        "snapshots of instance" in n for n in alone["notes"]
    )


def test_one_spelling_of_a_section_everywhere_and_a_verdict_that_says_what_ran():
    """--section big-keys and --fail-on big_keys are accepted as the other's spelling; a report
    of some sections says which checks ran instead of "no check found a problem" (issue 27)."""
    sample = str(Path(__file__).parent.parent / "sample_dumps" / "redis-7.4.1.rdb")
    both = run_cli("report", sample, "-q", "--section", "big-keys", "--fail-on", "big_keys")
    assert both.exit_code == 3
    assert both.stderr == "rdbscan: findings exceed --fail-on thresholds: big-keys 2 > 0\n"
    only = run_cli("report", sample, "-q", "--section", "overview", "-f", "markdown")
    assert only.exit_code == 0
    assert "No check ran beyond the dump itself (--section): run without it for a verdict." in (
        only.stdout
    )
    assert "no check found a problem" not in only.stdout
    some = run_cli(
        "report", sample, "-q", "-f", "markdown", "--section", "slots", "--section", "streams"
    )
    assert some.exit_code == 0
    assert (
        "_Nothing to report in the sections computed (slots, streams); the other checks did not "
        "run (--section)._" in some.stdout
    )
