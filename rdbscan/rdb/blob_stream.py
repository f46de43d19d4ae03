"""Blobs longer than WHOLE_MAX (a listpack, ziplist, intset or zipmap of up to the 1 GiB item
cap, LZF-compressed or not) walked as a stream, never held whole (docs/hostile-inputs.md).

A blob_source.BlobSource gives the walker the blob's bytes through a window: plain bytes read from
the input in pieces, or LZF output decoded piece by piece (lzf_stream.LZFStream).  The walkers here are
blobs.py's walkers rewritten over that window, with the same decoding of the blob's header
(blobs.listpack_header, blobs.ziplist_header) and of an entry header (blobs._LP_SHORT and
_lp_entry, blobs._zl_entry) and the same checks after the walk (_lp_end,
_zl_end): the same counts, longest element, refusals (BlobRefused) and errors (BlobError),
checked against them on every fixture blob and on generated ones cut into 7-byte pieces
(tests/test_blob_stream.py).  listpack_stream_scan and
ziplist_stream_scan have compiled twins (_speedups.pyx, picked by backend.py); the intset walk
is vectorised per piece and the zipmap one (Redis <= 2.4) is Python only.

Blobs whose entries must be decoded (stream nodes, hash field-TTL listpacks) are not walked
here: above DECODE_MAX they are refused (values.ValueReader.blob).
"""

from __future__ import annotations

import sys
from array import array
from operator import lt
from struct import error as StructError

from .blob_source import BlobSource
from .blobs import (
    _LP_SHORT,
    _backlen,
    _decoded_backlen,
    _lp_end,
    _lp_entry,
    _zl_end,
    _zl_entry,
    listpack_header,
    ziplist_header,
)
from .errors import BlobError, BlobRefused
from .reader import U32, int_text_len

# Blobs up to this many bytes (uncompressed) are read whole and walked by the fast walkers;
# longer ones stream.  Peak memory of a streamed blob: one input chunk (reader.CHUNK), one
# piece of input (blob_source.PIECE), the output of LZF_PIECE bytes of LZF (at most 88 times
# that), the window.
WHOLE_MAX = 8 << 20
# Blobs whose entries are decoded one by one (stream nodes, hash field-TTL listpacks) are read
# whole up to this many bytes and refused above it (values.ValueReader.blob).  Real servers keep
# stream nodes near stream-node-max-bytes (4 KiB) and field-TTL hashes at hash-max-listpack-*.
DECODE_MAX = 8 << 20
# Stream nodes longer than this are walked, not decoded (stream_values.StreamValues._long_node):
# a threshold of their own, as the walk gives their longest entry rather than their longest element.
STREAM_NODE_WHOLE_MAX = 8 << 20


def listpack_stream_scan(src: BlobSource, members_only: bool = False) -> tuple[int, int]:
    """blobs.listpack_scan over a BlobSource (the same entry decoding, blobs._lp_entry)."""
    n = src.n
    b, off = src.window(0, 16)
    end = off + len(b)
    count = listpack_header(n, b)
    p = 6
    i = 0
    mx = 0
    last = n - 1
    bad = None
    try:
        while True:
            if p + 10 > end and end < n:
                # the next entry's header; 8 bytes before it stay for a short back-length
                b, off = src.window(p - 8 if p > 8 else 0, p + 10)
                end = off + len(b)
            x = p - off
            c = b[x]
            if p == last or c == 0xFF:
                break
            ln, sz = _LP_SHORT[c] if c < 0xC0 else _lp_entry(b, x, p)
            q = p + sz + (1 if sz <= 127 else _backlen(sz))
            if q > last:
                raise BlobError("listpack entry runs past the end of the blob")
            if q > end:  # the entry ends past the window: its back-length is what is needed
                b, off = src.window(q - 5, q + 10)
                end = off + len(b)
            y = q - off
            if (b[y - 1] != sz or sz > 127) and bad is None:
                back = _decoded_backlen(b, y - 1)
                if back != sz:
                    bad = (p, back, sz)
            p = q
            if ln > mx and (not members_only or not i & 1):
                mx = ln
            i += 1
    except (IndexError, StructError):
        raise BlobError("listpack entry runs past the end of the blob") from None
    _lp_end(b, last - off, p, last, count, bad, i, mx)
    return i, mx


def ziplist_stream_scan(src: BlobSource, members_only: bool = False) -> tuple[int, int]:
    """blobs.ziplist_scan over a BlobSource (the same entry decoding, blobs._zl_entry)."""
    n = src.n
    b, off = src.window(0, 16)
    end = off + len(b)
    count, tail = ziplist_header(n, b)
    p = 10
    i = 0
    mx = 0
    last = n - 1
    start = 0
    prev = 0
    bad = None
    try:
        while True:
            if p + 16 > end and end < n:  # the next entry's prevlen and encoding
                b, off = src.window(p, p + 16)
                end = off + len(b)
            x = p - off
            if b[x] == 0xFF or p == last:
                break
            back, ln, size = _zl_entry(b, x, p)
            if back != prev and bad is None:
                bad = (p, back, prev)
            start = p
            p += size
            if p > last:
                raise BlobError("ziplist entry runs past the end of the blob")
            prev = size
            if ln > mx and (not members_only or not i & 1):
                mx = ln
            i += 1
    except (IndexError, StructError):
        raise BlobError("ziplist entry runs past the end of the blob") from None
    _zl_end(b, last - off, p, last, count, tail, start, bad, i, mx)
    return i, mx


def intset_stream_scan(src: BlobSource) -> tuple[int, int]:
    """blobs.intset_scan over a BlobSource (members compared a window at a time)."""
    n = src.n
    if n < 8:
        raise BlobError(f"intset of {n} bytes is shorter than its header")
    b, off = src.window(0, 8)
    width = U32.unpack_from(b, 0)[0]
    count = U32.unpack_from(b, 4)[0]
    if width not in (2, 4, 8):
        raise BlobError(f"intset has invalid integer width {width}")
    if 8 + count * width != n:
        raise BlobError(
            f"intset of {count} x {width}-byte members must be {8 + count * width} "
            f"bytes, blob has {n}"
        )
    if count == 0:
        raise BlobRefused("intset has no members", "intset empty", (0, 0))
    code = {2: "h", 4: "i", 8: "q"}[width]
    p = 8
    k = 0  # members seen
    first = before = None
    bad = None  # the first member not above the one before: (index, member, the one before)
    while p < n:
        b, off = src.window(p, p + width)
        x = p - off
        whole = (len(b) - x) // width * width
        members = array(code, b[x : x + whole])
        if sys.byteorder == "big":
            members.byteswap()
        if first is None:
            first = members[0]
        if bad is None:
            if before is not None and members[0] <= before:
                bad = (k, members[0], before)
            elif not all(map(lt, members[:-1], members[1:])):
                j = next(j for j in range(1, len(members)) if members[j] <= members[j - 1])
                bad = (k + j, members[j], members[j - 1])
        before = members[-1]
        k += len(members)
        p += whole
    result = (count, max(int_text_len(first), int_text_len(before)))  # type: ignore[arg-type]
    if bad is not None:
        raise BlobRefused(
            f"intset member {bad[0]} ({bad[1]}) is not above the one before ({bad[2]})",
            "intset order",
            result,
        )
    return result


def zipmap_stream_scan(src: BlobSource) -> tuple[int, int]:
    """blobs.zipmap_scan over a BlobSource."""
    n = src.n
    b, off = src.window(0, 16)
    end = off + len(b)
    p = 1
    pairs = 0
    mx = 0
    try:
        while True:
            if p + 6 > end and end < n:  # a field's length (1 or 5 bytes)
                b, off = src.window(p, p + 6)
                end = off + len(b)
            c = b[p - off]
            if c == 255:
                break
            if c < 254:
                klen = c
                p += 1
            else:
                klen = U32.unpack_from(b, p - off + 1)[0]
                p += 5
            p += klen
            if p + 6 > end and end < n:  # its value's length and free bytes
                b, off = src.window(p, p + 6)
                end = off + len(b)
            c = b[p - off]
            if c < 254:
                vlen = c
                p += 1
            else:
                vlen = U32.unpack_from(b, p - off + 1)[0]
                p += 5
            free = b[p - off]
            p += 1 + vlen + free
            if p >= n:
                raise BlobError("zipmap entry runs past the end of the blob")
            mx = max(mx, klen, vlen)
            pairs += 1
    except (IndexError, StructError):
        raise BlobError("zipmap entry runs past the end of the blob") from None
    if p != n - 1:
        raise BlobError(f"zipmap end marker at {p}, expected at {n - 1}")
    return pairs, mx
