"""`rdbscan load --dask SCHEDULER ... --parquet DIR` (docs/fleet.md) on a local Dask cluster of two
worker processes: the same dataset as a load on one machine, progress and failures per dump,
a failed task retried and then reported, never silently missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from common import run_cli

import rdbscan
from rdbscan.db.outcome import outcome
from rdbscan.db.parquet import Dataset
from rdbscan.fleet.dask import run_tasks
from rdbscan.fleet.load import _settle
from rdbscan.reports.engine.dataset import open_dataset

pytestmark = pytest.mark.network  # a local Dask cluster of two worker processes

distributed = pytest.importorskip("dask.distributed")  # the [dask] extra, part of [test]

ROOT = Path(__file__).parent.parent
SAMPLES = [str(p) for p in sorted((ROOT / "sample_dumps").glob("*.rdb"))]
QUERIES = [
    "SELECT * FROM keys ORDER BY dump_id, file_offset",
    "SELECT * EXCLUDE (parse_seconds, loaded_at) FROM dumps ORDER BY dump_id",
    "SELECT * FROM slot_info ORDER BY ALL",
    "SELECT * FROM db_sizes ORDER BY ALL",
    "SELECT * FROM streams ORDER BY ALL",
    "SELECT * FROM stream_groups ORDER BY ALL",
]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as c:
        with distributed.Client(c) as client:
            yield c, client


def _tables(path: str) -> list:
    con = open_dataset(path)
    try:
        return [con.execute(q).fetchall() for q in QUERIES]
    finally:
        con.close()


@pytest.mark.slow
def test_cluster_load_equals_the_single_machine_load(cluster, tmp_path):
    _, client = cluster
    here, there = str(tmp_path / "here"), str(tmp_path / "there")
    r_here = rdbscan.load_dataset(SAMPLES, here)
    ended = []
    r_there = rdbscan.load_dataset(
        SAMPLES, there, scheduler=client, on_task=lambda p, d, n, o: ended.append((p, d, n))
    )
    assert [(r.dump_id, r.keys, r.error) for r in r_there] == [
        (r.dump_id, r.keys, r.error) for r in r_here
    ]
    assert [r.dump_id for r in r_there] == [1, 2, 3, 4]
    assert sorted(p for p, _, _ in ended) == SAMPLES  # one line per dump as it ends
    assert sorted(d for _, d, _ in ended) == [1, 2, 3, 4] and {n for _, _, n in ended} == {4}
    a, b = _tables(here), _tables(there)
    assert len(a[0]) == sum(r.keys for r in r_here) > 2000
    assert a == b
    assert not (tmp_path / "there" / "_staging").exists()  # written in place


@pytest.mark.slow
def test_cli_dask_with_a_missing_dump(cluster, tmp_path):
    c, _ = cluster
    ds = tmp_path / "ds"
    missing = str(tmp_path / "gone.rdb")
    result = run_cli(
        "load", "--dask", c.scheduler_address, SAMPLES[0], missing, SAMPLES[1], "--parquet", str(ds)
    )
    assert result.exit_code == 6, result.output
    assert f"{missing}: No such file or directory" in result.output
    assert "[3/3]" in result.output  # per-dump progress lines
    con = open_dataset(str(ds))
    try:
        assert con.execute("SELECT dump_id, keys FROM dumps ORDER BY 1").fetchall() == [
            (1, 561),
            (3, 722),
        ]
    finally:
        con.close()
    # the same dumps again: refused by the client, which settles identity in path order
    again = run_cli("load", "--dask", c.scheduler_address, SAMPLES[0], "--parquet", str(ds))
    assert again.exit_code == 2 and "already loaded" in again.output


def _flaky(tries: Path, fails: int):
    """stage_dump, but the task of valkey-8.0.1.rdb raises its first `fails` runs (counted in
    files in `tries`: each run may be on another worker process)."""

    def flaky(path, root, dump_id, options):  # sent to the workers by value (cloudpickle)
        import os

        from rdbscan.fleet.load import stage_dump as real

        if path.endswith("valkey-8.0.1.rdb"):
            runs = len(os.listdir(str(tries)))
            open(os.path.join(str(tries), f"run-{runs}-{os.getpid()}"), "w").close()
            if runs < fails:
                raise RuntimeError("worker lost its disk")
        return real(path, root, dump_id, options)

    return flaky


def test_a_failing_task_is_retried_then_reported(cluster, tmp_path):
    _, client = cluster
    tries = tmp_path / "tries"
    tries.mkdir()
    ds = str(tmp_path / "ds")
    dataset = Dataset(ds, create=True)
    try:
        tasks = [(p, ds, i + 1, {"snapshot_id": 1}) for i, p in enumerate(SAMPLES)]
        outcomes = run_tasks(_flaky(tries, 99), tasks, client, retries=2)
        assert [o[0] for o in outcomes] == ["ok", "ok", "ok", "error"]
        assert "after 2 retries: RuntimeError: worker lost its disk" in outcomes[3][1]
        assert len(list(tries.iterdir())) == 3  # the first run and two retries
        results = [_settle(dataset, t[0], t[2], o, "refuse") for t, o in zip(tasks, outcomes)]
        assert results[3].error == f"{SAMPLES[3]}: not loaded: {outcomes[3][1]}"
        said = outcome(results)
        assert said.code == 6 and any(SAMPLES[3] in e for e in said.errors)
        assert [r["dump_id"] for r in dataset.dumps()] == [1, 2, 3]
    finally:
        dataset.close()


@pytest.mark.slow
@pytest.mark.parametrize("retries", [None, 0, 3])
def test_cli_retries(cluster, tmp_path, monkeypatch, retries):
    """`load --dask ... --retries N`: a task that fails N times is loaded on its last run; one
    that fails N + 1 times is the dump's error line, exit 6 (default N: 1)."""
    c, _ = cluster
    n = 1 if retries is None else retries
    option = [] if retries is None else ["--retries", str(retries)]
    for fails, code in ((n, 0), (n + 1, 6)):
        tries = tmp_path / f"tries-{fails}"
        tries.mkdir()
        monkeypatch.setattr("rdbscan.fleet.load.stage_dump", _flaky(tries, fails))
        ds = str(tmp_path / f"ds-{fails}")
        args = ["load", "--dask", c.scheduler_address, *option, SAMPLES[1], SAMPLES[3]]
        result = run_cli(*args, "--parquet", ds)
        assert result.exit_code == code, result.output
        assert len(list(tries.iterdir())) == n + 1  # the first run and N retries at most
        con = open_dataset(ds)
        try:
            loaded = con.execute("SELECT dump_id, keys FROM dumps ORDER BY 1").fetchall()
        finally:
            con.close()
        if code == 0:
            assert loaded == [(1, 722), (2, 562)]
        else:
            assert loaded == [(1, 722)]
            assert f"after {n} retries: RuntimeError: worker lost its disk" in result.output
            assert not list(Path(ds).glob("*/*/*/dump_id=2"))  # what its runs wrote is gone


def test_retries_without_dask_is_a_usage_error(tmp_path):
    result = run_cli("load", SAMPLES[0], "--retries", "2", "--parquet", str(tmp_path / "d"))
    assert result.exit_code == 2 and "--retries goes with --dask" in result.output


@pytest.mark.slow
def test_dask_missing_is_one_line_exit_2(tmp_path, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_dask(name, *args, **kwargs):
        if name.startswith("dask"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_dask)
    result = run_cli(
        "load", "--dask", "tcp://127.0.0.1:1", SAMPLES[0], "--parquet", str(tmp_path / "d")
    )
    assert result.exit_code == 2
    assert "pip install 'rdbscan[dask]'" in result.output
