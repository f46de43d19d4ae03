"""`rdbscan export` (docs/export.md): what DuckDB's writers write is the keys table; the rdbtools
columns agree with rdbtools' own `rdb -c memory` CSV, column by column, on the RDB 9 dumps."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from rdbscan.cli.main import main
from rdbscan.db.load import load

FIXTURES = Path(__file__).parent / "fixtures"
SAMPLE = str(FIXTURES / "redis-7.4.1" / "small" / "dump.rdb")
V9 = [
    str(FIXTURES / v / "small" / "dump.rdb")
    for v in ("redis-5.0.14", "redis-6.0.20", "redis-6.2.16")
]
HEADER = "database,type,key,size_in_bytes,encoding,num_elements,len_largest_element,expiry"


def _export(*args: str) -> tuple[int, str, str]:
    res = CliRunner().invoke(main, ["export", "-q", *args])
    return res.exit_code, res.stdout, res.stderr


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("export") / "s.duckdb")
    load([SAMPLE], path)
    return path


def _keys(db: str, sql: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_csv_jsonl_and_parquet_hold_the_keys_table(db, tmp_path):
    want = _keys(
        db,
        "SELECT dump_id, db, key, type, encoding, length, max_elem_bytes, memory_bytes, "
        "memory_total_bytes, serialized_bytes, expire_at_ms, idle_seconds, lfu_freq, slot, family "
        "FROM keys ORDER BY file_offset",
    )
    assert len(want) == 584
    for ext in ("csv", "jsonl", "parquet"):
        out = str(tmp_path / f"k.{ext}")
        code, _, err = _export(SAMPLE, "-o", out)
        assert code == 0, err
        reader = {"csv": "read_csv", "jsonl": "read_json", "parquet": "read_parquet"}[ext]
        con = duckdb.connect()
        got = con.execute(f"SELECT * FROM {reader}('{out}')").fetchall()
        assert [tuple(map(str, r)) for r in got] == [tuple(map(str, r)) for r in want], ext
    # Parquet keeps the types: DuckDB reads it back as the keys table itself
    con = duckdb.connect()
    assert con.execute(f"SELECT * FROM '{tmp_path / 'k.parquet'}'").fetchall() == want


def test_a_database_exports_the_same_as_its_dump(db, tmp_path):
    a, b = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    assert _export(SAMPLE, "-o", a)[0] == 0
    assert _export(db, "-o", b)[0] == 0
    assert Path(a).read_bytes() == Path(b).read_bytes()


def test_columns_all_and_named(db, tmp_path):
    out = str(tmp_path / "k.jsonl")
    assert _export(db, "-o", out, "--columns", "key,memory_bytes")[0] == 0
    rows = [json.loads(line) for line in Path(out).read_text().splitlines()]
    assert len(rows) == 584 and set(rows[0]) == {"key", "memory_bytes"}
    assert (
        sum(r["memory_bytes"] for r in rows)
        == _keys(db, "SELECT sum(memory_bytes) FROM keys")[0][0]
    )
    out = str(tmp_path / "all.parquet")
    assert _export(db, "-o", out, "--columns", "all")[0] == 0
    names = [d[0] for d in duckdb.connect().execute(f"SELECT * FROM '{out}' LIMIT 0").description]
    assert names == [
        d[0]
        for d in duckdb.connect(db, read_only=True)
        .execute("SELECT * FROM keys LIMIT 0")
        .description
    ]
    code, _, err = _export(db, "-o", str(tmp_path / "x.csv"), "--columns", "key,nope")
    assert code == 2 and "no column nope in keys" in err


def test_standard_output(db):
    # DuckDB writes to the process's standard output (/dev/stdout): a real process, a pipe
    run = subprocess.run(
        [sys.executable, "-m", "rdbscan", "export", db, "-o", "-", "--columns", "rdbtools"]
        + ["--type", "stream"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert (
        lines[0] == HEADER
        and len(lines) == 1 + _keys(db, "SELECT count(*) FROM keys WHERE type = 'stream'")[0][0]
    )
    code, _, err = _export(db, "-o", "-", "-f", "parquet")
    assert code == 2 and "standard output" in err


def test_an_existing_file_is_not_overwritten_without_force(db, tmp_path):
    out = tmp_path / "mine.csv"
    out.write_text("my own data\n")
    code, _, err = _export(SAMPLE, "-o", str(out))
    assert code == 7
    assert err.strip() == (
        f"rdbscan: error: {out}: exists; not overwritten (--force writes over it, or give "
        "another name)"
    )
    assert out.read_text() == "my own data\n"
    assert _export(SAMPLE, "-o", str(out), "--force")[0] == 0
    assert out.read_text().startswith("dump_id,db,key,")
    assert [p.name for p in tmp_path.iterdir()] == ["mine.csv"]  # no temporary file left
    code, _, err = _export(SAMPLE, "-o", str(tmp_path), "--force")
    assert (code, err.strip()) == (
        7,
        f"rdbscan: error: {tmp_path}: is a directory; give a file name",
    )


def test_an_unwritable_output_is_exit_7(db, tmp_path):
    code, _, err = _export(db, "-o", str(tmp_path / "no" / "such" / "dir.csv"))
    assert code == 7 and "cannot be written" in err


def test_filters_on_a_dump_and_on_a_database_agree(db, tmp_path):
    a, b = str(tmp_path / "a.csv"), str(tmp_path / "b.csv")
    args = ["--match", "user:*", "--min-memory", "100", "--skip-expired"]
    assert _export(SAMPLE, "-o", a, *args)[0] == 0
    assert _export(db, "-o", b, *args)[0] == 0
    assert Path(a).read_text() == Path(b).read_text()
    assert 10 < len(Path(a).read_text().splitlines()) < 584


def test_exit_codes_of_a_damaged_dump(tmp_path):
    cut = tmp_path / "cut.rdb"
    cut.write_bytes(Path(SAMPLE).read_bytes()[:20_000])
    out = tmp_path / "k.csv"
    res = CliRunner().invoke(main, ["export", str(cut), "-o", str(out)])
    assert res.exit_code == 4  # the keys before the damage are written
    assert 1 < len(out.read_text().splitlines()) < 585


# -- rdbtools' own CSV ------------------------------------------------------------------------

rdbtools = pytest.importorskip("rdbtools")
COLUMNS = HEADER.split(",")


def _rdbtools_csv(path: str) -> list[dict]:
    """rdbtools' `rdb -c memory` CSV of a dump, as its command line writes it (rows as dicts)."""
    out = subprocess.run(
        [sys.executable, "-c", "from rdbtools.cli.rdb import main; main()", "-c", "memory", path],
        capture_output=True,
        check=True,
    ).stdout
    text = out.decode("latin-1")
    assert text.startswith(HEADER + "\n")
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("path", V9, ids=[Path(p).parts[-3] for p in V9])
def test_the_rdbtools_columns_agree_with_rdbtools(path, tmp_path):
    out = tmp_path / "ours.csv"
    code, _, err = _export(path, "-o", str(out), "--columns", "rdbtools")
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER
    ours = list(csv.DictReader(io.StringIO(text)))
    theirs = _rdbtools_csv(path)

    # rdbtools writes the key's bytes raw and unquoted: keys that are not UTF-8, or hold a
    # comma or a line break, cannot be compared (docs/export.md); every other key is.
    def comparable(key: str) -> bool:
        return not any(c in key for c in ',\n\r"\\')

    theirs_by = {(r["database"], r["key"].encode("latin-1")): r for r in theirs}
    mine = [r for r in ours if comparable(r["key"])]
    assert len(mine) > 500
    differ = {c: [] for c in COLUMNS}
    for r in mine:
        t = dict(theirs_by.pop((r["database"], r["key"].encode("utf-8"))))
        t["key"] = t["key"].encode("latin-1").decode("utf-8")  # its bytes, read as ours
        for c in COLUMNS:
            if r[c] != t[c]:
                differ[c].append((r["type"], r["encoding"], r["key"], r[c], t[c]))
    # Every comparable key is in both files; what rdbtools has left is its rows of the other
    # keys (a name with a line break is two of its rows, with a comma more columns)
    assert len(theirs_by) <= 2 * (len(ours) - len(mine))
    for c in ("database", "type", "key", "encoding", "expiry"):
        assert differ[c] == [], c
    # num_elements: only the two int32 edges of the strings' integers (docs/export.md)
    assert (
        sorted(k for _, _, k, _, _ in differ["num_elements"])
        == sorted(["str:int:int32:min", "str:int:int32:over"])
        or not differ["num_elements"]
    )
    # len_largest_element: those two, streams (rdbtools: its largest listpack node), and
    # collections whose longest element is an integer (rdbtools counts 8)
    for typ, _enc, key, got, want in differ["len_largest_element"]:
        if typ == "stream" or key.startswith("str:int:int32:"):
            continue
        assert typ in ("list", "hash", "sortedset", "set") and want == "8", (key, got, want)
    assert len(differ["len_largest_element"]) < len(mine) // 10
    # size_in_bytes: rdbscan's estimate (MEMORY USAGE), rdbtools' own model: not compared
    ok = sum(1 for r in mine if r["size_in_bytes"].isdigit() and int(r["size_in_bytes"]) > 0)
    assert ok == len(mine)


def test_a_reader_that_stops_early_is_not_an_error(db):
    """`rdbscan export DB -o - | head -1`: exit 0 and nothing on standard error, as the other
    commands end on a closed pipe."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdbscan", "export", db, "-o", "-", "-f", "jsonl"]
        + ["--columns", "all"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert json.loads(proc.stdout.readline())["key"]
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait() == 0, err
    assert err == b""
