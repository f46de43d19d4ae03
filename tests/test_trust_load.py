"""Numbers a user can trust on every run: a second load never doubles a number, an
interrupted or failed load leaves nothing half-written, a dump id is never reused, a database
rdbscan did not create is never touched, and `report` says what `load` says."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from common import run_cli

from rdbscan.db.load import load

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_dumps" / "redis-7.4.1.rdb"
CLUSTER = ROOT / "sample_dumps" / "redis-7.4.1-cluster.rdb"


def _q(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_no_verify_crc_records_unverified_and_exits_0(tmp_path):
    db = tmp_path / "t.duckdb"
    res = run_cli("load", "-q", "--no-verify-crc", SAMPLE, "-o", db)
    assert res.exit_code == 0, res.output
    assert "mismatch" not in res.output
    [(checksum, stored, computed, complete)] = _q(
        db, "SELECT checksum, checksum_stored, checksum_computed, complete FROM dumps"
    )
    assert checksum == "unverified" and complete is True
    assert len(stored) == 16 and computed is None


def test_sql_timezone_aware_result_works(tmp_path):
    db = tmp_path / "t.duckdb"
    assert run_cli("load", "-q", SAMPLE, "-o", db).exit_code == 0
    res = run_cli("sql", db, "SELECT now() > TIMESTAMPTZ '2020-01-01 00:00:00+00' AS later")
    assert res.exit_code == 0, res.output
    assert "True" in res.output


def test_foreign_duckdb_is_refused_untouched(tmp_path):
    theirs = tmp_path / "theirs.duckdb"
    con = duckdb.connect(str(theirs))
    con.execute("CREATE TABLE dumps (id INTEGER, what VARCHAR)")
    con.execute("INSERT INTO dumps VALUES (1, 'my own data')")
    con.close()
    before = theirs.read_bytes()
    for cmd in (["load", "-q", SAMPLE, "-o", theirs], ["report", "-q", SAMPLE, "-o", theirs]):
        res = run_cli(*cmd)
        assert res.returncode == 7, res.stderr  # EXIT_DATABASE: not a database rdbscan wrote
        assert res.stderr.count("\n") == 1 and "rdbscan did not create" in res.stderr
    assert theirs.read_bytes() == before
    assert _q(theirs, "SELECT * FROM dumps") == [(1, "my own data")]
    assert [r[0] for r in _q(theirs, "SELECT table_name FROM information_schema.tables")] == [
        "dumps"
    ]


# --- a second load never doubles a number ---------------------------------------------------


def _counts(db):
    """(dumps, key rows, sum of dumps.keys, key rows without a dumps row)."""
    return _q(
        db,
        "SELECT (SELECT count(*) FROM dumps), (SELECT count(*) FROM key_rows), "
        "(SELECT coalesce(sum(keys), 0) FROM dumps), (SELECT count(*) FROM key_rows "
        "WHERE dump_id NOT IN (SELECT dump_id FROM dumps))",
    )[0]


def _report_json(*args):
    import json

    res = run_cli("report", "-q", "-f", "json", *args)
    doc = json.loads(res.stdout)
    doc.pop("report_seconds", None), doc.pop("generated_at", None)
    for d in doc["overview"]["dumps"]:
        (
            d.pop("parse_seconds", None),
            d.pop("bytes_per_second", None),
            d.pop("keys_per_second", None),
        )
    for k in ("parse_seconds", "bytes_per_second", "keys_per_second"):
        doc["overview"].pop(k, None)
    return res.returncode, res.stderr, doc


SAMPLE_KEYS = 584  # sample_dumps/redis-7.4.1.rdb (test_sample_dump_keys)


def test_sample_dump_keys(tmp_path):
    [res] = load([str(SAMPLE)], str(tmp_path / "k.duckdb"))
    assert res.complete and res.keys == SAMPLE_KEYS


@pytest.mark.slow
def test_report_twice_into_one_database_gives_the_same_report(tmp_path):
    db = tmp_path / "x.duckdb"
    code1, _, first = _report_json(SAMPLE, "-o", db)
    code2, err2, second = _report_json(SAMPLE, "-o", db)
    assert code1 == code2 == 0
    assert "already loaded as dump 1" not in err2  # -q: no summary line
    assert first == second
    assert first["overview"]["keys"] == SAMPLE_KEYS
    assert _counts(db) == (1, SAMPLE_KEYS, SAMPLE_KEYS, 0)


@pytest.mark.slow
def test_report_same_dump_twice_counts_it_once(tmp_path):
    code, _, doc = _report_json(SAMPLE, SAMPLE)
    assert code == 0 and doc["overview"]["keys"] == SAMPLE_KEYS
    copy = tmp_path / "copy.rdb"  # the same dump under another name is the same dump
    shutil.copy(SAMPLE, copy)
    code, _, doc = _report_json(SAMPLE, copy)
    assert code == 0 and doc["overview"]["keys"] == SAMPLE_KEYS
    assert len(doc["overview"]["dumps"]) == 1


@pytest.mark.slow
def test_second_load_is_refused_and_replace_replaces(tmp_path):
    db = tmp_path / "x.duckdb"
    assert run_cli("load", "-q", SAMPLE, "-o", db).returncode == 0
    again = run_cli("load", "-q", SAMPLE, "-o", db)
    assert again.returncode == 2
    assert again.stderr.splitlines() == [
        f"rdbscan: error: {SAMPLE}: already loaded in {db} as dump 1 ({SAMPLE}, "
        + again.stderr.split(f"({SAMPLE}, ", 1)[1].split(")", 1)[0]
        + "); nothing was added (--replace loads it again in its place)"
    ]
    assert _counts(db) == (1, SAMPLE_KEYS, SAMPLE_KEYS, 0)
    rep = run_cli("load", "-q", "--replace", SAMPLE, "-o", db)
    assert rep.returncode == 0, rep.stderr
    assert _counts(db) == (1, SAMPLE_KEYS, SAMPLE_KEYS, 0)
    # A new id, never a reused one: 1 was the first load, 2 the refused one (its rows went).
    assert _q(db, "SELECT dump_id FROM dumps") == [(3,)]
    # One command naming it twice loads it once, in parallel too.
    db2 = tmp_path / "y.duckdb"
    twice = run_cli("load", "-q", "-j", "2", SAMPLE, SAMPLE, "-o", db2)
    assert twice.returncode == 2 and "already loaded" in twice.stderr
    assert _counts(db2) == (1, SAMPLE_KEYS, SAMPLE_KEYS, 0)


@pytest.mark.slow
def test_shards_and_other_snapshots_load_side_by_side(tmp_path):
    db = tmp_path / "c.duckdb"
    res = run_cli("load", "-q", SAMPLE, CLUSTER, "-o", db)
    assert res.returncode == 0, res.stderr
    assert _q(db, "SELECT count(*), count(DISTINCT fingerprint) FROM dumps") == [(2, 2)]
    # The same bytes damaged in the middle are another dump (the computed CRC64 differs).
    data = bytearray(SAMPLE.read_bytes())
    data[len(data) // 2] ^= 0x01
    bad = tmp_path / "bad.rdb"
    bad.write_bytes(bytes(data))
    res = run_cli("load", "-q", bad, "-o", db)
    assert res.returncode in (4, 5) and "already loaded" not in res.stderr
    assert _q(db, "SELECT count(*) FROM dumps") == [(3,)]


@pytest.mark.slow
def test_loads_from_stdin_are_identified_by_content(tmp_path):
    db = tmp_path / "s.duckdb"
    data = SAMPLE.read_bytes()
    first = run_cli("load", "-q", "-", "-o", db, input=data)
    assert first.returncode == 0, first.stderr
    again = run_cli("load", "-q", "-", "-o", db, input=data)
    assert again.returncode == 2 and "already loaded" in again.stderr
    assert _counts(db) == (1, SAMPLE_KEYS, SAMPLE_KEYS, 0)


def _many_keys_dump(n: int) -> bytes:
    import rdbwriter as W

    body = b"\xfe\x00" + b"".join(W.key(0, f"key:{i:07d}", W.string(b"v")) for i in range(n))
    return W.rdb(body, aux={"redis-ver": "7.2.4", "ctime": "1700000000"})


def _existing_database(path) -> None:
    """An rdbscan database that exists before the load under test (a load that commits nothing
    removes a database file it created itself: tests/test_load.py)."""
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE rdbscan_meta (name VARCHAR PRIMARY KEY, value VARCHAR)")
    con.close()


@pytest.mark.backend
@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize(
    "sig, code, line",
    [("SIGINT", 130, "rdbscan: interrupted"), ("SIGTERM", 143, "rdbscan: terminated")],
)
def test_ctrl_c_during_load_leaves_nothing_and_ids_are_not_reused(tmp_path, sig, code, line):
    """A real SIGINT (or SIGTERM, as `kill` and `timeout` send it: it used to kill the load
    where it stood) to `rdbscan load -` while it waits for the rest of its input, after
    several batches of key rows were written: exit 130 (143), no row of that load is left, and
    the next load gets a new dump id."""
    import signal
    import time

    data = _many_keys_dump(150_000)
    db = tmp_path / "i.duckdb"
    _existing_database(db)
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdbscan", "load", "-q", "-", "-o", str(db)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdin.write(data[: len(data) * 3 // 4])  # returns once the loader has read most of it
    proc.stdin.flush()
    # wait until the loader has parsed what it got and blocks reading standard input (Linux:
    # the main thread's current syscall is read(0, ...)); a fixed sleep is too short on a busy
    # machine, and a signal is only seen between the compiled parser's calls
    syscall = f"/proc/{proc.pid}/syscall"
    deadline = time.monotonic() + 200
    while time.monotonic() < deadline:
        try:
            with open(syscall) as fh:
                if fh.read().startswith("0 0x0 "):
                    break
        except OSError:
            break
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(getattr(signal, sig))
    # stdin stays open until the loader has exited: closing it (as communicate() does) would
    # race the signal on a loaded machine and end the input first (a damaged-dump exit 4)
    proc.wait(timeout=240)
    err = proc.stderr.read()
    proc.stdin.close()
    assert proc.returncode == code, err
    assert err.decode().strip().splitlines()[-1] == line
    assert _counts(db) == (0, 0, 0, 0)
    assert _q(db, "SELECT count(*) FROM rdbscan_meta WHERE name LIKE 'loading:%'") == [(0,)]
    full = tmp_path / "full.rdb"
    full.write_bytes(data)
    assert run_cli("load", "-q", full, "-o", db).returncode == 0
    assert _counts(db) == (1, 150_000, 150_000, 0)
    assert _q(db, "SELECT dump_id FROM dumps") == [(2,)]


# --- key rows and the dumps row commit together ---------------------------------------------


@pytest.mark.slow
def test_replication_header_overflow_then_second_load_counts_right(tmp_path):
    """`$<19 digits>` before an RDB on stdin (file_size beyond BIGINT) used to commit key rows
    without a dumps row, and the next load reused the dump id and counted both."""
    db = tmp_path / "o.duckdb"
    data = b"$9999999999999999999\r\n" + SAMPLE.read_bytes()
    res = run_cli("load", "-q", "-", "-o", db, input=data)
    assert "internal error" not in res.stderr
    assert run_cli("load", "-q", CLUSTER, "-o", db).returncode == 0
    dumps, rows, keys, orphans = _counts(db)
    assert orphans == 0 and rows == keys
    assert _q(db, "SELECT count(*) = count(DISTINCT dump_id) FROM dumps") == [(True,)]
    per_dump = _q(
        db,
        "SELECT d.dump_id, d.keys, (SELECT count(*) FROM key_rows k WHERE "
        "k.dump_id = d.dump_id) FROM dumps d ORDER BY 1",
    )
    assert all(k == n for _, k, n in per_dump)
    assert per_dump[-1][1] == _q(db, "SELECT keys FROM dumps ORDER BY dump_id DESC LIMIT 1")[0][0]


def test_a_failure_before_the_dumps_row_keeps_no_key_row(tmp_path, monkeypatch):
    from rdbscan.db import store as store_mod

    db = tmp_path / "f.duckdb"
    _existing_database(db)

    def broken(self, row):
        raise RuntimeError("disk full while writing the dumps row")

    monkeypatch.setattr(store_mod.Store, "write_dump", broken)
    with pytest.raises(RuntimeError):
        load([str(SAMPLE)], str(db))
    monkeypatch.undo()
    assert _counts(db) == (0, 0, 0, 0)
    [res] = load([str(CLUSTER)], str(db))
    assert res.dump_id == 2 and _counts(db)[3] == 0


def test_killed_load_is_removed_by_the_next_open(tmp_path):
    """A load killed outright leaves its rows under a loading mark; the next load removes them."""
    from rdbscan.db.store import Store

    db = tmp_path / "k.duckdb"
    _existing_database(db)
    s = Store(str(db))
    did = s.allocate_dump_ids(1)
    s.begin_load(did)
    s.run("INSERT INTO key_rows (dump_id, db, key) VALUES (?, 0, 'half')", [did])
    s.close()
    [res] = load([str(SAMPLE)], str(db))
    assert res.dump_id == did + 1
    assert _counts(db) == (1, SAMPLE_KEYS, SAMPLE_KEYS, 0)


# --- what is not an RDB, or not there -------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["png", "empty", "directory"])
def test_non_rdb_input_prints_only_the_error(tmp_path, kind):
    path = tmp_path / f"input.{kind}"
    if kind == "png":
        path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(200))
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "directory":
        path.mkdir()
    # not an RDB: 4 (EXIT_DAMAGED); a directory cannot be read as a dump: 6 (EXIT_INPUT)
    code = 6 if kind == "directory" else 4
    rep = run_cli("report", path)
    assert rep.returncode == code, rep.stderr
    assert rep.stdout == ""
    assert len(rep.stderr.splitlines()) == 1 and rep.stderr.startswith("rdbscan: error: ")
    assert str(path) in rep.stderr and "None" not in rep.stderr
    db = tmp_path / "n.duckdb"
    ld = run_cli("load", path, "-o", db)
    assert ld.returncode == code and len(ld.stderr.splitlines()) == 1
    if db.exists():
        assert _counts(db) == (0, 0, 0, 0)


@pytest.mark.slow
def test_report_on_a_database_with_an_incomplete_dump_exits_4(tmp_path):
    data = SAMPLE.read_bytes()
    cut = tmp_path / "cut.rdb"
    cut.write_bytes(data[: len(data) // 2])
    db = tmp_path / "d.duckdb"
    ld = run_cli("load", "-q", SAMPLE, cut, "-o", db)
    assert ld.returncode == 4
    rep = run_cli("report", db)
    assert rep.returncode == 4
    [line] = rep.stderr.splitlines()
    assert line == ld.stderr.splitlines()[-1] and str(cut) in line
    assert "None" not in rep.stdout
    assert "not reached,ok" in rep.stdout.replace(" ", "") or "not reached" in rep.stdout


# --- report says what load says -------------------------------------------------------------


@pytest.mark.backend
@pytest.mark.slow
def test_report_shows_skip_bad_and_exits_as_load(tmp_path):
    from test_damaged import SMALL, _corrupt_one_listpack

    bad, key, _ = _corrupt_one_listpack(SMALL.read_bytes())
    path = tmp_path / "bad.rdb"
    path.write_bytes(bad)
    db = tmp_path / "b.duckdb"
    ld = run_cli("load", "--skip-bad", path, "-o", db)
    assert ld.returncode == 5
    rep = run_cli("report", db)
    assert rep.returncode == 5, rep.stderr
    assert "1 damaged keys skipped (--skip-bad)" in rep.stderr
    assert "1 damaged keys left out" in rep.stdout


@pytest.mark.slow
def test_report_shows_trailing_bytes_as_load_does(tmp_path):
    path = tmp_path / "tail.rdb"
    path.write_bytes(SAMPLE.read_bytes() + b"not part of the RDB\n")
    db = tmp_path / "t.duckdb"
    ld = run_cli("load", "-q", path, "-o", db)
    assert ld.returncode == 0
    warn = f"rdbscan: warning: {path}: 20 bytes follow the RDB's end marker and were not read"
    assert ld.stderr.splitlines() == [warn]
    rep = run_cli("report", "-q", path)
    assert rep.returncode == 0 and rep.stderr.splitlines() == [warn]
    assert "20 bytes not read" in rep.stdout
    rep_db = run_cli("report", db)
    assert rep_db.returncode == 0 and rep_db.stderr.splitlines() == [warn]
    assert "20 bytes not read" in rep_db.stdout


@pytest.mark.slow
def test_report_on_a_database_without_dumps_says_so(tmp_path):
    """A database whose only load was killed (kill -9: nothing of it committed) or emptied, and
    `--dump-id` naming no dump: `report` printed nothing and exited 4."""
    db = tmp_path / "e.duckdb"
    assert run_cli("load", "-q", SAMPLE, "-o", db).returncode == 0
    res = run_cli("report", db, "--dump-id", "7")
    assert (res.returncode, res.stdout, res.stderr) == (
        6,
        "",
        f"rdbscan: error: {db}: holds no dump 7 (its dumps: 1)\n",
    )
    con = duckdb.connect(str(db))
    con.execute("DELETE FROM key_rows")
    con.execute("DELETE FROM dumps")
    con.close()
    res = run_cli("report", db)
    assert (res.returncode, res.stdout, res.stderr) == (
        6,
        "",
        f"rdbscan: error: {db}: holds no dump (an interrupted load leaves none; load one with "
        f"`rdbscan load DUMP -o {db}`)\n",
    )
