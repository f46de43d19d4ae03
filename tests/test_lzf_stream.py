"""LZF decompression in pieces (rdbscan/rdb/lzf_stream.py and its compiled twin) against
python-lzf's whole decompression: the same output, cut into pieces at every kind of boundary
(a control byte, a back-reference's second or third byte, inside a literal run), and the same
refusals of corrupt payloads (a back-reference before the start, output longer or shorter than
the header's length, an instruction cut at the end)."""

from __future__ import annotations

import io

import lzf
import pytest
from common import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from rdbscan.rdb import backend, lzf_stream, reader

TWINS = [lzf_stream.LZFStream]
if backend.compiled is not None:
    TWINS.append(backend.compiled.LZFStream)


def whole(data: bytes, ulen: int):
    """What Redis (and rdbscan's whole path) makes of an LZF payload: its output or None."""
    if ulen == 0:
        return b""
    try:
        out = lzf.decompress(data, ulen)
    except (ValueError, SystemError):
        return None
    return out if out is not None and len(out) == ulen else None


def streamed(cls, data: bytes, ulen: int, cuts) -> bytes | None:
    """The payload fed to cls in the pieces `cuts` makes; None when it refuses it."""
    dec = cls(ulen)
    out = []
    bounds = [0, *sorted(c for c in cuts if 0 < c < len(data)), len(data)]
    try:
        for a, b in zip(bounds, bounds[1:]):
            piece = dec.decode(data[a:b])
            assert len(piece) <= 88 * (b - a + 40)  # output per piece stays bounded
            out.append(piece)
        dec.finish()
    except ValueError:
        return None
    return b"".join(out)


def check(data: bytes, ulen: int, cuts) -> None:
    want = whole(data, ulen)
    for cls in TWINS:
        assert streamed(cls, data, ulen, cuts) == want, cls
    if ulen > 0:
        assert reader.lzf_whole(data, ulen) == want  # the pure path's whole decoder
    if backend.compiled is not None and ulen > 0:
        # the compiled whole decoder of a container's LZF blob (_speedups._lzf_decode), at the
        # end of its buffer and with 40 more bytes after it (its 16-byte copies then read on)
        assert backend.compiled.lzf_decode(data, ulen) == want
        assert backend.compiled.lzf_decode(data + bytes(range(40)), ulen, len(data)) == want


def _sample() -> bytes:
    """Data with literal runs, short and long back-references, near and far (8 KiB)."""
    parts = []
    for i in range(3000):
        parts.append(b"key:%d:" % (i * 7919 % 1000))
        parts.append(b"z" * (i % 300))
        if i % 50 == 0:
            parts.append(bytes(range(256)))
    return b"".join(parts)


@pytest.mark.slow
def test_every_cut_point_of_a_payload_with_every_instruction_kind():
    data = _sample()[:40000]
    comp = lzf.compress(data)
    ip = 0
    kinds = set()  # the instruction kinds the payload holds
    while ip < len(comp):
        c = comp[ip]
        if c < 32:
            kinds.add("literal")
            ip += c + 2
        elif c >> 5 == 7:
            kinds.add("long")
            ip += 3
        else:
            kinds.add("short")
            ip += 2
    assert kinds == {"literal", "short", "long"}
    for cut in range(len(comp) + 1):
        check(comp, len(data), [cut])
    check(comp, len(data), range(len(comp)))  # one byte at a time


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000), st.integers(1, 40), st.data())
def test_random_data_any_pieces(raw, repeat, data):
    payload = (raw * repeat)[:20000]
    comp = lzf.compress(payload) if payload else None
    if not comp:
        return
    cuts = data.draw(st.lists(st.integers(0, len(comp)), max_size=30))
    check(comp, len(payload), cuts)
    check(comp, len(payload) + data.draw(st.integers(-5, 5)), cuts)  # header length wrong


@pytest.mark.slow
@settings(max_examples=1000, deadline=None)
@given(st.binary(min_size=1, max_size=2000), st.data())
def test_corrupt_payloads_are_refused_as_whole_decompression_refuses_them(raw, data):
    payload = raw * 3
    comp = bytearray(lzf.compress(payload) or b"\x00a")
    for _ in range(data.draw(st.integers(0, 4))):
        comp[data.draw(st.integers(0, len(comp) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(1, len(comp)))
    ulen = data.draw(st.sampled_from([len(payload), len(payload) + 1, max(len(payload) - 1, 1)]))
    cuts = data.draw(st.lists(st.integers(0, cut), max_size=10))
    check(bytes(comp[:cut]), ulen, cuts)


@settings(max_examples=500, deadline=None)
@given(st.binary(min_size=1, max_size=300), st.integers(1, 100_000), st.data())
def test_garbage(garbage, ulen, data):
    check(garbage, ulen, data.draw(st.lists(st.integers(0, len(garbage)), max_size=5)))


def test_a_back_reference_before_the_start_and_one_at_the_start():
    # a literal 'a', then a back-reference of length 3 at distance 2 (before the start)
    check(b"\x00a\x20\x01", 4, [])
    check(b"\x00a\x20\x01", 4, [3])
    # distance 1 (the byte just written): 'aaaa'
    assert whole(b"\x00a\x20\x00", 4) == b"aaaa"
    check(b"\x00a\x20\x00", 4, [1, 2, 3])


def _lzf_strings_in_fixtures() -> list:
    """The LZF strings Redis wrote into the fixture dumps (0xC3, compressed and uncompressed
    lengths, data), found by their shape and kept when python-lzf decompresses them."""
    from rdbscan.rdb.reader import Reader, lzf_sizes_ok

    found = []
    for path in sorted(FIXTURES.rglob("*.rdb")):
        data = path.read_bytes()
        i = data.find(b"\xc3")
        mine = 0
        while i >= 0 and mine < 10:
            try:
                r = Reader(io.BytesIO(data[i + 1 : i + 21]), crc=False)
                clen, ulen = r.length(), r.length()
                at = i + 1 + r.tell()
            except Exception:
                clen = ulen = at = 0
            if ulen and lzf_sizes_ok(clen, ulen) and at + clen <= len(data):
                comp = data[at : at + clen]
                if whole(comp, ulen) is not None:
                    found.append((comp, ulen))
                    mine += 1
            i = data.find(b"\xc3", i + 1)
    return found


@pytest.mark.slow
def test_real_payloads():
    """LZF strings as Redis wrote them in the fixture dumps, cut every few bytes."""
    payloads = _lzf_strings_in_fixtures()
    assert len(payloads) >= 20
    for comp, ulen in payloads:
        for piece in (1, 3, 64):
            check(comp, ulen, range(0, len(comp), piece))


def test_real_fixture_files_compressed_by_liblzf():
    """Whole fixture files compressed by liblzf (the compressor Redis uses), in 64 KiB pieces
    and in odd ones."""
    for path in sorted(FIXTURES.rglob("*.rdb"))[:40]:
        data = path.read_bytes()[: 1 << 20]
        comp = lzf.compress(data)
        if not comp:
            continue
        check(comp, len(data), range(0, len(comp), 65536))
        check(comp, len(data), range(0, len(comp), 997))


def test_the_window_reaches_8_KiB_back_across_pieces():
    head = bytes(range(256)) * 32  # 8 KiB
    data = head + b"x" * 10 + head  # the tail repeats bytes up to 8 KiB + 10 back
    comp = lzf.compress(data)
    for piece in (1, 5, 100, 8192):
        check(comp, len(data), range(0, len(comp), piece))
