"""Filters at parse time (docs/export.md): a filtered load holds exactly the rows of a whole load
that the filter selects (the same SQL condition `export` of a database applies), on the
compiled record loop and on the pure-Python path; what was kept is recorded and reported."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W
from click.testing import CliRunner

from rdbscan.cli.main import main
from rdbscan.db.filters import KeyFilter, glob_to_regex, literal_prefix, parse_size
from rdbscan.db.load import load
from rdbscan.rdb import backend

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = str(FIXTURES / "redis-7.4.1" / "small" / "dump.rdb")
CTIME = 1_800_000_000  # the generated dump's snapshot, Unix seconds

KEY_SQL = "SELECT k.* EXCLUDE (dump_id) FROM keys k ORDER BY k.file_offset"


def _dump(path: Path) -> str:
    """Strings, listpack hashes (the compiled loop's records) and hashtable sets (the Python
    path's) in dbs 0 and 3, with expiries before and after the snapshot."""
    body = b""
    for db in (0, 3):
        body += b"\xfe" + W.length(db)
        for i in range(300):
            expire = b""
            if i % 3 == 0:  # a third expire: half of them before the snapshot
                ms = (CTIME - 100 if i % 2 else CTIME + 3600) * 1000 + i
                expire = b"\xfc" + struct.pack("<Q", ms)
            if i % 5 == 0:
                value = W.string(W.listpack([b"f", b"v" * (i % 40), b"n", i]))
                body += expire + W.key(16, f"user:{i}:profile", value)
            elif i % 5 == 1:
                members = [f"m{j}".encode() for j in range(1 + i % 7)]
                value = W.length(len(members)) + b"".join(W.string(m) for m in members)
                body += expire + W.key(2, f"tags:{i}", value)
            elif i % 5 == 2:
                body += expire + W.key(0, f"session:{i:04x}", W.string(b"s" * (i % 90)))
            else:
                body += expire + W.key(0, f"cache:page:{i}", W.string(b"x" * (i * 7)))
    data = W.rdb(body, version=11, aux={"redis-ver": "7.2.4", "ctime": str(CTIME)})
    path.write_bytes(data)
    return str(path)


FILTERS = [
    KeyFilter(match=["user:*"]),
    KeyFilter(match=["user:*", "tags:*"]),
    KeyFilter(match=["*:profile"]),
    KeyFilter(match=["session:00[0-3]?"]),
    KeyFilter(regex=["^cache:page:1"]),
    KeyFilter(types=["hash"]),
    KeyFilter(types=["set", "string"], dbs=[3]),
    KeyFilter(dbs=[0]),
    KeyFilter(min_memory=200),
    KeyFilter(min_length=50),
    KeyFilter(skip_expired=True),
    KeyFilter(match=["cache:*"], min_length=100, skip_expired=True, dbs=[3]),
]


def _rows(db: str, where: str = "true") -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(KEY_SQL.replace("ORDER BY", f"WHERE {where} ORDER BY")).fetchall()
    finally:
        con.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    base = tmp_path_factory.mktemp("filters")
    dump = _dump(base / "gen.rdb")
    whole = str(base / "whole.duckdb")
    load([dump], whole)
    return dump, whole, base


def _sql_reference(whole: str, flt: KeyFilter) -> list:
    con = duckdb.connect(whole, read_only=True)
    try:
        return con.execute(KEY_SQL.replace("ORDER BY", f"WHERE {flt.sql()} ORDER BY")).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("flt", FILTERS, ids=[f.describe() for f in FILTERS])
def test_a_filtered_load_holds_the_rows_the_filter_selects(generated, flt):
    dump, whole, base = generated
    db = str(base / f"f{FILTERS.index(flt)}.duckdb")
    (result,) = load([dump], db, key_filter=flt)
    want = _sql_reference(whole, flt)
    got = _rows(db)
    assert 0 < len(got) < 600
    assert got == want
    assert result.keys == len(got) and result.filtered_keys == 600 - len(got)
    con = duckdb.connect(db, read_only=True)
    try:
        row = con.execute("SELECT filter, filtered_keys, keys FROM dumps").fetchone()
    finally:
        con.close()
    assert row == (flt.describe(), 600 - len(got), len(got))


def test_the_filters_select_what_they_say(generated):
    dump, whole, base = generated
    expired = _rows(whole, f"expire_at_ms <= {CTIME * 1000}")
    assert len(expired) == 100  # a sixth of the keys, in two dbs
    kept = _rows(whole, KeyFilter(skip_expired=True).sql())
    assert len(kept) == 500
    assert {r[1] for r in _rows(whole, KeyFilter(match=["session:00[0-3]?"]).sql())} == {
        f"session:{i:04x}" for i in range(300) if i % 5 == 2 and i < 64
    }


@pytest.mark.skipif(backend.compiled is None, reason="the compiled core is not built")
def test_the_pure_python_path_filters_the_same(generated, tmp_path):
    """Each filter loaded on the pure-Python path (one child process for them all)."""
    dump, whole, base = generated
    code = (
        "import sys, json; from rdbscan.rdb import backend; assert backend.compiled is None; "
        "from rdbscan.db.load import load; from rdbscan.db.filters import KeyFilter\n"
        "for db, spec in json.loads(sys.argv[2]):\n"
        "    load([sys.argv[1]], db, key_filter=KeyFilter(**spec))"
    )
    env = {**os.environ, "RDBSCAN_PURE_PYTHON": "1"}
    fields = ("match", "regex", "types", "dbs", "min_memory", "min_length", "skip_expired")
    jobs = [
        (str(tmp_path / f"p{i}.duckdb"), {f: getattr(flt, f) for f in fields})
        for i, flt in enumerate(FILTERS)
    ]
    subprocess.run([sys.executable, "-c", code, dump, json.dumps(jobs)], check=True, env=env)
    for (db, _), flt in zip(jobs, FILTERS):
        assert _rows(db) == _sql_reference(whole, flt), flt.describe()


def test_a_real_dump_filtered(tmp_path):
    whole = str(tmp_path / "whole.duckdb")
    load([SAMPLE], whole)
    for flt in (
        KeyFilter(match=["user:*"]),
        KeyFilter(types=["zset", "stream"]),
        KeyFilter(min_memory=parse_size("1KB")),
        KeyFilter(regex=[r"\d{3}"], dbs=[0]),
    ):
        db = str(tmp_path / "f.duckdb")
        if os.path.exists(db):
            os.remove(db)
        load([SAMPLE], db, key_filter=flt)
        got, want = _rows(db), _sql_reference(whole, flt)
        assert got == want and 0 < len(got), flt.describe()


def test_whole_and_filtered_loads_of_one_dump_are_two_dumps(generated, tmp_path):
    dump, whole, base = generated
    db = str(tmp_path / "both.duckdb")
    load([dump], db)
    (again,) = load([dump], db, key_filter=KeyFilter(types=["hash"]))
    assert again.refused is None
    (twice,) = load([dump], db, key_filter=KeyFilter(types=["hash"]))
    assert twice.refused is not None  # the same filter: the same dump
    con = duckdb.connect(db, read_only=True)
    try:
        assert con.execute("SELECT keys, filter FROM dumps ORDER BY dump_id").fetchall() == [
            (600, None),
            (120, "type hash"),
        ]
    finally:
        con.close()


def test_the_report_says_the_figures_cover_the_filtered_keys(generated):
    dump, whole, base = generated
    res = CliRunner().invoke(
        main, ["report", dump, "-q", "-f", "json", "--match", "user:*", "--skip-expired"]
    )
    assert res.exit_code == 0, res.output
    overview = json.loads(res.stdout)["overview"]
    assert overview["keys"] == 100
    assert overview["filter"] == {
        "filter": "match user:*, not expired at the snapshot",
        "filtered_keys": 500,
    }
    res = CliRunner().invoke(main, ["report", dump, "-q", "--section", "overview", "--db", "3"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.stdout.split())
    assert "Loaded with a filter (db 3): the figures cover the filtered keys only; 300 keys" in text


def test_the_text_overview_shows_the_filter_in_one_row(generated):
    dump, whole, base = generated
    res = CliRunner().invoke(
        main, ["report", dump, "-q", "--section", "overview", "--match", "user:*", "--db", "0"]
    )
    assert res.exit_code == 0, res.output
    rows = [
        ln.rstrip().split(None, 1) for ln in res.stdout.splitlines() if ln.startswith("Filter ")
    ]
    assert rows == [["Filter", "match user:*, db 0 (540 keys left out)"]]
    whole_run = CliRunner().invoke(main, ["report", whole, "-q", "--section", "overview"])
    assert not [line for line in whole_run.stdout.splitlines() if line.startswith("Filter ")]


def test_schema_takes_the_filters(generated):
    dump, whole, base = generated
    res = CliRunner().invoke(main, ["schema", dump, "-q", "-f", "json", "--match", "user:*"])
    assert res.exit_code == 0, res.output
    families = json.loads(res.stdout)["families"]
    assert [(f["pattern"], f["observed"]["keys"]) for f in families] == [("user:{id}:profile", 120)]
    res = CliRunner().invoke(main, ["schema", whole, "-q", "--match", "user:*"])
    assert res.exit_code == 2
    assert res.output == (
        f"rdbscan: error: {whole}: a database; the filters select keys while dumps load "
        "(give the dumps, or filter with `rdbscan load`)\n"
    )


def test_diff_takes_the_filters(generated, tmp_path):
    dump, whole, base = generated
    res = CliRunner().invoke(main, ["diff", dump, dump, "-f", "json", "--type", "hash", "-j", "1"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["filter"] == "type hash"
    assert (out["old"]["keys"], out["new"]["keys"]) == (120, 120)
    assert "rdbscan: both snapshots loaded with a filter (type hash): the diff covers the " in (
        res.stderr
    )
    res = CliRunner().invoke(main, ["diff", dump, dump, "-q", "--type", "hash", "-j", "1"])
    assert "Both snapshots loaded with a filter (type hash): the figures cover the filtered " in (
        " ".join(res.stdout.split())
    )
    res = CliRunner().invoke(main, ["diff", whole, dump, "-q", "--type", "hash"])
    assert res.exit_code == 2
    assert res.output == (
        f"rdbscan: error: {whole}: a database; the filters select keys while dumps load "
        "(give the dumps, or filter with `rdbscan load`)\n"
    )


def test_report_refuses_the_filters_on_a_database_or_a_dataset(generated):
    import rdbscan

    dump, whole, base = generated
    dataset = str(base / "dataset")
    if not os.path.isdir(dataset):
        rdbscan.load_dataset([dump], dataset)
    for source, option in (
        (whole, ["--match", "x:*"]),
        (whole, ["--skip-expired"]),
        (dataset, ["--min-memory", "1KB"]),
    ):
        res = CliRunner().invoke(main, ["report", source, "-q", *option])
        assert res.exit_code == 2, option
        assert res.output == (
            f"rdbscan: error: {source}: a database; the filters select keys while dumps load "
            "(give the dumps, or filter with `rdbscan load`)\n"
        )


def test_a_whole_load_says_no_filter(generated):
    dump, whole, base = generated
    res = CliRunner().invoke(main, ["report", whole, "-q", "-f", "json", "--section", "overview"])
    assert json.loads(res.stdout)["overview"]["filter"] is None


def test_load_cli_filters(generated, tmp_path):
    dump, whole, base = generated
    db = str(tmp_path / "c.duckdb")
    res = CliRunner().invoke(
        main, ["load", "-q", dump, "-o", db, "--type", "string", "--min-length", "100"]
    )
    assert res.exit_code == 0, res.output
    assert _rows(db) == _sql_reference(whole, KeyFilter(types=["string"], min_length=100))


@pytest.mark.parametrize(
    "args, message",
    [
        (["--min-memory", "lots"], "is not a size"),
        (["--regex", "("], "--regex '('"),
        (["--type", "bitmap"], "Invalid value for '--type'"),
    ],
)
def test_bad_filters_are_usage_errors(generated, tmp_path, args, message):
    dump, whole, base = generated
    res = CliRunner().invoke(main, ["load", "-q", dump, "-o", str(tmp_path / "x.duckdb"), *args])
    assert res.exit_code == 2
    assert message in res.output


def test_globs_are_redis_globs():
    def m(glob, key):
        return re.compile(glob_to_regex(glob).encode()).match(key.encode()) is not None

    assert m("user:*", "user:1:profile") and not m("user:*", "xuser:1")
    assert m("h?llo", "hello") and not m("h?llo", "hllo")
    assert m("h[ae]llo", "hallo") and not m("h[ae]llo", "hillo")
    assert m("h[^e]llo", "hallo") and not m("h[^e]llo", "hello")
    assert m("h[a-b]llo", "hbllo") and not m("h[a-b]llo", "hcllo")
    assert m(r"a\*b", "a*b") and not m(r"a\*b", "axb")
    assert m("a.b", "a.b") and not m("a.b", "axb")
    assert m("*", "line\nbreak")
    assert not m("user", "user:1")  # the whole name
    assert literal_prefix("user:*") == b"user:"
    assert literal_prefix("user:*:x") is None and literal_prefix("us?r:*") is None
    assert parse_size("10KB") == 10240 and parse_size("1.5MiB") == 1572864
    assert parse_size("2g") == 2 << 30 and parse_size("100") == 100


def test_a_dataset_of_dumps_loaded_before_the_filter_columns(tmp_path):
    """A Parquet dataset keeps the `dumps` files of earlier loads: one written before
    dumps.filter existed still opens, next to a filtered load of today."""
    root = str(tmp_path / "ds")
    assert CliRunner().invoke(main, ["load", "-q", SAMPLE, "--parquet", root]).exit_code == 0
    (old,) = Path(root, "dumps").rglob("*.parquet")
    duckdb.sql(
        f"COPY (SELECT * EXCLUDE (filter, filtered_keys) FROM '{old}') TO '{old}.new' "
        "(FORMAT parquet)"
    )
    os.replace(f"{old}.new", old)
    other = str(FIXTURES / "redis-6.2.16" / "small" / "dump.rdb")
    res = CliRunner().invoke(main, ["load", "-q", other, "--parquet", root, "--match", "user:*"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["report", root, "-q", "-f", "json", "--section", "overview"])
    assert res.exit_code == 0, res.output
    overview = json.loads(res.stdout)["overview"]
    assert overview["keys"] == 584 + 130
    assert overview["filter"] == {
        "filter": "match user:* (1 dump(s) loaded whole)",
        "filtered_keys": 431,
    }


def test_the_load_line_says_what_the_filter_left_out(generated, tmp_path):
    """The line per dump of `load` and of `report` counts the keys the filter left out: a filter
    that keeps nothing (a mistyped pattern) reads "0 keys (600 left out ...)", not "0 keys"."""
    dump, whole, base = generated
    db = tmp_path / "x.duckdb"
    res = CliRunner().invoke(main, ["load", dump, "-o", str(db), "--match", "nosuch*"])
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith(
        f"{dump}: 0 keys (600 left out by the filter: match nosuch*), checksum ok, "
    )
    res = CliRunner().invoke(
        main, ["report", dump, "--section", "overview", "-f", "json", "--match", "user:*"]
    )
    assert res.exit_code == 0, res.output
    assert res.stderr.startswith(
        f"rdbscan: loaded {dump}: 120 keys (480 left out by the filter: match user:*) in "
    )
    res = CliRunner().invoke(main, ["report", dump, "--section", "overview", "-f", "json"])
    assert res.stderr.startswith(f"rdbscan: loaded {dump}: 600 keys in ")  # no filter: no note
