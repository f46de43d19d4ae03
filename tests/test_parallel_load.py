"""`rdbscan load --jobs N`: several dumps in worker processes give the same database as a
sequential load (same dump_ids, rows, errors), damaged dumps included."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from common import FIXTURES, run_cli

from rdbscan import load

ROOT = Path(__file__).parent.parent
DUMPS = [str(p) for p in sorted((ROOT / "sample_dumps").glob("*.rdb"))] + [
    str(
        FIXTURES
        / "public"
        / "redis-rdb-tools"
        / "tests"
        / "dumps"
        / "ziplist_that_doesnt_compress.rdb"
    ),
    str(FIXTURES / "public" / "redis-tests-assets" / "tests" / "assets" / "corrupt_ziplist.rdb"),
]
QUERIES = [
    "SELECT * FROM keys ORDER BY dump_id, file_offset",
    "SELECT * EXCLUDE (parse_seconds, loaded_at) FROM dumps ORDER BY dump_id",
    "SELECT * FROM slot_info ORDER BY ALL",
    "SELECT * FROM db_sizes ORDER BY ALL",
    "SELECT * FROM streams ORDER BY ALL",
    "SELECT * FROM stream_groups ORDER BY ALL",
]


def _tables(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return [con.execute(q).fetchall() for q in QUERIES]
    finally:
        con.close()


@pytest.mark.slow
def test_parallel_load_equals_sequential(tmp_path):
    for d in DUMPS:
        assert Path(d).exists(), d
    seq, par = str(tmp_path / "seq.duckdb"), str(tmp_path / "par.duckdb")
    r_seq = load(DUMPS, seq, jobs=1)
    r_par = load(DUMPS, par, jobs=2)
    assert [(r.dump_id, r.keys, r.error) for r in r_par] == [
        (r.dump_id, r.keys, r.error) for r in r_seq
    ]
    assert [r.dump_id for r in r_par] == [1, 2, 3, 4, 5, 6]
    assert r_par[-1].error_kind == "corrupt" and r_par[-1].traceback_text
    a, b = _tables(seq), _tables(par)
    assert len(a[0]) > 2000 and len(a[1]) == 6
    assert a == b
    # the worker databases are gone
    assert not list(tmp_path.glob(".rdbscan-parts-*"))


@pytest.mark.slow
def test_cli_jobs_exit_code_and_summary(tmp_path):
    db = str(tmp_path / "cli.duckdb")
    p = run_cli("load", *DUMPS, "-o", db, "-j", "2")
    assert p.returncode == 4
    assert "loading 6 dumps, 2 at a time" in p.stderr
    assert "corrupt_ziplist.rdb" in p.stderr and "Traceback" not in p.stderr
    con = duckdb.connect(db, read_only=True)
    assert con.execute("SELECT count(*), count(*) FILTER (complete) FROM dumps").fetchone() == (
        6,
        5,
    )


@pytest.mark.slow
def test_a_file_named_twice_keeps_the_first_id(tmp_path):
    """The same file twice in one parallel load: loaded once, by its first mention, so both name
    dump 1 (existing='reuse') or the second is refused (the default), as in a sequential load;
    the two used to race, and the second mention took dump 1's place when it finished first."""
    big, small = DUMPS[0], DUMPS[1]
    for existing, expect in (
        ("reuse", [(1, False), (2, False), (1, True)]),
        ("refuse", [(1, False), (2, False), (None, False)]),
    ):
        for jobs in (1, 2):
            db = str(tmp_path / f"{existing}{jobs}.duckdb")
            res = load([big, small, big], db, jobs=jobs, existing=existing)
            got = [(r.dump_id if not r.refused else None, r.reused) for r in res]
            assert got == expect, (existing, jobs)
            assert [bool(r.refused) for r in res] == [False, False, existing == "refuse"]
            assert _tables(db)[1][0][0] == 1 and len(_tables(db)[1]) == 2


@pytest.mark.slow
def test_load_each_writes_one_database_per_dump_equal_to_a_load_of_it_alone(tmp_path):
    """db/parallel.load_each (diff's two sides): each dump into a new database of its own, as
    dump 1, the tables a sequential load of that dump alone gives; nothing else is written."""
    from rdbscan.db.parallel import load_each

    pairs = [(DUMPS[0], str(tmp_path / "a.duckdb")), (DUMPS[-1], str(tmp_path / "b.duckdb"))]
    results = load_each(pairs, jobs=2)
    assert [(r.dump_id, r.path) for r in results] == [(1, DUMPS[0]), (1, DUMPS[-1])]
    assert results[0].error is None and results[1].error_kind == "corrupt"
    for (dump, db), result in zip(pairs, results):
        alone = str(tmp_path / f"alone-{Path(db).name}")
        (expected,) = load([dump], alone)
        assert (result.keys, result.error) == (expected.keys, expected.error)
        assert _tables(db) == _tables(alone)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.duckdb",
        "alone-a.duckdb",
        "alone-b.duckdb",
        "b.duckdb",
    ]


@pytest.mark.slow
def test_a_worker_that_dies_is_reported_and_replaced():
    """run_pool with `lost`: the task of a worker that died is reported, a new worker takes the
    next tasks, the others end normally; without `lost` the death is an error naming its dump."""
    import pool_tasks

    from rdbscan.db.parallel import WorkerLost, run_pool

    def task(i: int) -> tuple:
        return (pool_tasks.tenfold_or_exit, (i,))

    done: dict = {}
    lost: dict = {}
    names = ["a.rdb", "b.rdb", "c.rdb", "d.rdb"]
    run_pool(2, [0, 1, 2, 3], task, done.__setitem__, names, lost=lost.__setitem__)
    assert done == {0: 0, 2: 20, 3: 30}
    assert lost == {1: "the worker process loading it ended unexpectedly (exit code 3)"}
    with pytest.raises(WorkerLost) as e:
        run_pool(1, [0, 1, 2], task, done.__setitem__, names)
    assert str(e.value) == "b.rdb: the worker process loading it ended unexpectedly (exit code 3)"
