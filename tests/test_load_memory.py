"""Peak memory of a load, and of a report, of many small keys (issue 28, docs/benchmarks.md).

A dump of 1,000,000 small strings (as Redis's `DEBUG POPULATE` writes them) is loaded, and
reported on, by the command line in a child process; its peak RSS (VmHWM, of the child alone)
must stay under a bound with a margin.  A load holds the row batches in flight (rows.BATCH_ROWS,
the writer's queue) and the loader's DuckDB buffer pool (store.LOAD_MEMORY_LIMIT), however many
keys the dump has; the report then runs its queries in the same process, within DuckDB's
memory limit for a database (connections.DATABASE_MEMORY_LIMIT).  Measured on this dump: load
155-158 MiB, report 157-158 MiB since the compiled batch reaches DuckDB without pyarrow, whose
libraries alone are 25 MiB resident (the bound fails if such a load imports it again; the
pure-Python path, which needs it, has the bound of before).  Before: 187-190 and 190-193 MiB;
191-192 and 195-197 while a local path still imported fsspec; 210 and 214 MiB with batches of
65,536 rows; before issue 28's memory work: 214-216 and 221-226 MiB; one INSERT thread and a
24 MB pool gave 185 and 186-189 MiB but 1.75x the load's wall time, given back.  The child runs
cli.main.main, not the console script, so Arrow keeps its default pool here (cli.run sets the
system allocator: a few MiB less).
No time is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import hostile  # tests/hostile.py: its child that records its own peak RSS
import pytest
import rdbwriter as W
from common import ROOT

from rdbscan.db import rows

KEYS = 1_000_000
LOAD_MAX_MIB = REPORT_MAX_MIB = 180 if rows.compiled is not None else 210


def _populate(path: Path, n: int) -> Path:
    """db 0 holding key:0 .. key:n-1 = value:0 .. (DEBUG POPULATE's names and values)."""
    body = b"".join(W.key(0, b"key:%d" % i, W.string(b"value:%d" % i)) for i in range(n))
    path.write_bytes(W.rdb(b"\xfe\x00" + body))
    return path


def _peak_mib(tmp_path: Path, *args: str) -> float:
    hwm = tmp_path / "peak_rss"
    proc = subprocess.run(
        [sys.executable, "-c", hostile._CHILD, str(hwm), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return int(hwm.read_text()) / 1024


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_load_of_many_small_keys_stays_under_its_memory_bound(tmp_path):
    dump = _populate(tmp_path / "pop.rdb", KEYS)
    db = tmp_path / "pop.duckdb"
    peak = _peak_mib(tmp_path, "load", "-q", str(dump), "-o", str(db))
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*), max(key) FROM keys").fetchone() == (
            KEYS,
            "key:999999",
        )
    finally:
        con.close()
    assert peak < LOAD_MAX_MIB, f"peak RSS of the load {peak:.0f} MiB"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_report_of_many_small_keys_stays_under_its_memory_bound(tmp_path):
    dump = _populate(tmp_path / "pop.rdb", KEYS)
    out = tmp_path / "report.json"
    peak = _peak_mib(tmp_path, "report", "-q", str(dump), "-f", "json", "-o", str(out))
    report = json.loads(out.read_text())
    assert report["overview"]["keys"] == KEYS
    assert peak < REPORT_MAX_MIB, f"peak RSS of the report {peak:.0f} MiB"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_schema_of_a_family_of_a_million_keys_fits_the_default_limit(tmp_path):
    """`rdbscan schema` of one family of a million keys: its percentiles were quantile_disc, which
    holds every value of its family (seven of them: out of memory at 48 MB, exit 8; pop5m's five
    million failed at 128 MB); they are now read from counts per value."""
    dump = _populate(tmp_path / "pop.rdb", KEYS)
    out = tmp_path / "schema.json"
    peak = _peak_mib(tmp_path, "schema", "-q", str(dump), "-f", "json", "-o", str(out))
    (family,) = json.loads(out.read_text())["families"]
    observed = family["observed"]
    assert (family["pattern"], observed["keys"]) == ("key:{id}", KEYS)
    # the values are value:0 .. value:999999: 900,000 of them 12 bytes long, the shortest 7
    assert observed["length"] == [12, 12, 12]
    assert observed["example"] == "key:0"
    assert peak < REPORT_MAX_MIB, f"peak RSS of the schema {peak:.0f} MiB"


@pytest.mark.slow
@pytest.mark.subprocess
def test_an_export_of_a_million_keys_fits_the_default_limit(tmp_path):
    """`rdbscan export` of a million keys in rdbtools' columns: the sort into file order needs
    more than a database's 48 MB (it ended with exit 8); a file is written again with more room,
    standard output gets that room from the start."""
    dump = _populate(tmp_path / "pop.rdb", KEYS)
    out = tmp_path / "keys.jsonl"
    peak = _peak_mib(tmp_path, "export", str(dump), "--columns", "rdbtools", "-o", str(out))
    with out.open() as f:
        first = json.loads(next(f))
        rest = sum(1 for _ in f)
    assert first == {
        "database": 0,
        "type": "string",
        "key": "key:0",
        "size_in_bytes": 64,
        "encoding": "string",
        "num_elements": 7,
        "len_largest_element": 7,
        "expiry": None,
    }
    assert rest == KEYS - 1
    # the retry's room on top of the load's: 181 MiB alone, 215 MiB beside the other tests
    # (then at 128 MB); the old code ended with exit 8
    assert peak < 260, f"peak RSS of the export {peak:.0f} MiB"
    p = subprocess.run(
        [sys.executable, "-m", "rdbscan", "export", str(dump), "--columns", "all", "-o", "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == KEYS + 1 and lines[1].split(",")[2] == "key:0"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_migrate_of_a_million_one_key_families_stays_small(tmp_path):
    """`rdbscan migrate` over a million keys that are each a family of their own
    (`rl:10-a-b-c`: hyphens, so no `{ip}`), onto two servers: every family came back to Python
    with its list of file offsets (15.7 s, 1,066 MiB; two million: out of memory); now each
    target's top ten come out of the query (2.0 s, 370 MiB)."""
    dump = tmp_path / "rl.rdb"
    body = b"".join(
        W.key(0, b"rl:10-%d-%d-%d" % (i >> 16, (i >> 8) & 255, i & 255), W.string(b"1"))
        for i in range(KEYS)
    )
    dump.write_bytes(W.rdb(b"\xfe\x00" + body))
    out = tmp_path / "migrate.json"
    peak = _peak_mib(
        tmp_path, "migrate", "-q", str(dump), "--to", "valkey-9.1", "--to", "redis-8.6",
        "-f", "json", "-o", str(out),
    )  # fmt: skip
    report = json.loads(out.read_text())
    for target in report["dumps"][0]["targets"]:
        assert target["keys"] == KEYS and target["by_type"][0]["keys"] == KEYS
        families = target["families"]
        assert len(families) == 10 and {f["keys"] for f in families} == {1}
        order = [
            (-abs(f["memory_bytes"] - f["today_bytes"]), -f["memory_bytes"], f["family"])
            for f in families
        ]
        assert order == sorted(order)
    assert peak < 450, f"peak RSS of the migrate {peak:.0f} MiB"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_trend_over_two_snapshots_of_a_million_different_families_fits(tmp_path):
    """`rdbscan trend` over two snapshots of an instance whose keys are each a family of their
    own (`rl:10-a-b-c`: hyphens, so no `{ip}`) and all differ from one snapshot to the next (rate
    limits, a day apart): the fit of every family went through a grid of every family at every
    snapshot, a join that ended with exit 8 at the default 128 MB (`--memory-limit 512MB`
    passed); the fit is now two groupings of numbers (diff/queries/_tfit.sql: 3.4 s, 232 MiB)."""
    db = tmp_path / "rl.duckdb"
    for n, ctime in ((0, 1795000000), (1, 1795086400)):  # a day apart
        dump = tmp_path / f"rl{n}.rdb"
        body = b"".join(
            W.key(0, b"rl:10-%d-%d-%d" % (i >> 16, (i >> 8) & 255, i & 255), W.string(b"1"))
            for i in range(n * KEYS, (n + 1) * KEYS)
        )
        dump.write_bytes(W.rdb(b"\xfe\x00" + body, aux={b"ctime": str(ctime).encode()}))
        load = [sys.executable, "-m", "rdbscan", "load", "-q", "--instance", "rl", str(dump)]
        subprocess.run(load + ["-o", str(db)], cwd=ROOT, check=True)
    out = tmp_path / "trend.json"
    peak = _peak_mib(tmp_path, "trend", str(db), "-f", "json", "-o", str(out))
    (inst,) = json.loads(out.read_text())["instances"]
    assert [s["keys"] for s in inst["snapshots"]] == [KEYS, KEYS]
    assert inst["families_total"] == 2 * KEYS
    grow, shrink = inst["families"], inst["shrinking"]

    def index(pattern: str) -> int:  # the i that made the key rl:10-a-b-c
        a, b, c = (int(x) for x in pattern.split("-")[1:])
        return a << 16 | b << 8 | c

    # the ten fastest growers are families of the second snapshot, the ten fastest to shrink of
    # the first: each gained or lost its one key in the day, ties in byte order
    assert len(grow) == len(shrink) == 10
    assert all(index(f["pattern"]) >= KEYS for f in grow)
    assert all(index(f["pattern"]) < KEYS and f["vanished"] for f in shrink)
    assert {f["keys_per_day"] for f in grow} == {1} and {f["keys_per_day"] for f in shrink} == {-1}
    assert {f["memory_per_day"] for f in grow} == {f["last_memory_bytes"] for f in grow}
    assert {f["memory_per_day"] for f in shrink} == {-f["first_memory_bytes"] for f in shrink}
    for listed in (grow, shrink):
        assert [f["pattern"] for f in listed] == sorted(f["pattern"] for f in listed)
    assert peak < 300, f"peak RSS of the trend {peak:.0f} MiB"
