"""The compiled core (the rdb layer's walkers, rdbscan/rdb/_speedups.pyx, and the db layer's
batch of key rows, rdbscan/db/_batch.pyx) against the pure-Python reference path.

Both paths must give identical rows: every fixture is loaded by the compiled path (once with
the normal 1 MiB read chunk, the session's load in conftest.py, once with a tiny one so that
elements straddle buffer refills everywhere) and by a `RDBSCAN_PURE_PYTHON=1` process, and the
tables are compared.  The blob
walkers are also compared on generated and mutated blobs, errors included.
"""

from __future__ import annotations

import struct

import duckdb
import pytest
import rdbwriter as W
from common import FIXTURE_DUMPS, FIXTURES
from family_reference import fast_family, plain_key
from hypothesis import given, settings
from hypothesis import strategies as st

from rdbscan.db import rows as rows_module
from rdbscan.db.load import load
from rdbscan.rdb import backend as speedups
from rdbscan.rdb import blobs, elements, reader
from rdbscan.rdb import constants as C
from rdbscan.rdb.errors import BlobError, BlobRefused

DUMPS = FIXTURE_DUMPS

pytestmark = pytest.mark.skipif(
    speedups.compiled is None or rows_module.compiled is None,
    reason="the compiled core is not built (pip install -e . needs Cython and a C compiler)",
)

KEY_SQL = (
    "SELECT d.path, k.* EXCLUDE (dump_id) FROM keys k JOIN dumps d USING (dump_id) "
    "ORDER BY d.path, k.file_offset"
)
DUMP_SQL = "SELECT * EXCLUDE (dump_id, parse_seconds, loaded_at) FROM dumps ORDER BY path"
SIDE_SQL = [
    f"SELECT d.path, t.* EXCLUDE (dump_id) FROM {t} t JOIN dumps d USING (dump_id) ORDER BY ALL"
    for t in ("streams", "stream_groups", "slot_info", "db_sizes")
]


def _tables(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return [con.execute(sql).fetchall() for sql in [KEY_SQL, DUMP_SQL, *SIDE_SQL]]
    finally:
        con.close()


def test_fixture_set_is_large():
    assert len(DUMPS) >= 150


@pytest.mark.slow
@pytest.mark.parametrize("chunk", [reader.CHUNK, 257])
def test_compiled_rows_equal_pure_python_rows(
    fixtures_db, pure_fixtures_db, tmp_path, monkeypatch, chunk
):
    if chunk == reader.CHUNK:  # the session's load (conftest.py), with the normal chunk
        db = fixtures_db
    else:
        monkeypatch.setattr(reader, "CHUNK", chunk)
        db = str(tmp_path / "compiled.duckdb")
        load(DUMPS, db)
    compiled, pure = _tables(db), _tables(pure_fixtures_db)
    assert len(compiled[0]) == len(pure[0]) > 10_000
    for got, want in zip(compiled, pure):
        assert got == want


@pytest.mark.slow
def test_only_the_empty_keys_of_redis_tests_are_flagged_invalid(pure_fixtures_db):
    """Every fixture value a real server wrote passes the integrity checks keys.invalid
    stands for (a finding must be right); the one fixture flagged is Redis's own test file of
    empty keys, which redis-check-rdb refuses at its first key (a server with
    sanitize-dump-payload off skips them).  The compiled rows equal these (test above)."""
    con = duckdb.connect(pure_fixtures_db, read_only=True)
    try:
        flagged = con.execute(
            "SELECT parse_filename(d.path), k.key, k.invalid FROM keys k JOIN dumps d "
            "USING (dump_id) WHERE k.invalid IS NOT NULL ORDER BY k.file_offset"
        ).fetchall()
        assert con.execute("SELECT count(*) FROM keys").fetchone()[0] > 10_000
    finally:
        con.close()
    empty = [
        "set",
        "hash",
        "list_ziplist",
        "zset",
        "zset_listpack",
        "hash_ziplist",
        "list_quicklist",
        "zset_ziplist",
        "list_quicklist_empty_ziplist",
    ]
    assert sorted(flagged) == sorted(("corrupt_empty_keys.rdb", k, "empty") for k in empty)


def _outcome(fn, blob, *args):
    """What a walker makes of a blob: its result, a refusal (what Redis refuses though it
    reads: message, kind, figures) or an error."""
    try:
        return fn(blob, *args)
    except BlobRefused as e:
        return ("refused", str(e), e.kind, e.result)
    except BlobError as e:
        return ("error", str(e))


def _same(blob: bytes, members_only: bool = False) -> None:
    for fast, ref in (
        (speedups.compiled.listpack_scan, blobs.listpack_scan),
        (speedups.compiled.ziplist_scan, blobs.ziplist_scan),
    ):
        assert _outcome(fast, blob, members_only) == _outcome(ref, blob, members_only)


ENTRY = st.one_of(
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.integers(-5000, 5000),
    st.binary(max_size=80),
    st.binary(min_size=4000, max_size=20000),
)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, max_size=12), st.booleans())
def test_walkers_agree_on_valid_blobs(entries, members_only):
    lp, zl = W.listpack(entries), W.ziplist(entries)
    assert speedups.compiled.listpack_scan(lp, members_only) == blobs.listpack_scan(
        lp, members_only
    )
    assert speedups.compiled.ziplist_scan(zl, members_only) == blobs.ziplist_scan(zl, members_only)
    assert speedups.compiled.listpack_scan(lp)[0] == len(entries)
    assert speedups.compiled.ziplist_scan(zl)[0] == len(entries)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.lists(ENTRY, max_size=6), st.data())
def test_walkers_agree_on_damaged_blobs(entries, data):
    for blob in (W.listpack(entries), W.ziplist(entries)):
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


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.lists(ENTRY, max_size=8), st.data())
def test_walkers_agree_on_blobs_redis_refuses(entries, data):
    """Blobs that still read but that Redis's integrity checks refuse: a header count, a
    ziplist tail, a back-length or prevlen byte, the terminator; both walkers must name the
    same first problem and give the same figures."""
    lp, zl = bytearray(W.listpack(entries)), bytearray(W.ziplist(entries))
    what = data.draw(st.sampled_from(["count", "tail", "byte", "end"]))
    if what == "count":
        struct.pack_into("<H", lp, 4, data.draw(st.integers(0, 65535)))
        struct.pack_into("<H", zl, 8, data.draw(st.integers(0, 65535)))
    elif what == "tail":
        struct.pack_into("<I", zl, 4, data.draw(st.integers(0, len(zl) + 3)))
    elif what == "byte":  # any byte of an entry: back-lengths, prevlens, or the data
        for b in (lp, zl):
            head = 6 if b is lp else 10
            if len(b) > head + 1:
                b[data.draw(st.integers(head, len(b) - 2))] = data.draw(st.integers(0, 255))
    else:
        lp[-1] = zl[-1] = data.draw(st.integers(0, 254))
    for blob in (bytes(lp), bytes(zl)):
        _same(blob)
        _same(blob, True)


# -- the bulk skip of hashtable-encoded elements ----------------------------------------------

STR_ELEMENT = st.one_of(
    st.binary(max_size=70).map(W.string),
    st.binary(max_size=20).map(lambda b: W.string(b, force64=True)),
    st.integers(-(1 << 31), (1 << 31) - 1).map(W.int_string),
    st.binary(min_size=1, max_size=40).map(W.lzf_string),  # where both stop
    st.sampled_from([b"\xc3", b"\xc4\x00", b"\x82\x00\x00\x00\x01", b"\x40"]),
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(STR_ELEMENT, max_size=12),
    st.sampled_from([elements.LAYOUT_STR, elements.LAYOUT_PAIR]),
    st.integers(0, 14),
    st.integers(0, 400),
)
def test_skip_elements_twin(parts, layout, count, cut):
    """The compiled bulk skip and its pure-Python twin skip the same elements, to the same
    position, with the same histograms, longest length and integer count, and stop at the same
    element (LZF, an unknown encoding, the end of the buffer)."""
    buf = b"".join(parts)[: cut or None]
    for start in (0, 1):
        got = []
        for fn in (speedups.compiled.skip_elements, elements.skip_elements):
            hist_a: dict = {}
            hist_b: dict = {}
            out = fn(buf, start, count, layout, hist_a, hist_b)
            got.append((out, sorted(hist_a.items()), sorted(hist_b.items())))
        assert got[0] == got[1]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.binary(max_size=20), st.binary(max_size=9)), max_size=8),
    st.booleans(),
    st.integers(0, 300),
)
def test_skip_elements_twin_zset_scores(members, binary, cut):
    layout = elements.LAYOUT_ZSET_BINARY if binary else elements.LAYOUT_ZSET_TEXT
    parts = []
    for m, score in members:
        if binary:
            parts.append(W.string(m) + (score * 8)[:8].ljust(8, b"\0"))
        else:  # 253-255: nan, inf, -inf (no text)
            parts.append(W.string(m) + (bytes([len(score)]) + score if score else b"\xfe"))
    buf = b"".join(parts)[: cut or None]
    got = []
    for fn in (speedups.compiled.skip_elements, elements.skip_elements):
        hist: dict = {}
        got.append((fn(buf, 0, len(members), layout, hist, None), sorted(hist.items())))
    assert got[0] == got[1]


def test_both_element_layouts_are_numbered_alike():
    for name in ("LAYOUT_STR", "LAYOUT_PAIR", "LAYOUT_ZSET_BINARY", "LAYOUT_ZSET_TEXT"):
        assert getattr(speedups.compiled, name) == getattr(elements, name), name


def test_both_row_batches_have_the_methods_their_callers_use():
    """RowBuilder and the parser call one interface, whichever batch runs."""
    from rdbscan.db import rows as R

    info = DumpInfo()
    for cls in (R.CompiledKeyColumns, R.PyKeyColumns):
        batch = cls(5, R.MemoryCosts(info, None), C.TYPE_NAMES, C.TYPE_ENCODINGS)
        assert (batch.n, batch.full, batch.dropped) == (0, False, 0), cls
        assert batch.scan(b"", 0, 0, 0, 44, 1 << 20, True, None) == (0, 0), cls
        batch.set_filter(min_length=2, snapshot_ms=lambda: 0)
        assert callable(batch.append), cls
        cols = batch.columns(1, None)
        assert len(cols) == len(KEYS_SCHEMA) and all(len(c) == 0 for c in cols), cls
    assert R.KeyColumns is R.CompiledKeyColumns


def test_each_layer_has_its_compiled_module_and_the_batch_is_the_walkers_sink():
    """The walkers and RowSink in the rdb layer's module, the batch and its column twins in the
    db layer's; the batch subclasses RowSink on both paths (rdb/sink.py: the pure twin), and
    RowSink itself, compiled or not, reads no record."""
    from rdbscan.db import rows as R
    from rdbscan.rdb import sink

    rdb, db = speedups.compiled, R.compiled
    assert db.__name__ == "rdbscan.db._batch" and rdb.__name__ == "rdbscan.rdb._speedups"
    for name in ("KeyColumns", "key_slot", "fast_family", "plain_key"):
        assert hasattr(db, name) and not hasattr(rdb, name), name
    for name in ("RowSink", "listpack_scan", "skip_elements", "LZFStream"):
        assert hasattr(rdb, name) and not hasattr(db, name), name
    assert issubclass(R.CompiledKeyColumns, rdb.RowSink)
    assert issubclass(R.PyKeyColumns, sink.RowSink)
    dump = W.rdb(W.key(0, b"k", W.string(b"v")), version=11)
    for base in (rdb.RowSink(), sink.RowSink()):
        assert base.scan(dump, 9, 0, 0, 44, 1 << 20, True, None) == (9, 0), base


def test_the_compiled_modules_are_built_from_the_sources_beside_them():
    """setup.py bakes each module's SHA-256 of the files backend.SOURCES and rows.SOURCES
    list (the .pyx, then the interface .pxd): the same lists, and this build is fresh."""
    import ast

    from common import ROOT

    from rdbscan.db import rows as R

    tree = ast.parse((ROOT / "setup.py").read_text())
    [modules] = [
        n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "MODULES"
    ]
    assert ast.literal_eval(modules) == {
        "rdbscan.rdb._speedups": speedups.SOURCES,
        "rdbscan.db._batch": R.SOURCES,
    }
    for module, sources in ((speedups.compiled, speedups.SOURCES), (R.compiled, R.SOURCES)):
        want = speedups.sources_sha256([str(ROOT / p) for p in sources])
        assert module.SOURCE_SHA256 == want and speedups.stale_reason(module, sources) is None
    assert speedups.stale == [] and speedups.describe() == "compiled"


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_stale_module_falls_back_on_its_own_layer(tmp_path):
    """A copy of the package whose _batch.pyx changed after the build runs the compiled walkers
    with the pure-Python batch (one warning); a changed interface (.pxd) makes both stale."""
    import os
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    probe = (
        "from rdbscan.db import rows; from rdbscan.rdb import backend; "
        "print(backend.compiled is not None, rows.KeyColumns.__name__, backend.describe())"
    )
    env = {k: v for k, v in os.environ.items() if k != "RDBSCAN_PURE_PYTHON"}
    env["PYTHONPATH"] = str(tmp_path)

    def run():
        out = subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        return out.stdout.split(" ", 2), out.stderr.splitlines()

    pkg = tmp_path / "rdbscan"
    shutil.copytree(
        Path(speedups.__file__).parent.parent,
        pkg,
        ignore=shutil.ignore_patterns("__pycache__", "*.c"),
    )
    assert run() == (["True", "CompiledKeyColumns", "compiled\n"], [])
    with open(pkg / "db" / "_batch.pyx", "a") as fh:
        fh.write("\n# a change pulled after the build\n")
    (walkers, batch, described), [warning] = run()
    assert (walkers, batch) == ("True", "PyKeyColumns")
    assert described.startswith("compiled (but a stale module")
    assert warning.startswith(
        "rdbscan: warning: the compiled speedups are stale (rdbscan.db._batch was built from "
        "another _batch.pyx or _speedups.pxd): using pure Python; rebuild with: pip install -e ."
    )
    with open(pkg / "rdb" / "_speedups.pxd", "a") as fh:
        fh.write("\n# a change pulled after the build\n")
    (walkers, batch, described), [warning] = run()
    assert (walkers, batch, described) == (
        "False",
        "PyKeyColumns",
        "pure Python (stale compiled module: rebuild with pip install -e .)\n",
    )
    assert warning.startswith(
        "rdbscan: warning: the compiled speedups are stale (rdbscan.rdb._speedups"
    )


def test_the_batch_does_not_refer_back_to_its_builder():
    """The compiled batch holds the memory model's costs, not the RowBuilder: no cycle."""
    import gc

    rows = RowBuilder(1, DumpInfo())
    assert rows not in gc.get_referents(rows.sink)
    assert rows.costs in gc.get_referents(rows.sink)


# -- the compiled record loop (RowSink.scan into KeyColumns) against the KeyRecord path ------

import io  # noqa: E402

from rdbscan.db.rows import PyKeyColumns, RowBuilder  # noqa: E402
from rdbscan.db.store import KEYS_SCHEMA, arrow_batch  # noqa: E402
from rdbscan.model import slots  # noqa: E402
from rdbscan.rdb.errors import RDBError  # noqa: E402
from rdbscan.rdb.parser import DumpInfo, parse  # noqa: E402


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=40))
def test_key_slot_twin(key):
    for k in (key, b"{" + key, key + b"{x}" + key, b"a{" + key + b"}b"):
        assert rows_module.compiled.key_slot(k) == slots.key_slot(k)


def intset(values, width) -> bytes:
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(values)) + b"".join(
        struct.pack(fmt, v) for v in sorted(values)
    )


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from([2, 4, 8]),
    st.lists(st.integers(-32768, 32767), max_size=10),
    st.binary(max_size=3),
    st.integers(0, 40),
)
def test_intset_twin(width, values, junk, cut):
    blob = intset(values, width)
    unsorted = W.intset(values, width)  # in the order drawn: refused unless ascending
    for b in (blob, blob + junk, blob[:cut], b"\x03" + blob[1:], unsorted):
        assert _outcome(speedups.compiled.intset_scan, b) == _outcome(blobs.intset_scan, b)


def _batch(rows: RowBuilder) -> list:
    cols = rows.take_keys()
    rows.reset()
    out = arrow_batch(KEYS_SCHEMA, cols).to_pylist()
    for r in out:  # type and encoding as the view `keys` computes them
        r["type"] = r["module_type"] or C.TYPE_NAMES[r["rdb_type"]]
        r["encoding"] = r["module_type"] or C.ENCODING_NAMES[r["encoding_id"]]
        # family: the compiled batch fills it where family.fast_family does, the Python path
        # leaves it to the INSERT (tests/test_family.py checks the stored column)
        family = r.pop("family")
        plain = r.pop("plain_key")  # the same for plain_key
        if not isinstance(rows.sink, PyKeyColumns):
            assert family == fast_family(r["key_raw"] or r["key"].encode())
            assert plain == plain_key(r["key_raw"] or r["key"].encode())
        else:
            assert family is None and plain is None
    return out


def _load_rows(data: bytes, compiled_rows: bool, batch_rows: int) -> tuple:
    """Rows, error and key count of `data` as load_one would produce them, without DuckDB."""
    info = DumpInfo()
    # compiled_rows false: the pure-Python batch, so every key takes the KeyRecord path
    rows = RowBuilder(
        1, info, batch_rows=batch_rows, columns=None if compiled_rows else PyKeyColumns
    )
    out, err, records = [], None, 0
    try:
        for rec in parse(io.BytesIO(data), info, size=len(data), sink=rows.sink):
            if rec is not None:
                rows.add(rec)
                records += 1
            if rows.full:
                out += _batch(rows)
    except RDBError as e:
        err = (type(e).__name__, str(e), e.offset)
    out += _batch(rows)
    return out, err, info.keys, records


KEY_NAMES = st.one_of(
    st.binary(max_size=12),
    st.sampled_from(
        [
            b"user:{42}:name",
            b"{}",
            "caf\u00e9:\u00fc".encode(),
            b"\xff\xfe",
            b"\xed\xa0\x80",
            b"x" * 70,
            b"",
        ]
    ),
)
BOUNDARY_TEXTS = [
    b"0",
    b"-0",
    b"007",
    b"12345",
    b"-12",
    b"9223372036854775807",
    b"9223372036854775808",
    b"-9223372036854775808",
    b"-9223372036854775809",
    b"123456789012345678901",
    b"1" * 20,
    b"a" * 39,
    b"a" * 40,
    b"a" * 44,
    b"a" * 45,
    b"b" * 300,
    b"",
]
STRING_TEXT = st.one_of(st.binary(max_size=50), st.sampled_from(BOUNDARY_TEXTS))
ELEMENT = st.one_of(st.integers(-(1 << 40), 1 << 40), st.binary(max_size=20))


@st.composite
def value_records(draw) -> bytes:
    """One key record (with optional expire / idle / freq opcodes) or another record the
    compiled loop must leave to the Python path."""
    kind = draw(
        st.sampled_from(
            [
                "str",
                "int",
                "lzf",
                "listpack",
                "intset",
                "ziplist",
                "set",
                "selectdb",
                "hash_hashtable",
                "quicklist",
                "quicklist",
            ]
        )
    )
    head = b""
    for op in draw(st.lists(st.sampled_from(["ms", "s", "idle", "freq"]), max_size=3)):
        if op == "ms":
            head += b"\xfc" + struct.pack("<q", draw(st.integers(-(1 << 62), 1 << 62)))
        elif op == "s":
            head += b"\xfd" + struct.pack("<i", draw(st.integers(-(1 << 31), (1 << 31) - 1)))
        elif op == "idle":
            head += b"\xf8" + W.length(draw(st.integers(0, 1 << 40)))
        else:
            head += b"\xf9" + bytes([draw(st.integers(0, 255))])
    name = draw(KEY_NAMES)
    wrap = W.lzf_string if draw(st.booleans()) else W.string
    if kind == "selectdb":
        return b"\xfe" + W.length(draw(st.integers(0, 20)))
    if kind == "str":
        return head + W.key(0, name, W.string(draw(STRING_TEXT)))
    if kind == "int":
        return head + W.key(0, name, W.int_string(draw(st.integers(-(1 << 31), (1 << 31) - 1))))
    if kind == "lzf":
        return head + W.key(0, name, W.lzf_string(draw(STRING_TEXT) + b"!"))
    if kind == "listpack":
        t = draw(st.sampled_from([16, 17, 20]))
        entries = draw(st.lists(ELEMENT, max_size=8))
        return head + W.key(t, name, wrap(W.listpack(entries)))
    if kind == "intset":
        width = draw(st.sampled_from([2, 4, 8]))
        values = draw(st.lists(st.integers(-32768, 32767), max_size=8, unique=True))
        return head + W.key(11, name, wrap(intset(values, width)))
    if kind == "ziplist":
        t = draw(st.sampled_from([10, 12, 13]))
        entries = draw(st.lists(ELEMENT, max_size=8))
        return head + W.key(t, name, wrap(W.ziplist(entries)))
    if kind == "quicklist":  # 1 node (the compiled loop) or more; v2 packed / plain, or v1
        t = draw(st.sampled_from([14, 18, 18]))
        nodes = b""
        n = draw(st.sampled_from([1, 1, 1, 2, 0]))
        for _ in range(n):
            entries = draw(st.lists(ELEMENT, max_size=6))
            container = draw(st.sampled_from([2, 2, 2, 1, 3])) if t == 18 else None
            blob = W.listpack(entries) if t == 18 else W.ziplist(entries)
            nodes += (W.length(container) if container is not None else b"") + wrap(blob)
        return head + W.key(t, name, W.length(n) + nodes)
    members = draw(st.lists(st.binary(max_size=10), min_size=1, max_size=5))
    if kind == "set":
        return head + W.key(
            2, name, W.length(len(members)) + b"".join(W.string(m) for m in members)
        )
    return head + W.key(
        4, name, W.length(len(members)) + b"".join(W.string(m) + W.string(m * 2) for m in members)
    )


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(
    st.lists(value_records(), max_size=25),
    st.sampled_from([9, 11, 12]),
    st.sampled_from([None, "2.8.24", "3.0.7", "7.2.4"]),
    st.integers(1, 9),
    st.sampled_from([reader.CHUNK, 7, 64]),
    st.data(),
)
def test_record_loop_rows_equal_keyrecord_rows(records, version, server, batch_rows, chunk, data):
    """The compiled record loop gives the rows, errors and key counts of the KeyRecord path,
    on valid and damaged dumps, whatever the buffer size and batch boundaries."""
    body = W.rdb(b"".join(records), version=version, aux={"redis-ver": server} if server else None)
    variants = [body]
    if body:
        damaged = bytearray(body)
        for _ in range(data.draw(st.integers(1, 3))):
            damaged[data.draw(st.integers(9, len(body) - 1))] = data.draw(st.integers(0, 255))
        variants += [bytes(damaged), body[: data.draw(st.integers(9, len(body)))]]
    for dump in variants:
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(reader, "CHUNK", chunk)
            fast = _load_rows(dump, True, batch_rows)
            ref = _load_rows(dump, False, batch_rows)
        assert fast[:3] == ref[:3]
    # The loop really ran: only the collections and nothing else came through as KeyRecords.
    assert fast[3] <= ref[3]


@pytest.mark.parametrize("version,server", [(6, None), (11, None), (11, "7.2.4")])
def test_record_loop_string_boundaries(version, server):
    """Every integer-text and embstr boundary, raw and LZF, under each server's rules."""
    recs = [W.key(0, b"r%d" % i, W.string(t)) for i, t in enumerate(BOUNDARY_TEXTS)]
    recs += [W.key(0, b"z%d" % i, W.lzf_string(t)) for i, t in enumerate(BOUNDARY_TEXTS) if t]
    recs += [
        W.key(0, b"i%d" % v, W.int_string(v))
        for v in (0, -1, 127, -128, 32767, -32768, 1 << 30, -(1 << 31))
    ]
    dump = W.rdb(b"".join(recs), version=version, aux={"redis-ver": server} if server else None)
    fast, ref = _load_rows(dump, True, 1000), _load_rows(dump, False, 1000)
    assert fast[:3] == ref[:3]
    assert fast[3] == 0 and ref[3] == len(recs)
    enc = {r["key"]: r["encoding"] for r in fast[0]}
    assert enc["r0"] == "int" and enc["r1"] != "int" and enc["r8"] != "int"
    # 44 bytes: embstr since Redis 3.2; RDB 6 (2.8 / 3.0, no aux) reads as 2.x: raw for all.
    assert (enc["r13"], enc["r14"]) == (("raw", "raw") if version == 6 else ("embstr", "raw"))


@pytest.mark.parametrize(
    "aux,valkey,version",
    [
        ({"redis-ver": "8.2.3"}, False, 12),
        ({"redis-ver": "8.6.3"}, False, 13),
        ({"valkey-ver": "8.1.1", "redis-ver": "7.2.4"}, False, 11),
        ({"valkey-ver": "9.1.2"}, True, 80),
    ],
)
def test_record_loop_strings_with_the_key_inside_the_object(aux, valkey, version):
    """Redis 8.2+ / Valkey 8.1+: embstr by key length, value length and TTL (kv.py), and the
    memory of key and value together: both paths give the same rows."""
    recs = []
    for klen in (1, 10, 20, 31, 32, 40, 90, 127, 128, 200):
        for vlen in (0, 1, 10, 20, 21, 22, 30, 31, 40, 44, 45, 60, 100, 114, 115, 127, 128):
            for ttl in (False, True):
                name = (b"k%d.%d.%d." % (klen, vlen, ttl)).ljust(klen, b"x")[: max(klen, 9)]
                head = b"\xfc" + struct.pack("<q", 1 << 41) if ttl else b""
                recs.append(head + W.key(0, name, W.string(b"v" * vlen)))
    dump = W.rdb(b"".join(recs), version=version, valkey=valkey, aux=aux)
    fast, ref = _load_rows(dump, True, 1000), _load_rows(dump, False, 1000)
    assert fast[:3] == ref[:3]
    assert fast[3] == 0 and ref[3] == len(recs)
    assert {r["encoding"] for r in fast[0]} == {"embstr", "raw"}


def test_record_loop_takes_the_common_keys():
    recs = [W.key(0, f"k{i}", W.string(f"v{i}")) for i in range(50)]
    recs += [b"\xfc" + struct.pack("<q", 1 << 41) + W.key(16, "h", W.string(W.listpack([1, b"a"])))]
    recs += [W.key(2, "set", W.length(1) + W.string("m"))]
    rows, err, keys, records = _load_rows(W.rdb(b"".join(recs)), True, 1000)
    assert err is None and keys == len(rows) == 52
    assert records == 1  # the hashtable set; 51 keys never became KeyRecords
    h = rows[50]
    assert (h["key"], h["type"], h["encoding"], h["length"], h["expire_at_ms"]) == (
        "h",
        "hash",
        "listpack",
        1,
        1 << 41,
    )


@pytest.mark.slow
def test_batches_after_a_module_value(tmp_path):
    """A module value's type name (the parser's encoding for it) stays in the compiled batch's
    name table for the batches after it, which hold no module value: every batch size gives
    the same rows."""
    dump = str(
        FIXTURES / "public" / "redis-rdb-cli" / "src" / "test" / "resources" / "rct" / "all.rdb"
    )
    tables = []
    for batch_rows in (1, 7, 100_000):
        db = str(tmp_path / f"b{batch_rows}.duckdb")
        [r] = load([dump], db, batch_rows=batch_rows)
        assert r.complete and r.error is None and r.keys == 270
        con = duckdb.connect(db, read_only=True)
        tables.append(con.execute(KEY_SQL).fetchall())
        assert con.execute(
            "SELECT count(*) FROM keys WHERE type = 'hellotype' "
            "AND encoding = 'raw' AND rdb_type = 7"
        ).fetchone() == (1,)
        assert con.execute(
            "SELECT count(*) FROM key_rows WHERE module_type = 'hellotype'"
        ).fetchone() == (1,)
        con.close()
    assert tables[0] == tables[1] == tables[2]


LZF_TEXT = st.one_of(
    st.binary(min_size=1, max_size=300),
    st.builds(lambda a, n: a * n, st.binary(min_size=1, max_size=12), st.integers(2, 60)),
)


def _lzf_tokens(data) -> tuple[bytes, int]:
    """LZF made of literal runs and back-references whose distance is drawn around the output
    written so far (one byte before its start is the edge liblzf refuses)."""
    out, payload = 0, bytearray()
    for _ in range(data.draw(st.integers(1, 6))):
        if out == 0 or data.draw(st.booleans()):
            n = data.draw(st.integers(1, 32))
            payload += bytes([n - 1]) + data.draw(st.binary(min_size=n, max_size=n))
            out += n
            continue
        length = data.draw(st.integers(3, 264))
        dist = data.draw(st.one_of(st.integers(max(1, out - 1), out + 1), st.integers(1, 8192)))
        short = min(length - 2, 7)
        head = (short << 5) | ((dist - 1) >> 8)
        payload.append(head)
        if short == 7:
            payload.append(length - 2 - 7)
        payload.append((dist - 1) & 0xFF)
        out += length
    return bytes(payload), out


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(LZF_TEXT, st.data())
def test_lzf_length_check_twin(text, data):
    """The compiled loop's LZF length check (a walk that counts what the LZF tokens would write)
    flags exactly the strings python-lzf's decompression (the KeyRecord path, and Redis's
    rdbLoadLzfStringObject) refuses: compressed payloads with back-references, then bytes
    changed, cut or added, and header lengths off by a little."""
    import lzf

    payload = lzf.compress(text) or bytes([len(text[:32]) - 1]) + text[:32]
    ulen = len(text) if lzf.compress(text) else len(text[:32])
    if data.draw(st.booleans()):  # tokens written by hand: back-references near the start
        payload, ulen = _lzf_tokens(data)
    change = data.draw(st.sampled_from(["none", "byte", "cut", "extra", "ulen"]))
    if change == "byte":
        b = bytearray(payload)
        b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
        payload = bytes(b)
    elif change == "cut" and len(payload) > 1:
        payload = payload[: data.draw(st.integers(1, len(payload) - 1))]
    elif change == "extra":
        payload += data.draw(st.binary(min_size=1, max_size=4))
    elif change == "ulen":
        ulen = max(1, ulen + data.draw(st.integers(-3, 3)))
    try:
        out = lzf.decompress(payload, ulen)
        refused = out is None or len(out) != ulen
    except ValueError:
        refused = True
    if not reader.lzf_sizes_ok(len(payload), ulen):
        return  # refused earlier, as damage, by both paths (test_record_loop_rows_...)
    record = W.key(0, b"k", b"\xc3" + W.length(len(payload)) + W.length(ulen) + payload)
    dump = W.rdb(record, version=11)
    fast = _load_rows(dump, True, 1)
    ref = _load_rows(dump, False, 1)
    assert fast[:3] == ref[:3]
    (row,) = fast[0]
    lzf_length = C.INVALID_IDS["lzf length"]  # extras[9] (SQL, 1-based): extras[8] here
    flagged = row["extras"] is not None and len(row["extras"]) >= 9 and row["extras"][8]
    assert (flagged == lzf_length) if refused else not flagged
