"""User mistakes and machine faults through the real command line: one line on stderr, the
exit code of docs/exit-codes.md, never "internal error", nothing of the user's changed."""
from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from rdbscan import errors
from rdbscan.errors import (EXIT_DATABASE, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_USAGE,
                            exit_code_table)

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"
DUMP = str(FIXTURES / "redis-7.0.15" / "small" / "dump.rdb")


def rdbscan(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rdbscan", *map(str, args)], capture_output=True,
                          text=True, **kw)


def test_docs_page_is_the_table_in_errors_py():
    assert exit_code_table() in (ROOT / "docs" / "exit-codes.md").read_text()
    assert "docs/exit-codes.md" in (ROOT / "README.md").read_text()


def test_exit_codes_are_defined_in_errors_py_only():
    defined = {p.name for p in (ROOT / "rdbscan").glob("*.py")
               if re.search(r"^EXIT_\w+\s*=\s*\d", p.read_text(), re.M)}
    assert defined == {"errors.py"}
    assert set(errors.EXIT_PRECEDENCE) == set(errors.EXIT_CODES)


def test_output_directory_that_does_not_exist(tmp_path):
    out = tmp_path / "no" / "such" / "x.duckdb"
    for cmd in (["load", "-q", DUMP], ["report", "-q", DUMP]):
        p = rdbscan(*cmd, "-o", out)
        assert (p.returncode, p.stderr, p.stdout) == (
            EXIT_DATABASE, f"rdbscan: error: {out}: its directory does not exist\n", "")


def test_output_that_is_not_a_database_is_left_alone(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    for cmd in (["load", "-q", DUMP], ["report", "-q", DUMP]):
        p = rdbscan(*cmd, "-o", notes)
        assert (p.returncode, p.stderr, p.stdout) == (
            EXIT_DATABASE, f"rdbscan: error: {notes}: not a DuckDB database (for -o: give a new file "
                           f"name such as dump.duckdb, or a database rdbscan wrote)\n", "")
    assert notes.read_text() == "my notes\n"
    assert sorted(os.listdir(tmp_path)) == ["notes.txt"]
    p = rdbscan("sql", notes, "SELECT 1")
    assert (p.returncode, p.stderr) == (
        EXIT_DATABASE, f"rdbscan: error: {notes}: not a DuckDB database (for -o: give a new file "
                       f"name such as dump.duckdb, or a database rdbscan wrote)\n")


def test_missing_input_has_one_code_in_every_command(tmp_path):
    want = (EXIT_INPUT, "rdbscan: error: missing.rdb: No such file or directory\n")
    for cmd in (["load", "-q", "missing.rdb", "-o", tmp_path / "x.duckdb"],
                ["report", "-q", "missing.rdb"]):
        p = rdbscan(*cmd, cwd=tmp_path)
        assert (p.returncode, p.stderr) == want, cmd
    for cmd in (["sql", "missing.duckdb", "SELECT 1"], ["query", "missing.duckdb", "big_keys"]):
        p = rdbscan(*cmd, cwd=tmp_path)
        assert (p.returncode, p.stderr) == (
            EXIT_INPUT, "rdbscan: error: missing.duckdb: No such file or directory\n"), cmd


def test_sql_error_is_a_usage_error(tmp_path):
    db = tmp_path / "x.duckdb"
    assert rdbscan("load", "-q", DUMP, "-o", db).returncode == 0
    p = rdbscan("sql", db, "SELEC 1")
    assert p.returncode == EXIT_USAGE and p.stderr.startswith(
        'rdbscan: error: SQL error: Parser Error: syntax error at or near "SELEC"')


@contextlib.contextmanager
def _mounted_tmpfs(path: Path, options: str):
    """A small tmpfs at `path` (root only): a read-only or a full file system."""
    path.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs",
                                            str(path)], capture_output=True).returncode != 0:
        pytest.skip("needs root to mount a tmpfs")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def test_read_only_directory(tmp_path):
    with _mounted_tmpfs(tmp_path / "ro", "ro,size=1m") as ro:
        p = rdbscan("load", "-q", DUMP, "-o", ro / "x.duckdb")
        assert (p.returncode, p.stderr) == (
            EXIT_DATABASE, f"rdbscan: error: {ro / 'x.duckdb'}: the file system is read-only\n")


def test_full_disk(tmp_path):
    with _mounted_tmpfs(tmp_path / "full", "size=100k") as full:
        p = rdbscan("load", "-q", DUMP, "-o", full / "x.duckdb")
        assert p.returncode == EXIT_DATABASE, p.stderr
        assert re.fullmatch(rf"rdbscan: error: {re.escape(str(full))}/x\.duckdb(\.wal)?: the disk is "
                            rf"full \(No space left on device\)\n", p.stderr), p.stderr
