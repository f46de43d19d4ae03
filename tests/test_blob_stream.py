"""Blobs longer than blob_stream.WHOLE_MAX are walked as a stream (rdbscan/rdb/blob_stream.py,
docs/hostile-inputs.md): the streamed walkers, compiled and pure, must give exactly what the
whole-blob walkers give (counts, longest element, refusals, errors) with entries cut across
pieces anywhere; a dump read with a threshold of 0 and 7-byte pieces must give the same rows
as read whole; and an LZF-compressed value or key name of many MB is never held whole."""

from __future__ import annotations

import io
import os
import struct
import subprocess
import sys
import tracemalloc
from pathlib import Path

import lzf
import pytest
import rdbwriter as W
from common import FIXTURE_DUMPS
from hypothesis import given, settings
from hypothesis import strategies as st

from rdbscan.rdb import backend, blob_source, blob_stream, blobs, reader
from rdbscan.rdb.errors import BlobError, BlobRefused, RDBError
from rdbscan.rdb.long_names import KEY_KEEP, LongName
from rdbscan.rdb.parser import DumpInfo, parse
from rdbscan.rdb.records import KeyRecord

DUMPS = FIXTURE_DUMPS

# (whole-blob walker, its streamed twins)
STREAMED = [
    (blobs.listpack_scan, [blob_stream.listpack_stream_scan]),
    (blobs.ziplist_scan, [blob_stream.ziplist_stream_scan]),
    (blobs.intset_scan, [blob_stream.intset_stream_scan]),
    (blobs.zipmap_scan, [blob_stream.zipmap_stream_scan]),
]
if backend.compiled is not None:
    STREAMED[0][1].append(backend.compiled.listpack_stream_scan)
    STREAMED[1][1].append(backend.compiled.ziplist_stream_scan)


def _outcome(call):
    try:
        return call()
    except BlobRefused as e:
        return ("refused", str(e), e.kind, e.result)
    except BlobError as e:
        return ("error", str(e))


def same_both_ways(blob: bytes, piece: int, *args) -> None:
    """Every walker: the blob walked whole and walked in `piece`-byte pieces give the same."""
    for whole, twins in STREAMED:
        if args and whole in (blobs.intset_scan, blobs.zipmap_scan):
            continue
        want = _outcome(lambda: whole(blob, *args))
        for twin in twins:
            src = blob_source.bytes_source(blob, piece)
            got = _outcome(lambda: src.walk(twin, *args))
            assert got == want, (twin, blob, piece)


def zipmap(pairs, free: int = 0) -> bytes:
    """A zipmap (Redis <= 2.4, docs/rdb-format.md section 5.4)."""

    def ln(n: int) -> bytes:
        return bytes([n]) if n < 254 else b"\xfe" + struct.pack("<I", n)

    body = b"".join(
        ln(len(k)) + k + ln(len(v)) + bytes([free]) + v + b"\0" * free for k, v in pairs
    )
    return bytes([min(len(pairs), 254)]) + body + b"\xff"


ENTRY = st.one_of(
    st.integers(-(1 << 63), (1 << 63) - 1),
    st.integers(-5000, 5000),
    st.binary(max_size=80),
    st.binary(min_size=120, max_size=300),
    st.binary(min_size=4000, max_size=20000),
)


def _blobs(entries) -> list:
    byts = [e for e in entries if isinstance(e, bytes)]
    ints = sorted({e for e in entries if isinstance(e, int) and -(1 << 31) <= e < 1 << 31})
    return [
        W.listpack(entries),
        W.ziplist(entries),
        W.intset(ints, 4),
        W.intset([e for e in ints if -32768 <= e < 32768], 2),
        zipmap(list(zip(byts[::2], byts[1::2]))),
    ]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(ENTRY, max_size=14), st.integers(1, 20), st.booleans())
def test_valid_blobs_walk_the_same_streamed(entries, piece, members_only):
    for blob in _blobs(entries):
        same_both_ways(blob, piece)
        same_both_ways(blob, piece, members_only)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.lists(ENTRY, max_size=8), st.data())
def test_damaged_and_refused_blobs_walk_the_same_streamed(entries, data):
    """Mutated bytes (back-lengths, prevlens, counts, tails, the terminator, encodings), cuts,
    a fixed-up header size so that the walk itself meets the damage."""
    for blob in _blobs(entries):
        b = bytearray(blob)
        for _ in range(data.draw(st.integers(0, 4))):
            if b:
                b[data.draw(st.integers(0, len(b) - 1))] = data.draw(st.integers(0, 255))
        cut = data.draw(st.integers(0, len(b)))
        damaged = bytes(b[:cut])
        fixed = struct.pack("<I", len(damaged)) + damaged[4:] if len(damaged) >= 4 else damaged
        piece = data.draw(st.integers(1, 12))
        for x in (bytes(b), damaged, fixed):
            same_both_ways(x, piece)
            same_both_ways(x, piece, True)


def test_every_piece_size_on_one_blob_of_each_kind():
    entries = [b"a" * n for n in (0, 1, 63, 64, 127, 128, 4095, 4096, 16500)] + [
        0,
        12,
        13,
        127,
        128,
        -4096,
        4095,
        32767,
        -32768,
        1 << 23,
        1 << 31,
        -(1 << 63),
    ]
    for blob in _blobs(entries):
        for piece in range(1, 40):
            same_both_ways(blob, piece)


# -- whole dumps: a threshold of 0 and 7-byte pieces give the records of a whole read ---------


def _norm(v) -> str:
    return repr(sorted(v.items()) if isinstance(v, dict) else v)  # histograms: any order


def _read_dump(path: str, skip_bad: bool) -> tuple:
    """Every record of a dump (all its fields), its error and what DumpInfo counted."""
    info = DumpInfo()
    recs = []
    err = None
    try:
        with open(path, "rb") as f:
            for r in parse(f, info, skip_bad=skip_bad):
                if r is not None:
                    recs.append(tuple(_norm(getattr(r, s, None)) for s in KeyRecord.__slots__))
    except RDBError as e:
        err = (type(e).__name__, e.describe())
    return recs, err, info.invalid_keys, info.skipped_keys, info.complete, info.keys


def compare_fixtures(skip_bads) -> int:
    """Read every fixture whole, then with every blob streamed (threshold 0, 7-byte pieces,
    257-byte reads); the number of records compared (AssertionError on a difference)."""
    seen = 0
    for skip_bad in skip_bads:
        for path in DUMPS:
            whole = _read_dump(path, skip_bad)
            saved = blob_stream.WHOLE_MAX, blob_source.PIECE, reader.CHUNK
            blob_stream.WHOLE_MAX, blob_source.PIECE, reader.CHUNK = 0, 7, 257
            try:
                streamed = _read_dump(path, skip_bad)
            finally:
                blob_stream.WHOLE_MAX, blob_source.PIECE, reader.CHUNK = saved
            assert streamed == whole, (path, skip_bad)
            seen += len(whole[0])
    return seen


@pytest.mark.slow
def test_every_fixture_reads_the_same_streamed():
    """Every fixture dump (listpacks, ziplists, intsets, zipmaps, LZF or not, quicklist nodes,
    the damaged ones of Redis's own tests, with and without --skip-bad) read with every blob
    streamed gives the records, flags and errors of a whole read."""
    assert compare_fixtures((False, True)) > 20_000


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.skipif(
    backend.compiled is None,
    reason="this process runs the pure-Python path: the test above is this one here",
)
def test_every_fixture_reads_the_same_streamed_in_pure_python():
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from rdbscan.rdb import backend; "
        "assert backend.compiled is None; import test_blob_stream as t; "
        "print(t.compare_fixtures((False,)))"
    )
    env = {**os.environ, "RDBSCAN_PURE_PYTHON": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code, str(Path(__file__).parent)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert int(out.stdout) > 10_000


# -- the reader: errors of the input come first, as when a blob is read whole -----------------


def _read(data: bytes, whole_max, walker=blob_stream.listpack_stream_scan, size=True):
    """Read one blob STR from `data` with the given threshold and walk it; the outcome."""
    r = reader.Reader(io.BytesIO(data), size=len(data) if size else None)
    try:
        b = r.string("blob", whole_max=whole_max)
        if isinstance(b, bytes):
            return ("whole", _outcome(lambda: blobs.listpack_scan(b)), r.tell())
        return ("whole", _outcome(lambda: b.walk(walker)), r.tell())
    except RDBError as e:
        return (type(e).__name__, e.message, e.offset)


@pytest.mark.parametrize("size", [True, False])
@pytest.mark.parametrize("piece", [7, 65536])
def test_truncated_and_corrupt_blobs_give_the_errors_of_a_whole_read(monkeypatch, size, piece):
    monkeypatch.setattr(blob_source, "PIECE", piece)
    lp = W.listpack([b"x" * 30, 5, b"y" * 100] * 50)
    bad_lp = lp[:40] + b"\xf9" + lp[41:]  # an invalid encoding byte inside
    comp = lzf.compress(lp)
    lzf_str = b"\xc3" + W.length(len(comp)) + W.length(len(lp)) + comp
    cases = [
        W.string(lp),
        W.string(bad_lp),
        W.string(lp)[:-10],  # cut short
        W.string(bad_lp)[:-10],  # damaged, then cut short: the truncation is named
        lzf_str,
        lzf_str[:-3],
        b"\xc3" + W.length(len(comp)) + W.length(len(lp) + 1) + comp,  # longer than the output
        b"\xc3" + W.length(len(comp)) + W.length(len(lp) - 1) + comp,  # shorter
        lzf_str[:30] + b"\xff\xff" + lzf_str[32:],  # garbage inside
        W.lzf_string(bad_lp),  # decompresses, then the walk fails
        W.lzf_string(bad_lp)[:-1] + b"",  # cut inside the last literal run
    ]
    for data in cases:
        for tail in (b"", b"more bytes after the blob"):
            want = _read(data + tail, None, size=size)
            assert _read(data + tail, 0, size=size) == want
            if backend.compiled is not None:
                got = _read(data + tail, 0, backend.compiled.listpack_stream_scan, size=size)
                assert got == want


# -- the parser: LZF values and names of many MB, never held whole ----------------------------


def _lzf(data: bytes) -> bytes:
    """An LZF STR as Redis writes it (liblzf), or of literal runs if liblzf gives up."""
    comp = lzf.compress(data)
    if comp is None:
        return W.lzf_string(data)
    return b"\xc3" + W.length(len(comp)) + W.length(len(data)) + comp


def _parse(data: bytes, skip_bad: bool = False) -> tuple[list, int, DumpInfo]:
    """Parse an RDB; (records, tracemalloc peak in bytes, info)."""
    info = DumpInfo()
    tracemalloc.start()
    try:
        recs = list(parse(io.BytesIO(data), info, skip_bad=skip_bad))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return [r for r in recs if r is not None], peak, info


def _big_hash_listpack(pairs: int) -> bytes:
    """A hash listpack of `pairs` field/value pairs, 4 KiB values (the header's count: 65535,
    not counted)."""
    body = (W._lp_entry(b"field:%08d" % 7) + W._lp_entry(bytes(range(256)) * 16)) * pairs
    return struct.pack("<IH", 6 + len(body) + 1, 65535) + body + b"\xff"


def test_an_lzf_listpack_of_many_MB_is_walked_in_pieces():
    pairs = 14_000 if backend.compiled is not None else 2_900  # 57 MB; 12 MB in pure Python
    lp = _big_hash_listpack(pairs)
    size = len(lp)
    assert size == 4119 * pairs + 7
    data = W.rdb(b"\xfe\x00" + b"\x10" + W.string(b"h") + _lzf(lp) + W.key(0, "s", W.string("v")))
    del lp
    recs, peak, info = _parse(data)
    assert [(r.key, r.length, r.max_elem, r.blob_bytes) for r in recs] == [
        (b"h", pairs, 4096, size),
        (b"s", 1, 1, 0),
    ]
    assert peak < size / 2.5, peak  # whole: the blob and its copy


def test_streamed_blobs_give_the_records_of_whole_ones(monkeypatch):
    """One dump of every walked kind, LZF and not, read whole and with a threshold of 0."""
    zm = zipmap([(b"f%d" % i, b"v" * i) for i in range(40)])
    lp = W.listpack([b"a" * i for i in range(60)])
    zl = W.ziplist([b"a" * i for i in range(60)])
    values = [
        (16, W.string(lp)),
        (16, _lzf(lp)),
        (17, _lzf(W.listpack([b"m", 1, b"n", 2]))),
        (20, _lzf(lp)),
        (11, _lzf(W.intset(list(range(500)), 2))),
        (11, W.string(W.intset([3, 2, 1], 2))),  # refused: out of order
        (9, _lzf(zm)),
        (10, _lzf(zl)),
        (13, W.string(W.ziplist([b"f", b"v"], count=7))),  # refused: count
        (18, W.length(2) + W.length(2) + _lzf(lp) + W.length(2) + W.string(lp)),
        (14, W.length(1) + _lzf(zl)),
        (16, W.lzf_string(lp[:-1] + b"\x00")),  # refused: terminator
    ]
    body = b"\xfe\x00" + b"".join(W.key(t, b"k%d" % i, v) for i, (t, v) in enumerate(values))
    data = W.rdb(body, version=9)

    def rows():
        recs, _, info = _parse(data)
        fields = [tuple(getattr(r, s, None) for s in KeyRecord.__slots__) for r in recs]
        return fields, info.invalid_keys

    whole = rows()
    monkeypatch.setattr(blob_stream, "WHOLE_MAX", 0)
    monkeypatch.setattr(blob_source, "PIECE", 5)
    assert rows() == whole
    assert whole[1] == 3


def _stream_with_node(lp: bytes) -> bytes:
    """A stream key (type 15) of one node holding `lp`, no groups."""
    body = W.length(1) + W.string(struct.pack(">QQ", 1, 0)) + _lzf(lp)
    body += W.length(1) + W.length(1) + W.length(0) + W.length(0)
    return W.key(15, "stream", body)


def test_a_stream_node_longer_than_the_threshold_is_walked_not_decoded(monkeypatch):
    """A node listpack longer than blob_stream.STREAM_NODE_WHOLE_MAX (an entry of megabytes) is
    walked in pieces instead of decoded: the stream keeps its row, its longest listpack entry
    as its longest element (here the same record as a whole read), and dumps.cut counts it."""
    lp = W.listpack([1, 0, 1, "f", 0, 2, 0, 0, b"v" * 5000, 4])  # one entry, same fields
    data = W.rdb(b"\xfe\x00" + W.key(0, "a", W.string("1")) + _stream_with_node(lp))
    whole, _, info = _parse(data)
    assert info.cut == {}
    monkeypatch.setattr(blob_stream, "STREAM_NODE_WHOLE_MAX", 1000)
    walked, _, info = _parse(data)
    assert info.cut == {"stream_nodes": 1} and info.complete
    assert [(r.key, r.length, r.max_elem) for r in walked] == [(b"a", 1, 1), (b"stream", 1, 5000)]
    slots = type(whole[0]).__slots__
    assert [[getattr(r, k, None) for k in slots] for r in walked] == [
        [getattr(r, k, None) for k in slots] for r in whole
    ]


def test_an_lzf_key_name_streams_into_the_long_name():
    """An LZF-compressed name longer than KEY_KEEP: the prefix, length, hash and slot of the
    same bytes written plain, never held whole."""
    name = b"user:{tag-%d}:" % 7 + b"abc" * (8 << 20)  # 24 MiB
    plain = W.rdb(b"\xfe\x00\x00" + W.string(name) + W.string(b"v"))
    packed = W.rdb(b"\xfe\x00\x00" + _lzf(name) + W.string(b"v"))
    want = LongName().update(name)
    del name
    got = []
    for data in (plain, packed):
        recs, peak, _ = _parse(data)
        (r,) = recs
        got.append((r.key, r.long_key, r.length))
        assert peak < 16 << 20, peak  # whole: the 24 MiB name and its copy
    assert got[0] == got[1] == (want.head, (want.length, want.digest(), want.slot()), 1)
    assert len(want.head) == KEY_KEEP


def test_an_lzf_key_name_that_does_not_decompress_is_refused_as_before():
    name = b"n" * 5000
    comp = lzf.compress(name)
    bad = b"\xc3" + W.length(len(comp)) + W.length(len(name) + 3) + comp  # claims 3 bytes more
    data = W.rdb(b"\xfe\x00\x00" + bad + W.string(b"v") + W.key(0, "b", W.string("1")))
    with pytest.raises(RDBError) as e:
        _parse(data)
    assert e.value.message == "key name: LZF data does not decompress to 5003 bytes"
    recs, _, info = _parse(data, skip_bad=True)
    assert [r.key for r in recs] == [b"b"] and info.skipped_keys == 1


def test_long_aux_fields_and_consumer_names_are_read_in_pieces():
    """Strings that are neither keys nor values (an aux field, a function library, a consumer
    group's name) keep their first bytes and are read past, never held whole; an aux value is
    stored cut at 4,096 characters and counted as cut, as a plain one is."""
    from rdbscan.rdb.stream_values import NAME_KEEP

    value = b"x" * (12 << 20)
    group = b"g" * (12 << 20)
    stream = W.length(1) + W.string(struct.pack(">QQ", 1, 0))
    stream += W.string(W.listpack([1, 0, 1, "f", 0, 2, 0, 0, b"v", 4]))
    stream += W.length(1) + W.length(1) + W.length(0) + W.length(1)
    stream += _lzf(group) + W.length(1) + W.length(0) + W.length(0) + W.length(0)
    for aux in (W.string(value), _lzf(value)):
        data = W.rdb(b"\xfa" + W.string("big") + aux + b"\xfe\x00" + W.key(15, "s", stream))
        recs, peak, info = _parse(data)
        assert info.aux["big"] == "x" * 4096 and info.cut == {"aux_value": 1}
        (rec,) = recs
        assert rec.stream.groups[0].name == group[:NAME_KEEP]
        assert peak < 8 << 20, peak  # whole: the 12 MiB value (and its copy)
