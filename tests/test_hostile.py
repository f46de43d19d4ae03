"""Hostile inputs (issue 15, docs/hostile-inputs.md): the fast cases of bench/hostile.py, each
loaded by `rdbscan load` in a child process, must meet their bound (exit code, rows kept, what
is stored, peak RSS under 300 MB).  Times are the benchmark's (bench/hostile.py), not asserted
here.  Plus the details of how a long key name is stored, in both row paths."""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import duckdb
import pytest

import rdbwriter as W
from rdbscan.load import load
from rdbscan.rows import KEY_KEEP
from rdbscan.slots import key_slot

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
import hostile  # noqa: E402

FAST = [c for c in hostile.CASES if c.fast]


@pytest.mark.parametrize("case", FAST, ids=[c.name for c in FAST])
def test_hostile_input_meets_its_bound(case, tmp_path):
    r = hostile.run(case, tmp_path)
    assert r.failures == [], (r.failures, r.stderr)


def _long_names() -> list[bytes]:
    big = KEY_KEEP * 3
    return [
        b"a" * big,
        b"a" * big + b"!",                               # same prefix, other name
        b"x" * (KEY_KEEP - 1) + "é".encode() + b"y" * 10,  # a UTF-8 character across the cut
        b"{tag}" + b"z" * big,                           # cluster slot of the hashtag
        b"\xff\xfe" + b"q" * big,                        # not UTF-8
        b"b" * KEY_KEEP,                                 # exactly at the limit: kept whole
    ]


def _dump(path: Path) -> str:
    body = b"\xfe\x00" + b"".join(W.key(0, k, W.string(b"v%d" % i))
                                   for i, k in enumerate(_long_names()))
    path.write_bytes(W.rdb(body))
    return str(path)


def _stored(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute("SELECT key, key_raw, key_bytes, key_length, key_truncated, key_hash, "
                           "slot, family FROM keys ORDER BY file_offset").fetchall()
    finally:
        con.close()


def test_long_key_names_are_stored_as_prefix_length_and_hash(tmp_path):
    db = str(tmp_path / "o.duckdb")
    load([_dump(tmp_path / "long.rdb")], db)
    rows = _stored(db)
    names = _long_names()
    assert len(rows) == len(names)
    for name, (text, raw, kb, length, truncated, digest, slot, _) in zip(names, rows):
        assert length == len(name) and slot == key_slot(name)
        if len(name) <= KEY_KEEP:
            assert kb == name and not truncated and digest is None
            continue
        assert truncated
        assert digest == int.from_bytes(hashlib.blake2b(name, digest_size=8).digest(),
                                        "little", signed=True)
        assert name.startswith(kb) and KEY_KEEP - 3 <= len(kb) <= KEY_KEEP
    # the cut falls before the two-byte character, not inside it: the prefix is valid UTF-8
    assert rows[2][2] == b"x" * (KEY_KEEP - 1) and rows[2][1] is None
    assert rows[4][1] == rows[4][2] == names[4][:KEY_KEEP]   # not UTF-8: key_raw keeps the bytes
    assert rows[0][5] != rows[1][5] and rows[0][2] == rows[1][2]


def test_long_key_names_stored_alike_by_both_row_paths(tmp_path):
    import subprocess
    dump = _dump(tmp_path / "long.rdb")
    compiled_db, pure_db = str(tmp_path / "c.duckdb"), str(tmp_path / "p.duckdb")
    load([dump], compiled_db)
    subprocess.run([sys.executable, "-c", "import sys; from rdbscan.load import load; "
                    "load([sys.argv[1]], sys.argv[2])", dump, pure_db], check=True,
                   env={**os.environ, "RDBSCAN_PURE_PYTHON": "1"})
    assert _stored(compiled_db) == _stored(pure_db)
