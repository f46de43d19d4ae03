"""The compiled hot loops (rdbscan/_speedups.pyx) against the pure-Python reference path.

Both paths must give identical rows: every fixture is loaded by the compiled path (once with
the normal 1 MiB read chunk, once with a tiny one so that elements straddle buffer refills
everywhere) and by a `RDBSCAN_PURE_PYTHON=1` process, and the tables are compared.  The blob
walkers are also compared on generated and mutated blobs, errors included.
"""
from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rdbwriter as W
from rdbscan import blobs, reader, speedups
from rdbscan.blobs import BlobError
from rdbscan.load import load

FIXTURES = Path(__file__).parent / "fixtures"
DUMPS = sorted(str(p) for p in FIXTURES.rglob("*") if p.suffix in (".rdb", ".aof"))

pytestmark = pytest.mark.skipif(
    speedups.compiled is None,
    reason="rdbscan._speedups is not built (pip install -e . needs Cython and a C compiler)")

KEY_SQL = ("SELECT d.path, k.* EXCLUDE (dump_id) FROM keys k JOIN dumps d USING (dump_id) "
           "ORDER BY d.path, k.file_offset")
DUMP_SQL = "SELECT * EXCLUDE (dump_id, parse_seconds, loaded_at) FROM dumps ORDER BY path"
SIDE_SQL = ["SELECT d.path, t.* EXCLUDE (dump_id) FROM {t} t JOIN dumps d USING (dump_id) "
            "ORDER BY ALL".format(t=t) for t in ("streams", "stream_groups", "slot_info", "db_sizes")]


def _tables(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return [con.execute(sql).fetchall() for sql in [KEY_SQL, DUMP_SQL, *SIDE_SQL]]
    finally:
        con.close()


@pytest.fixture(scope="module")
def pure_db(tmp_path_factory) -> str:
    db = str(tmp_path_factory.mktemp("pure") / "pure.duckdb")
    code = ("import sys; from rdbscan import speedups; assert speedups.compiled is None; "
            "from rdbscan.load import load; load(sys.argv[2:], sys.argv[1])")
    env = {**os.environ, "RDBSCAN_PURE_PYTHON": "1"}
    subprocess.run([sys.executable, "-c", code, db, *DUMPS], check=True, env=env)
    return db


def test_fixture_set_is_large():
    assert len(DUMPS) >= 150


@pytest.mark.parametrize("chunk", [reader.CHUNK, 257])
def test_compiled_rows_equal_pure_python_rows(pure_db, tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(reader, "CHUNK", chunk)
    db = str(tmp_path / "compiled.duckdb")
    load(DUMPS, db)
    compiled, pure = _tables(db), _tables(pure_db)
    assert len(compiled[0]) == len(pure[0]) > 10_000
    for got, want in zip(compiled, pure):
        assert got == want


def _outcome(fn, blob, members_only):
    try:
        return fn(blob, members_only)
    except BlobError as e:
        return ("error", str(e))


def _same(blob: bytes, members_only: bool = False) -> None:
    for fast, ref in ((speedups.compiled.listpack_scan, blobs.PY_LISTPACK_SCAN),
                      (speedups.compiled.ziplist_scan, blobs.PY_ZIPLIST_SCAN)):
        assert _outcome(fast, blob, members_only) == _outcome(ref, blob, members_only)


def _zl_entry(prev: int, e) -> bytes:
    head = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
    if isinstance(e, int):
        if 0 <= e <= 12:
            enc = bytes([0xF1 + e])
        elif -128 <= e <= 127:
            enc = b"\xfe" + struct.pack("<b", e)
        elif -32768 <= e <= 32767:
            enc = b"\xc0" + struct.pack("<h", e)
        elif -(1 << 23) <= e < (1 << 23):
            enc = b"\xf0" + struct.pack("<i", e)[:3]
        elif -(1 << 31) <= e < (1 << 31):
            enc = b"\xd0" + struct.pack("<i", e)
        else:
            enc = b"\xe0" + struct.pack("<q", e)
    elif len(e) < 64:
        enc = bytes([len(e)]) + e
    elif len(e) < 16384:
        enc = bytes([0x40 | (len(e) >> 8), len(e) & 0xFF]) + e
    else:
        enc = b"\x80" + struct.pack(">I", len(e)) + e
    return head + enc


def ziplist(entries) -> bytes:
    body, prev = b"", 0
    for e in entries:
        ent = _zl_entry(prev, e)
        body += ent
        prev = len(ent)
    total = 10 + len(body) + 1
    return struct.pack("<IIH", total, 10 + len(body) - prev if entries else 10,
                       len(entries)) + body + b"\xff"


ENTRY = st.one_of(st.integers(-(1 << 63), (1 << 63) - 1), st.integers(-5000, 5000),
                  st.binary(max_size=80), st.binary(min_size=4000, max_size=20000))


@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, max_size=12), st.booleans())
def test_walkers_agree_on_valid_blobs(entries, members_only):
    lp, zl = W.listpack(entries), ziplist(entries)
    assert speedups.compiled.listpack_scan(lp, members_only) == \
        blobs.PY_LISTPACK_SCAN(lp, members_only)
    assert speedups.compiled.ziplist_scan(zl, members_only) == \
        blobs.PY_ZIPLIST_SCAN(zl, members_only)
    assert speedups.compiled.listpack_scan(lp)[0] == len(entries)
    assert speedups.compiled.ziplist_scan(zl)[0] == len(entries)


@settings(max_examples=1000, deadline=None)
@given(st.lists(ENTRY, max_size=6), st.data())
def test_walkers_agree_on_damaged_blobs(entries, data):
    for blob in (W.listpack(entries), ziplist(entries)):
        b = bytearray(blob)
        for _ in range(data.draw(st.integers(1, 4))):
            i = data.draw(st.integers(0, len(b) - 1))
            b[i] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(b)))
        damaged = bytes(b[:cut])
        # keep the header's size right sometimes, so the walk itself meets the damage
        fixed = struct.pack("<I", len(damaged)) + damaged[4:] if len(damaged) >= 4 else damaged
        for x in (bytes(b), damaged, fixed):
            _same(x)
            _same(x, True)
