"""`rdbscan load --parquet DIR` and reports over the dataset (docs/fleet.md): the dataset holds
the same rows as a database loaded from the same dumps, the report over it is the database's
report, and nothing of a user's is overwritten."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from common import FIXTURES, run_cli
from killed_writer import killed_load

import rdbscan
from rdbscan.db.parquet import Dataset
from rdbscan.reports.engine.dataset import open_dataset

ROOT = Path(__file__).parent.parent
SAMPLES = [str(p) for p in sorted((ROOT / "sample_dumps").glob("*.rdb"))]
CORRUPT = str(
    FIXTURES / "public" / "redis-tests-assets" / "tests" / "assets" / "corrupt_ziplist.rdb"
)
QUERIES = [
    "SELECT * FROM keys ORDER BY dump_id, file_offset",
    "SELECT * EXCLUDE (parse_seconds, loaded_at) FROM dumps ORDER BY dump_id",
    "SELECT * FROM slot_info ORDER BY ALL",
    "SELECT * FROM db_sizes ORDER BY ALL",
    "SELECT * FROM streams ORDER BY ALL",
    "SELECT * FROM stream_groups ORDER BY ALL",
]
# What differs between two loads of the same dumps: how long the parse took, when it ran.
LOAD_TIMINGS = {
    "parse_seconds",
    "bytes_per_second",
    "keys_per_second",
    "generated_at",
    "report_seconds",
}


def _rows(con) -> list:
    return [con.execute(q).fetchall() for q in QUERIES]


def _columns(con, table: str) -> list:
    return [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]


def _strip(value, drop=LOAD_TIMINGS):
    if isinstance(value, dict):
        return {k: _strip(v, drop) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v, drop) for v in value]
    return value


@pytest.mark.slow
def test_dataset_holds_the_database_rows(tmp_path):
    dumps = SAMPLES + [CORRUPT]
    db, ds = str(tmp_path / "db.duckdb"), str(tmp_path / "ds")
    r_db = rdbscan.load(dumps, db, jobs=1)
    r_ds = rdbscan.load_dataset(dumps, ds)
    assert [(r.dump_id, r.keys, r.error) for r in r_ds] == [
        (r.dump_id, r.keys, r.error) for r in r_db
    ]
    assert r_ds[-1].error_kind == "corrupt" and not r_ds[-1].complete
    con_db = duckdb.connect(db, read_only=True)
    con_ds = open_dataset(ds)
    try:
        for table in ("keys", "dumps", "slot_info", "db_sizes", "streams", "stream_groups"):
            assert _columns(con_ds, table) == _columns(con_db, table), table
        a, b = _rows(con_db), _rows(con_ds)
        assert len(a[0]) == sum(r.keys for r in r_db) > 2000 and len(a[1]) == 5
        assert len(a[4]) > 0 and len(a[2]) > 0  # streams and slot-info rows are compared too
        assert a == b
    finally:
        con_db.close()
        con_ds.close()


@pytest.mark.slow
def test_layout_hive_partitions_zstd(tmp_path):
    ds = tmp_path / "ds"
    result = run_cli("load", SAMPLES[1], SAMPLES[2], "--parquet", str(ds), "--instance", "eu/1 a")
    assert result.exit_code == 0, result.output
    part = "instance=eu%2F1%20a/snapshot=1/dump_id=2"
    files = sorted(str(p.relative_to(ds)) for p in ds.rglob("*.parquet"))
    assert f"keys/{part}/part-00000.parquet" in files
    assert f"dumps/{part}/part-00000.parquet" in files
    assert (ds / "_rdbscan_dataset.json").is_file()
    assert not (ds / "_staging").exists()  # written in place, nothing staged
    meta = pq.ParquetFile(ds / "keys" / part / "part-00000.parquet")
    assert meta.metadata.row_group(0).column(0).compression == "ZSTD"
    # the partition columns are in the path only (as Spark and pyarrow expect them)
    assert "dump_id" not in meta.schema_arrow.names and "key_bytes" in meta.schema_arrow.names
    assert "instance" not in pq.read_schema(ds / "dumps" / part / "part-00000.parquet").names
    con = duckdb.connect()
    rows = con.execute(
        "SELECT instance, snapshot, dump_id, count(*) FROM read_parquet(?, hive_partitioning = true) "
        "GROUP BY ALL ORDER BY dump_id",
        [str(ds / "keys" / "*" / "*" / "*" / "*.parquet")],
    ).fetchall()
    assert rows == [("eu/1 a", 1, 1, 722), ("eu/1 a", 1, 2, 584)]
    # a dump loaded without --instance: Hive's NULL partition, read back as NULL
    assert run_cli("load", SAMPLES[0], "--parquet", str(ds)).exit_code == 0
    con_ds = open_dataset(str(ds))
    assert con_ds.execute(
        "SELECT dump_id, instance, snapshot_id FROM dumps ORDER BY 1"
    ).fetchall() == [
        (1, "eu/1 a", 1),
        (2, "eu/1 a", 1),
        (3, None, 3),
    ]
    con_ds.close()


@pytest.mark.slow
@pytest.mark.parametrize("dump", SAMPLES, ids=lambda p: Path(p).name)
def test_report_over_dataset_is_the_database_report(tmp_path, dump):
    db, ds = str(tmp_path / "db.duckdb"), str(tmp_path / "ds")
    assert run_cli("load", dump, "-q", "-o", db).exit_code == 0
    assert run_cli("load", dump, "-q", "--parquet", ds).exit_code == 0
    from_db = run_cli("report", db, "-q", "--format", "json", "--top", "50")
    from_ds = run_cli("report", ds, "-q", "--format", "json", "--top", "50")
    assert from_db.exit_code == from_ds.exit_code == 0, from_ds.output
    a, b = json.loads(from_db.stdout), json.loads(from_ds.stdout)
    assert a["overview"]["keys"] > 500
    assert _strip(a) == _strip(b)


@pytest.mark.slow
def test_report_over_several_dumps_loaded_in_parallel(tmp_path):
    db, ds = str(tmp_path / "db.duckdb"), str(tmp_path / "ds")
    assert run_cli("load", *SAMPLES, "-q", "-j", "1", "-o", db).exit_code == 0
    assert run_cli("load", *SAMPLES, "-q", "-j", "2", "--parquet", ds).exit_code == 0
    a = json.loads(run_cli("report", db, "-q", "--format", "json").stdout)
    b = json.loads(run_cli("report", ds, "-q", "--format", "json").stdout)
    # Documented ties (docs/queries.md): an example is one of the keys of equal standing; which
    # one follows the order DuckDB's threads meet them (a largest key is the first in byte order)
    ties = LOAD_TIMINGS | {"example"}
    assert len(a["overview"]["dumps"]) == 4
    assert _strip(a, ties) == _strip(b, ties)


def test_second_load_refused_then_replaced(tmp_path):
    ds = tmp_path / "ds"
    assert run_cli("load", SAMPLES[2], "--parquet", str(ds)).exit_code == 0
    before = sorted(p for p in ds.rglob("*") if p.is_file())
    again = run_cli("load", SAMPLES[2], "--parquet", str(ds))
    assert again.exit_code == 2
    assert "already loaded in" in again.output and "as dump 1" in again.output
    assert sorted(p for p in ds.rglob("*") if p.is_file()) == before
    replaced = run_cli("load", SAMPLES[2], "--replace", "--parquet", str(ds))
    assert replaced.exit_code == 0
    con = open_dataset(str(ds))
    try:
        assert con.execute("SELECT dump_id, keys FROM dumps").fetchall() == [(3, 584)]
        assert con.execute("SELECT DISTINCT dump_id FROM keys").fetchall() == [(3,)]
    finally:
        con.close()
    assert not list(ds.glob("*/*/*/dump_id=1"))


def test_never_writes_into_a_users_directory(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep")
    result = run_cli("load", SAMPLES[0], "--parquet", str(mine))
    assert result.exit_code == 7
    assert "not an rdbscan dataset" in result.output
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    afile = tmp_path / "file.parquet"
    afile.write_bytes(b"x")
    assert run_cli("load", SAMPLES[0], "--parquet", str(afile)).exit_code == 7
    assert afile.read_bytes() == b"x"


@pytest.mark.slow
def test_missing_input_leaves_no_partition(tmp_path):
    ds = tmp_path / "ds"
    result = run_cli("load", str(tmp_path / "nope.rdb"), SAMPLES[0], "--parquet", str(ds))
    assert result.exit_code == 6
    con = open_dataset(str(ds))
    try:
        assert con.execute("SELECT dump_id, keys FROM dumps").fetchall() == [(2, 561)]
    finally:
        con.close()
    assert not list(ds.glob("*/*/*/dump_id=1"))
    assert not (ds / "_staging").exists()


def _failing(monkeypatch, where: str, error: BaseException) -> None:
    """Batches of 100 key rows, and the second of them to reach `where` ("write": the `keys`
    Parquet file, "query": the `keys` columns' query) raises `error`."""
    from rdbscan.db import parquet as P

    monkeypatch.setattr(P.ParquetStore, "batch_rows", 100)
    name, owner = ("write", P._PartFiles) if where == "write" else ("_arrow_table", P)
    real, calls = getattr(owner, name), []

    def failing(*args):
        if where == "query" or "/keys/" in args[0].folder:  # not the streams' files
            calls.append(1)
            if len(calls) == 2:
                raise error
        return real(*args)

    monkeypatch.setattr(owner, name, failing)


@pytest.mark.parametrize(
    "where,error",
    [
        ("write", OSError(28, "No space left on device")),
        ("query", RuntimeError("the query broke")),
    ],
)
def test_a_failure_writing_the_keys_is_raised_with_its_own_message(
    tmp_path, monkeypatch, where, error
):
    """A failure of the `keys` file or of its query (the parse, the query and the file run on
    three threads) stops the load with that error, not "the Parquet writer thread stopped",
    however long the parse waited on the queue; the dump's partial files are discarded and no
    dump becomes visible (the command line prints the error on one line)."""
    ds = tmp_path / "ds"
    _failing(monkeypatch, where, error)
    with pytest.raises(type(error), match=f"^{re.escape(str(error))}$"):
        rdbscan.load_dataset([SAMPLES[1]], str(ds))
    assert not list(ds.glob("*/*/*/dump_id=1/*.parquet"))
    monkeypatch.undo()
    (result,) = rdbscan.load_dataset([SAMPLES[1]], str(ds))
    assert (result.complete, result.keys) == (True, 722)


def test_output_options_usage_errors(tmp_path):
    assert run_cli("load", SAMPLES[0]).exit_code == 2
    both = run_cli("load", SAMPLES[0], "-o", str(tmp_path / "x.duckdb"), "--parquet", str(tmp_path))
    assert both.exit_code == 2 and "not both" in both.output
    dask = run_cli("load", SAMPLES[0], "-o", str(tmp_path / "x.duckdb"), "--dask", "tcp://x:1")
    assert dask.exit_code == 2 and "--parquet" in dask.output


@pytest.mark.slow
def test_diff_over_a_dataset_is_the_database_diff(tmp_path):
    db, ds = str(tmp_path / "db.duckdb"), str(tmp_path / "ds")
    pair = [SAMPLES[2], SAMPLES[3]]  # redis 7.4 and valkey 8.0 saved from the same script
    assert run_cli("load", *pair, "-q", "-j", "1", "-o", db).exit_code == 0
    assert run_cli("load", *pair, "-q", "--parquet", ds).exit_code == 0
    a = run_cli("diff", f"{db}#1", f"{db}#2", "--format", "json")
    b = run_cli("diff", f"{ds}#1", f"{ds}#2", "--format", "json")
    assert a.exit_code == b.exit_code == 0, b.output
    da, dbb = json.loads(a.stdout), json.loads(b.stdout)
    assert dbb["old"]["label"] == f"{ds}#1" and dbb["new"]["database"] == ds
    drop = {"generated_at", "diff_seconds", "label", "database"}
    assert da["totals"] and _strip(da, drop) == _strip(dbb, drop)


def test_sql_on_a_dataset(tmp_path):
    ds = str(tmp_path / "ds")
    assert run_cli("load", SAMPLES[2], "-q", "--parquet", ds).exit_code == 0
    result = run_cli(
        "sql",
        ds,
        "SELECT count(*) AS n, sum(memory_bytes) = (SELECT memory_bytes FROM dumps) "
        "AS same FROM keys",
        "--format",
        "csv",
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["n,same", "584,True"]


def _files(ds: Path) -> dict:
    return {str(p.relative_to(ds)): p.read_bytes() for p in sorted(ds.rglob("*")) if p.is_file()}


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("where", ["_PartFiles.close", "Dataset.publish"])
def test_a_killed_writer_leaves_no_visible_dump(tmp_path, where):
    """Killed while its `keys` file is half written (no Parquet footer yet), or with every file
    written but the `dumps` one (the commit mark): readers do not see the dump (nor open its
    files); the next load removes them, and the lock died with the process."""
    db, ds = str(tmp_path / "db.duckdb"), tmp_path / "ds"
    assert run_cli("load", SAMPLES[0], "-q", "-o", db).exit_code == 0
    assert run_cli("load", SAMPLES[0], "-q", "--parquet", str(ds)).exit_code == 0
    killed_load(where, SAMPLES[1], "--parquet", str(ds))
    left = sorted(str(p.relative_to(ds)) for p in ds.glob("*/*/*/dump_id=2/*"))
    assert "keys/instance=__HIVE_DEFAULT_PARTITION__/snapshot=2/dump_id=2/part-00000.parquet" in (
        left
    )
    assert not [p for p in left if p.startswith("dumps/") and p.endswith(".parquet")]
    con_db, con_ds = duckdb.connect(db, read_only=True), open_dataset(str(ds))
    try:
        assert _rows(con_ds) == _rows(con_db)  # dump 1 only: no key of dump 2 counted
    finally:
        con_db.close()
        con_ds.close()
    report = run_cli("report", str(ds), "-q", "--format", "json")
    assert report.exit_code == 0 and json.loads(report.stdout)["overview"]["keys"] == 561
    again = run_cli("load", SAMPLES[1], "-q", "--parquet", str(ds))
    assert again.exit_code == 0, again.output
    assert not list(ds.glob("*/*/*/dump_id=2"))  # the killed writer's files are gone
    con = open_dataset(str(ds))
    try:
        assert con.execute("SELECT dump_id, keys FROM dumps ORDER BY 1").fetchall() == [
            (1, 561),
            (3, 722),
        ]
        assert con.execute(
            "SELECT dump_id, count(*) FROM keys GROUP BY 1 ORDER BY 1"
        ).fetchall() == [(1, 561), (3, 722)]
    finally:
        con.close()


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_replace_killed_before_removing_the_old_dump_counts_once(tmp_path):
    """--replace commits the new dump, then removes the old one: killed in between, the
    dataset holds two dumps of one fingerprint; readers count the later one only, and the next
    load removes the earlier."""
    ds = tmp_path / "ds"
    assert run_cli("load", SAMPLES[2], "-q", "--parquet", str(ds)).exit_code == 0
    killed_load("Dataset.remove_dump", SAMPLES[2], "--replace", "--parquet", str(ds))
    assert list(ds.glob("dumps/*/*/dump_id=1/*.parquet")) and list(
        ds.glob("dumps/*/*/dump_id=2/*.parquet")
    )
    con = open_dataset(str(ds))
    try:
        assert con.execute("SELECT dump_id, keys FROM dumps").fetchall() == [(2, 584)]
        assert con.execute("SELECT dump_id, count(*) FROM keys GROUP BY 1").fetchall() == [(2, 584)]
    finally:
        con.close()
    assert run_cli("load", SAMPLES[0], "-q", "--parquet", str(ds)).exit_code == 0
    assert not list(ds.glob("*/*/*/dump_id=1"))


def test_a_second_writer_is_refused_and_writes_nothing(tmp_path):
    """One writer per dataset: while a load holds the dataset's lock (here: this test), another
    load is refused with one line (exit 7, as for a database another process holds)."""
    ds = tmp_path / "ds"
    assert run_cli("load", SAMPLES[0], "-q", "--parquet", str(ds)).exit_code == 0
    writer = Dataset(str(ds), create=True)  # holds the lock, as a running load does
    before = _files(ds)
    try:
        second = run_cli("load", SAMPLES[1], "--parquet", str(ds))
        assert second.exit_code == 7, second.output
        lines = second.output.strip().splitlines()
        assert len(lines) == 1 and "another process holds it" in lines[0], second.output
        assert f"pid {os.getpid()} on " in lines[0]
        assert _files(ds) == before
        fresh = tmp_path / "fresh"  # a dataset being created is locked as well
        first = Dataset(str(fresh), create=True)
        try:
            refused = run_cli("load", SAMPLES[1], "-q", "--parquet", str(fresh))
            assert refused.exit_code == 7, refused.output
        finally:
            first.close()
    finally:
        writer.close()
    assert run_cli("load", SAMPLES[1], "-q", "--parquet", str(ds)).exit_code == 0


def test_the_dumps_rows_are_the_files_rows_older_files_too(tmp_path):
    """Dataset's `dumps` rows (read by DuckDB, not pyarrow) are the files' rows as pyarrow reads
    them, plus the partition columns; a file written before a column was added reads that
    column as None, as the view `dumps` shows it NULL."""
    ds = str(tmp_path / "ds")
    rdbscan.load_dataset(SAMPLES[:2], ds)
    dataset = Dataset(ds)
    files = sorted(Path(ds).glob("dumps/*/*/*/*.parquet"))
    assert len(files) == 2
    got = {r["dump_id"]: r for r in dataset.dumps()}
    assert sorted(got) == [1, 2]
    for f in files:
        want = pq.ParquetFile(f).read().to_pylist()[0]
        row = dict(got[int(f.parent.name.split("=")[1])])
        # no --instance: Hive's name for NULL in the path, None in the row
        assert f.parent.parent.parent.name == "instance=__HIVE_DEFAULT_PARTITION__"
        assert row.pop("instance") is None
        row.pop("dump_id")
        maps = {"aux", "cut"}
        assert {k: v for k, v in row.items() if k not in maps} == {
            k: v for k, v in want.items() if k not in maps
        }
        for k in maps:
            assert row[k] == dict(want[k] or [])
    # an older file: the same row without `filtered_keys`, a column added later
    older = Path(ds) / "older" / files[0].relative_to(Path(ds) / "dumps")  # where no glob looks
    older.parent.mkdir(parents=True)
    pq.write_table(pq.read_table(files[0]).drop_columns(["filtered_keys"]), older)
    assert "filtered_keys" not in pq.read_schema(older).names
    first, old = dataset._read_dumps([str(files[0]), str(older)])
    assert old["filtered_keys"] is None
    assert {k: v for k, v in old.items() if k != "filtered_keys"} == {
        k: v for k, v in first.items() if k != "filtered_keys"
    }
