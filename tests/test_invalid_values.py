"""Values that read but that a Redis server refuses to load (issue 15, docs/hostile-inputs.md):
a listpack back-length, count or terminator, a ziplist prevlen, zltail, zllen or terminator,
an intset out of order or empty, an empty collection, LZF data of the wrong length; all with a
valid CRC.  Each key is kept, flagged in keys.invalid and counted in dumps.invalid_keys; the
load warns and exits 5.  Before: every one of them loaded silently with exit 0.

The kinds follow listpack.c lpValidateIntegrity, ziplist.c ziplistValidateIntegrity, intset.c
intsetValidateIntegrity and rdb.c rdbLoadObject (Redis 8.6); where Debian's redis-check-rdb is
installed the last test checks that it refuses each file and accepts its valid twin (.ci/run
installs it and sets RDBSCAN_REQUIRE_REDIS_CHECK_RDB=1, so that there it cannot be skipped).
"""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W

from rdbscan.db.load import load
from rdbscan.db.outcome import outcome
from rdbscan.errors import EXIT_CHECKSUM, EXIT_OK
from rdbscan.rdb import backend
from rdbscan.rdb import constants as C

HASH_LP, ZSET_LP, SET_LP = C.RDB_TYPE_HASH_LISTPACK, C.RDB_TYPE_ZSET_LISTPACK, 20
LIST_ZL, HASH_ZL, SET_IS = C.RDB_TYPE_LIST_ZIPLIST, C.RDB_TYPE_HASH_ZIPLIST, 11


def _patch(blob: bytes, offset: int, fmt: str, value: int) -> bytes:
    b = bytearray(blob)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


def _lp_backlen() -> bytes:  # the first entry (0x81 'a', back-length 2) says 5
    return _patch(W.listpack([b"a", b"b", b"c", b"d"]), 8, "<B", 5)


def _lp_backlen_2byte() -> bytes:  # a 200-byte entry whose 2-byte back-length is off by 128
    lp = W.listpack([b"f", b"x" * 200])
    # entry 2 starts at 9: 0xe0|0, 200, 200 bytes, back-length [202 >> 7, (202 & 127) | 128]
    return _patch(lp, 9 + 202, "<B", 0)


def _zl_prevlen() -> bytes:  # the second entry (at 13) says the first is 9 bytes, not 3
    return _patch(W.ziplist([b"a", b"b", b"c"]), 13, "<B", 9)


# (case, RDB type, value as stored, keys.invalid, the first problem as the warning names it,
#  the same value as a server writes it)
CASES = [
    (
        "lp_backlen",
        HASH_LP,
        _lp_backlen(),
        "listpack back-length",
        "listpack entry at 6 has back-length 5, not its size 2",
        W.listpack([b"a", b"b", b"c", b"d"]),
    ),
    (
        "lp_backlen_2byte",
        HASH_LP,
        _lp_backlen_2byte(),
        "listpack back-length",
        "listpack entry at 9 has back-length 74, not its size 202",
        W.listpack([b"f", b"x" * 200]),
    ),
    (
        "lp_count",
        HASH_LP,
        W.listpack([b"a", b"b", b"c", b"d"], count=6),
        "listpack count",
        "listpack header counts 6 entries, it holds 4",
        W.listpack([b"a", b"b", b"c", b"d"], count=65535),
    ),
    (
        "lp_terminator",
        ZSET_LP,
        W.listpack([b"m", 1])[:-1] + b"\x00",
        "listpack terminator",
        "listpack ends with 0x00, not 0xff",
        W.listpack([b"m", 1]),
    ),
    (
        "lp_empty",
        HASH_LP,
        W.listpack([]),
        "empty",
        "hash-listpack blob holds no elements",
        W.listpack([b"f", b"v"]),
    ),
    (
        "zl_prevlen",
        LIST_ZL,
        _zl_prevlen(),
        "ziplist previous length",
        "ziplist entry at 13 has previous-entry length 9, not 3",
        W.ziplist([b"a", b"b", b"c"]),
    ),
    (
        "zl_tail",
        LIST_ZL,
        _patch(W.ziplist([b"a", b"b", b"c"]), 4, "<I", 10),
        "ziplist tail",
        "ziplist tail offset 10 is not its last entry's offset 16",
        W.ziplist([b"a", b"b", b"c"]),
    ),
    (
        "zl_count",
        HASH_ZL,
        W.ziplist([b"f", b"v"], count=7),
        "ziplist count",
        "ziplist header counts 7 entries, it holds 2",
        W.ziplist([b"f", b"v"], count=65535),
    ),
    (
        "zl_terminator",
        LIST_ZL,
        W.ziplist([b"a", 5])[:-1] + b"\x01",
        "ziplist terminator",
        "ziplist ends with 0x01, not 0xff",
        W.ziplist([b"a", 5]),
    ),
    (
        "is_order",
        SET_IS,
        W.intset([5, 3, 9]),
        "intset order",
        "intset member 1 (3) is not above the one before (5)",
        W.intset([3, 5, 9]),
    ),
    (
        "is_repeated",
        SET_IS,
        W.intset([-70000, 12, 12], 4),
        "intset order",
        "intset member 2 (12) is not above the one before (12)",
        W.intset([-70000, 12, 13], 4),
    ),
    (
        "is_empty",
        SET_IS,
        W.intset([]),
        "intset empty",
        "intset has no members",
        W.intset([1]),
    ),
]


def _lzf_bad() -> bytes:
    """An LZF string whose literal run gives 4 bytes where its header says 10."""
    return b"\xc3" + W.length(5) + W.length(10) + b"\x03abcd"


RAW_CASES = [
    # (case, the key's record after its type byte and name, keys.invalid, the problem named)
    ("lzf_string", 0, _lzf_bad(), "lzf length", "LZF data does not decompress to 10 bytes"),
    (
        "lzf_set_member",
        C.RDB_TYPE_SET,
        W.length(2) + W.string("m") + _lzf_bad(),
        "lzf length",
        "element: LZF data does not decompress to 10 bytes",
    ),
    ("empty_set", C.RDB_TYPE_SET, W.length(0), "empty", "set of no elements"),
    ("empty_hash", C.RDB_TYPE_HASH, W.length(0), "empty", "hash of no elements"),
    (
        "empty_quicklist",
        C.RDB_TYPE_LIST_QUICKLIST,
        W.length(1) + W.string(W.ziplist([])),
        "empty",
        "list of no elements",
    ),
]


def _dump(path: Path, t: int, value: bytes, version: int = 11) -> str:
    body = (
        b"\xfe\x00"
        + W.key(0, "before", W.string("v"))
        + bytes([t])
        + W.string("bad")
        + value
        + W.key(0, "after", W.string("w"))
    )
    path.write_bytes(W.rdb(body, version=version))
    return str(path)


ALL = [(c[0], c[1], W.string(c[2]), c[3], c[4]) for c in CASES] + RAW_CASES


def _keys(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return (
            con.execute("SELECT key, invalid FROM keys ORDER BY file_offset").fetchall()
            + con.execute("SELECT invalid_keys, complete FROM dumps").fetchall()
        )
    finally:
        con.close()


@pytest.mark.parametrize("name,t,value,kind,problem", ALL, ids=[c[0] for c in ALL])
def test_a_value_redis_refuses_is_kept_and_flagged(tmp_path, name, t, value, kind, problem):
    path = _dump(tmp_path / f"{name}.rdb", t, value)
    db = str(tmp_path / "x.duckdb")
    (result,) = load([path], db)
    assert result.error is None and result.complete and result.keys == 3
    assert _keys(db) == [("before", None), ("bad", kind), ("after", None), (1, True)]
    out = outcome([result])
    assert out.code == EXIT_CHECKSUM
    (line,) = [w for w in out.warnings if "refuses" in w]
    assert line.startswith(
        f"{path}: 1 key holds a value a Redis server refuses to load (kept, flagged in "
        f"keys.invalid); first: byte "
    )
    assert f": {problem} while reading key 'bad', type {t} " in line


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(
    backend.compiled is None,
    reason="this process runs the pure-Python path: the test above is this one here",
)
@pytest.mark.parametrize("name,t,value,kind,problem", ALL, ids=[c[0] for c in ALL])
def test_pure_python_path_flags_the_same(tmp_path, name, t, value, kind, problem):
    path = _dump(tmp_path / f"{name}.rdb", t, value)
    db = str(tmp_path / "pure.duckdb")
    env = {**os.environ, "RDBSCAN_PURE_PYTHON": "1"}
    p = subprocess.run(
        [sys.executable, "-m", "rdbscan", "load", path, "-o", db],
        env=env,
        capture_output=True,
        text=True,
    )
    assert p.returncode == EXIT_CHECKSUM, p.stderr
    assert _keys(db) == [("before", None), ("bad", kind), ("after", None), (1, True)]
    assert f": {problem} while reading key 'bad'" in p.stderr


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_the_valid_twin_is_not_flagged(tmp_path, case):
    name, t, _, _, _, valid = case
    path = _dump(tmp_path / f"{name}.rdb", t, W.string(valid))
    db = str(tmp_path / "x.duckdb")
    (result,) = load([path], db)
    assert _keys(db) == [("before", None), ("bad", None), ("after", None), (0, True)]
    assert outcome([result]).code == EXIT_OK


def test_invalid_keys_in_a_batch_of_compiled_rows(tmp_path):
    """Flagged keys among many rows the compiled loop writes: only they carry keys.invalid."""
    good = b"".join(W.key(0, f"k{i}", W.string(f"v{i}")) for i in range(5000))
    bad = W.key(SET_IS, "bad1", W.string(W.intset([2, 1]))) + W.key(
        HASH_LP, "bad2", W.string(_lp_backlen())
    )
    body = b"\xfe\x00" + good + bad + good.replace(b"\x02k", b"\x02j")
    path = tmp_path / "mixed.rdb"
    path.write_bytes(W.rdb(body))
    db = str(tmp_path / "x.duckdb")
    (result,) = load([str(path)], db)
    assert result.keys == 10002 and result.invalid_keys == 2
    con = duckdb.connect(db, read_only=True)
    assert con.execute(
        "SELECT key, invalid FROM keys WHERE invalid IS NOT NULL ORDER BY key"
    ).fetchall() == [("bad1", "intset order"), ("bad2", "listpack back-length")]
    assert con.execute("SELECT count(*) FROM keys WHERE invalid IS NULL").fetchone() == (10000,)


CHECK_RDB = shutil.which("redis-check-rdb")
# RDB 10 (Redis 7.0, Debian's redis-check-rdb): no set listpacks (type 20)
CHECKABLE = [c for c in CASES if c[1] != SET_LP]


@pytest.mark.skipif(
    CHECK_RDB is None and os.environ.get("RDBSCAN_REQUIRE_REDIS_CHECK_RDB") != "1",
    reason="redis-check-rdb is not installed (apt-get install redis-tools); .ci/run installs it",
)
@pytest.mark.parametrize("case", CHECKABLE, ids=[c[0] for c in CHECKABLE])
def test_redis_check_rdb_refuses_what_is_flagged(tmp_path, case):
    assert CHECK_RDB, "RDBSCAN_REQUIRE_REDIS_CHECK_RDB=1 but no redis-check-rdb on PATH"
    name, t, bad, _, _, valid = case
    refused = _dump(tmp_path / "bad.rdb", t, W.string(bad), version=10)
    accepted = _dump(tmp_path / "ok.rdb", t, W.string(valid), version=10)
    p = subprocess.run([CHECK_RDB, refused], capture_output=True, text=True)
    assert p.returncode != 0 and "RDB ERROR DETECTED" in p.stdout
    p = subprocess.run([CHECK_RDB, accepted], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout
