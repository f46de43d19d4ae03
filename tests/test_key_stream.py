"""The compiled batch handed to DuckDB without pyarrow (db/_batch.pyx: key_batch, KeyStream):
the rows DuckDB reads from it are those of the pyarrow batch of the same keys (module values
and keys a server would refuse included), batches of both kinds mix in one stream, key names
are told UTF-8 as Python tells them, and a load or report never imports pyarrow (issue 28:
25 MiB of a report's peak RSS)."""

from __future__ import annotations

import io
import struct
import subprocess
import sys

import duckdb
import pyarrow as pa
import pytest
import rdbwriter as W
from common import FIXTURE_DUMPS
from hypothesis import given, settings
from hypothesis import strategies as st
from test_modules import module_id
from test_speedups import value_records

from rdbscan.db import rows as rows_module
from rdbscan.db.columns import KEYS_FORMATS
from rdbscan.db.rows import RowBuilder
from rdbscan.db.store import KEYS_SCHEMA, arrow_batch
from rdbscan.rdb import constants as C
from rdbscan.rdb.errors import RDBError
from rdbscan.rdb.parser import DumpInfo, parse

pytestmark = pytest.mark.skipif(
    rows_module.compiled is None, reason="the compiled batch is not built"
)
compiled = rows_module.compiled


def _batches(data: bytes, native: bool, batch_rows: int) -> list:
    """Every batch of `data` as load_one takes it (KeyBatch or Arrow columns)."""
    info = DumpInfo()
    rows = RowBuilder(1, info, batch_rows=batch_rows)
    out = []
    try:
        for rec in parse(io.BytesIO(data), info, size=len(data), sink=rows.sink):
            if rec is not None:
                rows.add(rec)
            if rows.full:
                out.append(rows.take_keys(native))
                rows.reset()
    except RDBError:
        pass
    if rows.count:
        out.append(rows.take_keys(native))
    return [b if isinstance(b, compiled.KeyBatch) else arrow_batch(KEYS_SCHEMA, b) for b in out]


def _read(batches: list) -> list:
    """The rows DuckDB reads from a KeyStream over `batches`."""
    con = duckdb.connect()
    con.register("k", compiled.KeyStream(KEYS_FORMATS, batches))
    try:
        return con.execute("SELECT * FROM k").fetchall()
    finally:
        con.close()


def _reference(batches: list) -> list:
    con = duckdb.connect()
    con.register("k", pa.Table.from_batches(batches, schema=KEYS_SCHEMA))
    try:
        return con.execute("SELECT * FROM k").fetchall()
    finally:
        con.close()


@settings(max_examples=150, deadline=None)
@given(
    st.lists(value_records(), max_size=25),
    st.sampled_from([9, 11, 12]),
    st.integers(1, 9),
)
def test_native_batches_read_as_the_arrow_batches(records, version, batch_rows):
    """Random dumps (non-UTF-8 and UTF-8 key names, expiries, LRU/LFU, every common
    encoding), cut into batches of 1-9 rows, read as the pyarrow batches of the same keys."""
    body = W.rdb(b"".join(records), version=version)
    native = _batches(body, True, batch_rows)
    arrow = _batches(body, False, batch_rows)
    assert [len(b) if isinstance(b, compiled.KeyBatch) else b.num_rows for b in native] == [
        b.num_rows for b in arrow
    ]
    assert _read(native) == _reference(arrow)


@pytest.mark.parametrize("dump", FIXTURE_DUMPS[::7])
def test_fixture_batches_read_as_the_arrow_batches(dump):
    """Real dumps of every server (a seventh of the fixtures), in batches of 1,000 rows."""
    data = open(dump, "rb").read()
    native = _batches(data, True, 1000)
    assert _read(native) == _reference(_batches(data, False, 1000))


def test_every_batch_goes_native():
    """Every batch is a KeyBatch: key names that are not UTF-8 (escaped, their bytes in
    key_raw), a module value (its type name in module_type), a key a server would refuse and a
    Redis 8.8 array (their invalid code and highest index at the end of extras), and they read
    as the pyarrow batches of the same keys."""
    keys = [b"a:1", "caf\u00e9:\u00fc".encode(), b"b:\xff\xfe", b"c:\xe2\x82"]
    body = b"".join(W.key(0, k, W.string(b"v")) for k in keys)
    module = (
        b"\x07"
        + W.string(b"m:1")
        + W.length(module_id("mymodule1", 2))  # a module rdbscan reads as opcodes
        + b"\x05"
        + W.string(b"{}")
        + b"\x00"
    )
    refused = W.key(11, b"s:1", W.string(W.intset([2, 1], 2)))  # members out of order
    array = W.key(28, b"arr", W.array_value([(0, "x"), (7, 42)]))
    body += module + refused + array + W.key(0, b"d:\xc3", W.string(b"v"))
    data = W.rdb(body, version=14, aux={"redis-ver": "8.8.0", "redis-bits": "64"})
    batches = _batches(data, True, 2)
    assert [type(b).__name__ for b in batches] == ["KeyBatch"] * 4
    read = _read(batches)
    arrow = _batches(data, False, 2)
    assert read == _reference(arrow)
    # a stream takes both kinds, one after the other (a KeyBatch is moved into the stream
    # that reads it: these are new ones)
    native = _batches(data, True, 2)
    assert _read([native[0], arrow[1], native[2], arrow[3]]) == read
    columns = list(KEYS_SCHEMA.names)
    at = {name: columns.index(name) for name in ("key", "key_raw", "module_type", "extras")}
    assert [tuple(r[at[c]] for c in at) for r in read] == [
        ("a:1", None, None, None),
        ("caf\u00e9:\u00fc", None, None, None),
        ("b:\\xff\\xfe", b"b:\xff\xfe", None, None),
        ("c:\\xe2\\x82", b"c:\xe2\x82", None, None),
        ("m:1", None, "mymodule1", None),
        ("s:1", None, None, [None] * 8 + [C.INVALID_IDS["intset order"]]),
        ("arr", None, None, [None] * 9 + [7]),
        ("d:\\xc3", b"d:\xc3", None, None),
    ]


TRICKY = [
    b"",
    b"plain",
    "caf\u00e9".encode(),
    "\u20ac\U0001f600".encode(),
    b"\xc0\xaf",  # overlong '/'
    b"\xe0\x80\xaf",  # overlong, three bytes
    b"\xed\xa0\x80",  # a surrogate
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xf5\x80\x80\x80",
    b"\xc3",  # cut short
    b"\xe2\x82",
    b"\x80",  # a lone continuation byte
    b"\xef\xbf\xbf",  # U+FFFF: a noncharacter, still UTF-8
]


def _taken(names: list[bytes]) -> dict:
    """The key columns of a taken batch holding `names`."""
    offsets = [0]
    for n in names:
        offsets.append(offsets[-1] + len(n))
    return {
        "n": len(names),
        "key_offsets": struct.pack(f"<{len(offsets)}i", *offsets),
        "key_data": b"".join(names),
    }


def _utf8(names: list[bytes]) -> bool:
    return compiled.utf8_keys(_taken(names))


def _python_utf8(names: list[bytes]) -> bool:
    try:
        for n in names:
            n.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=8), st.sampled_from(TRICKY)), max_size=6))
def test_utf8_keys_is_pythons_utf8(names):
    """Each name on its own: "\\xc3" then "\\xa9" is two bad names, not one good pair."""
    assert _utf8(names) == _python_utf8(names)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.binary(max_size=8), st.sampled_from(TRICKY)), max_size=6))
def test_escaped_names_are_pythons_backslashreplace(names):
    """escape_keys: `key` as bytes.decode("utf-8", "backslashreplace") writes it, key_raw the
    bytes of the names that are not UTF-8 and null for the others."""
    cols = _taken(names)
    compiled.escape_keys(cols)
    key = pa.Array.from_buffers(
        pa.string(),
        len(names),
        [None, pa.py_buffer(cols["key_offsets"]), pa.py_buffer(cols["key_data"])],
    )
    raw = pa.Array.from_buffers(
        pa.binary(),
        len(names),
        [
            pa.py_buffer(cols["raw_valid"]),
            pa.py_buffer(cols["raw_offsets"]),
            pa.py_buffer(cols["raw_data"]),
        ],
    )
    assert key.to_pylist() == [n.decode("utf-8", "backslashreplace") for n in names]
    assert raw.to_pylist() == [None if _python_utf8([n]) else n for n in names]


def test_utf8_names_are_checked_one_by_one():
    assert _utf8(["caf\u00e9".encode()]) and not _utf8([b"caf\xc3", b"\xa9"])
    assert [_utf8([t]) for t in TRICKY] == [True] * 4 + [False] * 8 + [True]


def test_an_error_in_the_stream_reaches_duckdb_and_the_caller():
    """What the iterator raises fails the query with its message, and is kept on the stream."""

    def batches():
        yield from _batches(W.rdb(W.key(0, b"k", W.string(b"v"))), True, 10)
        raise ValueError("the parser stopped here")

    stream = compiled.KeyStream(KEYS_FORMATS, batches())
    con = duckdb.connect()
    con.register("k", stream)
    with pytest.raises(duckdb.Error, match="the parser stopped here"):
        con.execute("SELECT count(*) FROM k").fetchall()
    assert isinstance(stream.exception, ValueError)


# DuckDB 1.x's Python package imports pyarrow (and ssl) itself (docs/architecture.md)
DUCKDB_2 = int(duckdb.__version__.split(".")[0]) >= 2


@pytest.mark.subprocess
@pytest.mark.skipif(not DUCKDB_2, reason="DuckDB 1.x imports pyarrow itself")
def test_a_report_never_imports_pyarrow(tmp_path):
    """A report over a dump of strings, lists, sets, sorted sets and hashes (expiries and LFU
    too, a name that is not UTF-8) loads it without pyarrow, and so with a module value and a
    key a server would refuse."""
    recs = [
        W.key(0, "user:\u00e9:1", W.string(b"v" * 30)),
        b"\xfc" + struct.pack("<q", 4102444800000) + W.key(0, b"session:2", W.string(b"42")),
        b"\xf9\x05" + W.key(0, b"counter:3", W.string(b"7")),
        W.key(11, b"tags:4", W.string(W.intset([1, 2, 3], 2))),
        W.key(16, b"h:5", W.string(W.listpack([b"f", b"v", b"g", b"w"]))),
        W.key(17, b"z:6", W.string(W.listpack([b"m", 1, b"n", 2]))),
    ]
    recs.append(W.key(0, b"bin:\xff", W.string(b"x")))
    module = b"\x07" + W.string(b"m:1") + W.length(module_id("mymodule1", 2)) + b"\x05"
    module += W.string(b"{}") + b"\x00" + W.key(11, b"s:1", W.string(W.intset([2, 1], 2)))
    good = tmp_path / "plain.rdb"
    good.write_bytes(W.rdb(b"".join(recs), version=11))
    bad = tmp_path / "module.rdb"
    bad.write_bytes(W.rdb(b"".join(recs) + module, version=11))
    code = (
        "import sys\n"
        "dump, out = sys.argv[1:]\n"
        "sys.argv = ['rdbscan', 'report', '-q', dump, '-f', 'json', '-o', out]\n"
        "from rdbscan.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit as e:\n    code = e.code\n"
        "import json\n"
        "print(code, json.load(open(out))['overview']['keys'], 'pyarrow' in sys.modules)\n"
    )
    for dump, keys, exit_code in ((good, 7, "0"), (bad, 9, "5")):  # 5: s:1 is flagged
        out = subprocess.run(
            [sys.executable, "-c", code, str(dump), str(tmp_path / f"{dump.stem}.json")],
            capture_output=True,
            text=True,
        ).stdout.split()
        assert out == [exit_code, str(keys), "False"]
