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
from click.testing import CliRunner

from rdbscan.cli import main
from rdbscan.load import load

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_dumps" / "redis-7.4.1.rdb"
CLUSTER = ROOT / "sample_dumps" / "redis-7.4.1-cluster.rdb"


def _run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def _cli(*args, **kw):
    """The command as a user runs it (rdbscan.cli.run: one-line errors, exit codes)."""
    return subprocess.run([sys.executable, "-m", "rdbscan", *map(str, args)], capture_output=True,
                          text=True, timeout=300, **kw)


def _q(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_no_verify_crc_records_unverified_and_exits_0(tmp_path):
    db = tmp_path / "t.duckdb"
    res = _run("load", "-q", "--no-verify-crc", SAMPLE, "-o", db)
    assert res.exit_code == 0, res.output
    assert "mismatch" not in res.output
    [(checksum, stored, computed, complete)] = _q(
        db, "SELECT checksum, checksum_stored, checksum_computed, complete FROM dumps")
    assert checksum == "unverified" and complete is True
    assert len(stored) == 16 and computed is None


def test_sql_timezone_aware_result_works(tmp_path):
    db = tmp_path / "t.duckdb"
    assert _run("load", "-q", SAMPLE, "-o", db).exit_code == 0
    res = _run("sql", db, "SELECT now() > TIMESTAMPTZ '2020-01-01 00:00:00+00' AS later")
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
        res = _cli(*cmd)
        assert res.returncode == 2, res.stderr
        assert res.stderr.count("\n") == 1 and "rdbscan did not create" in res.stderr
    assert theirs.read_bytes() == before
    assert _q(theirs, "SELECT * FROM dumps") == [(1, "my own data")]
    assert [r[0] for r in _q(theirs, "SELECT table_name FROM information_schema.tables")] == \
        ["dumps"]
