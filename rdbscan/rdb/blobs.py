"""Walkers for the compact blobs Redis stores as one string: listpack, ziplist, intset, zipmap
(docs/rdb-format.md section 5).  They count elements and measure the longest one without building
a Python object per element; `listpack_values` decodes entries for the few callers that need
them (stream nodes, hash-field-TTL triplets).

Every walker raises BlobError on a malformed blob; the parser adds the file offset.
"""

from __future__ import annotations

import sys
from array import array
from operator import lt
from struct import error as StructError

from .errors import BlobError, BlobRefused
from .reader import I16, I32, I64, U32, U32BE, int_text_len

# Text length of every 13-bit listpack integer, indexed by its raw 13-bit pattern.
_TEXT_LEN_13BIT = [len(str(v - 8192 if v >= 4096 else v)) for v in range(8192)]


def _backlen(sz: int) -> int:
    if sz <= 127:
        return 1
    if sz < 16383:
        return 2
    if sz < 2097151:
        return 3
    if sz < 268435455:
        return 4
    return 5


def listpack_header(n: int, b: bytes) -> int:
    """The entry count of a listpack's header (65535: not counted) once its size, n bytes, is
    checked against the header's; `b` holds the blob's first 7 bytes, or all of it when it is
    shorter.  The one header decoding of listpack_scan, listpack_values and
    blob_stream.listpack_stream_scan (_speedups._lp_header is the compiled one)."""
    if n < 7:
        raise BlobError(f"listpack of {n} bytes is shorter than its 7-byte minimum")
    total = U32.unpack_from(b, 0)[0]
    if total != n:
        raise BlobError(f"listpack header says {total} bytes but the blob has {n}")
    return b[4] | (b[5] << 8)


def ziplist_header(n: int, b: bytes) -> tuple[int, int]:
    """(entry count (65535: not counted), tail offset) of a ziplist's header once its size, n
    bytes, is checked against the header's; `b` holds the blob's first 11 bytes, or all of it
    when it is shorter.  The one header decoding of ziplist_scan and
    blob_stream.ziplist_stream_scan (_speedups._zl_header is the compiled one)."""
    if n < 11:
        raise BlobError(f"ziplist of {n} bytes is shorter than its 11-byte minimum")
    total = U32.unpack_from(b, 0)[0]
    if total != n:
        raise BlobError(f"ziplist header says {total} bytes but the blob has {n}")
    return b[8] | (b[9] << 8), U32.unpack_from(b, 4)[0]


def _decoded_backlen(b: bytes, q: int) -> int:
    """The back-length whose last byte is b[q], as listpack.c lpDecodeBacklen reads it
    (-1 where it gives UINT64_MAX: more than 5 bytes)."""
    v = 0
    for k in range(5):
        c = b[q - k]
        v |= (c & 127) << (7 * k)
        if not c & 128:
            return v
    return -1


_Bad = tuple[int, int, int] | None  # the first entry a walk found wrong, and what it found


# (length as text, size) of a listpack entry whose encoding byte alone says both, indexed by
# that byte: a 7-bit integer (0xxxxxxx) or a string of up to 63 bytes (10xxxxxx).  The walkers
# look these up themselves (most entries are these; a call per entry costs the pure-Python
# load ~12%) and call _lp_entry for the others.
_LP_SHORT = [
    ((1 if c < 10 else (2 if c < 100 else 3)), 1) if c < 0x80 else (c & 0x3F, 1 + (c & 0x3F))
    for c in range(0xC0)
]


def _lp_entry(b: bytes, x: int, p: int) -> tuple[int, int]:
    """(length as text, size without its back-length) of the listpack entry whose encoding
    byte is b[x], not 0xff (the caller's end); p is that byte's offset in the blob, for the
    error.  With _LP_SHORT, the one decoding of an entry header that listpack_scan and
    blob_stream.listpack_stream_scan share."""
    c = b[x]
    if c < 0xC0:
        return _LP_SHORT[c]
    if c < 0xE0:
        return _TEXT_LEN_13BIT[((c & 0x1F) << 8) | b[x + 1]], 2
    if c < 0xF0:
        ln = ((c & 0x0F) << 8) | b[x + 1]
        return ln, 2 + ln
    if c == 0xF0:
        ln = U32.unpack_from(b, x + 1)[0]
        return ln, 5 + ln
    if c == 0xF1:
        return len(str(I16.unpack_from(b, x + 1)[0])), 3
    if c == 0xF2:
        return len(str(int.from_bytes(b[x + 1 : x + 4], "little", signed=True))), 4
    if c == 0xF3:
        return len(str(I32.unpack_from(b, x + 1)[0])), 5
    if c == 0xF4:
        return len(str(I64.unpack_from(b, x + 1)[0])), 9
    raise BlobError(f"listpack entry at {p} has invalid encoding byte 0x{c:02x}")


def _walk_end(
    kind: str, p: int, last: int, bad: _Bad, wrong: tuple[str, str], i: int, mx: int
) -> None:
    """The first checks after a walk stopped at p: the end marker's place, then the first entry
    found wrong (bad: its offset, what it holds, what it should hold; wrong: the refusal's text
    as a str.format template, and its kind)."""
    if p != last:
        raise BlobError(f"{kind} end marker at {p}, expected at {last}")
    if bad is not None:
        raise BlobRefused(wrong[0].format(*bad), wrong[1], (i, mx))


_LP_WRONG_BACKLEN = (
    "listpack entry at {} has back-length {}, not its size {}",
    "listpack back-length",
)
_ZL_WRONG_PREVLEN = (
    "ziplist entry at {} has previous-entry length {}, not {}",
    "ziplist previous length",
)


def _lp_end(b: bytes, y: int, p: int, last: int, count: int, bad: _Bad, i: int, mx: int) -> None:
    """What listpack_scan and listpack_stream_scan check after the walk stopped at p: the end
    marker's place, a wrong back-length (bad: its entry, the decoded one, the size), the
    header's count; b[y] is the blob's last byte (read only where p is the last offset)."""
    _walk_end("listpack", p, last, bad, _LP_WRONG_BACKLEN, i, mx)
    _check_count_and_end("listpack", count, b[y], i, mx)


def listpack_scan(b: bytes, members_only: bool = False) -> tuple[int, int]:
    """(number of entries, longest entry as text) of a listpack.  With members_only only the
    entries at even positions count for the longest (zset members, not scores).

    A listpack that decodes but that lpValidateIntegrity refuses (a back-length that is not
    its entry's size, a header count that is neither the entries' nor 65535, a last byte that
    is not 0xff) raises BlobRefused after the walk, naming the first problem."""
    n = len(b)
    count = listpack_header(n, b)
    p = 6
    i = 0
    mx = 0
    last = n - 1
    bad = None  # the first entry whose back-length is wrong: (position, decoded, size)
    try:
        while True:
            c = b[p]
            if p == last or c == 0xFF:
                break  # the terminator's place (0xff checked below), or an early one
            ln, sz = _LP_SHORT[c] if c < 0xC0 else _lp_entry(b, p, p)
            q = p + sz + (1 if sz <= 127 else _backlen(sz))
            if q > last:
                raise BlobError("listpack entry runs past the end of the blob")
            if (b[q - 1] != sz or sz > 127) and bad is None:
                back = _decoded_backlen(b, q - 1)
                if back != sz:
                    bad = (p, back, sz)
            p = q
            if ln > mx and (not members_only or not i & 1):
                mx = ln
            i += 1
    except (IndexError, StructError):
        raise BlobError("listpack entry runs past the end of the blob") from None
    _lp_end(b, last, p, last, count, bad, i, mx)
    return i, mx


def _check_count_and_end(kind: str, count: int, end: int, entries: int, mx: int) -> None:
    """What lpValidateIntegrity / ziplistValidateIntegrity check last: the header's entry count
    (65535: not counted) and the 0xff terminator; BlobRefused with the walk's figures."""
    if count != entries and count != 65535:
        raise BlobRefused(
            f"{kind} header counts {count} entries, it holds {entries}",
            f"{kind} count",
            (entries, mx),
        )
    if end != 0xFF:
        raise BlobRefused(
            f"{kind} ends with 0x{end:02x}, not 0xff", f"{kind} terminator", (entries, mx)
        )


def listpack_values(b: bytes) -> list:
    """Every entry of a listpack: int for integer entries, bytes for strings.

    This walk repeats listpack_scan's on purpose: the scan is the hot loop for every compact
    collection and must not build an object per entry; this one is for the few callers
    (stream nodes, field-TTL triplets) that need the values."""
    n = len(b)
    listpack_header(n, b)
    out: list[int | bytes] = []
    append = out.append
    p = 6
    last = n - 1
    try:
        while True:
            c = b[p]
            if c < 0x80:
                append(c)
                sz = 1
            elif c < 0xC0:
                ln = c & 0x3F
                append(b[p + 1 : p + 1 + ln])
                sz = 1 + ln
            elif c < 0xE0:
                v = ((c & 0x1F) << 8) | b[p + 1]
                append(v - 8192 if v >= 4096 else v)
                sz = 2
            elif c < 0xF0:
                ln = ((c & 0x0F) << 8) | b[p + 1]
                append(b[p + 2 : p + 2 + ln])
                sz = 2 + ln
            elif c == 0xF0:
                ln = U32.unpack_from(b, p + 1)[0]
                append(b[p + 5 : p + 5 + ln])
                sz = 5 + ln
            elif c == 0xF1:
                append(I16.unpack_from(b, p + 1)[0])
                sz = 3
            elif c == 0xF2:
                append(int.from_bytes(b[p + 1 : p + 4], "little", signed=True))
                sz = 4
            elif c == 0xF3:
                append(I32.unpack_from(b, p + 1)[0])
                sz = 5
            elif c == 0xF4:
                append(I64.unpack_from(b, p + 1)[0])
                sz = 9
            elif c == 0xFF:
                break
            else:
                raise BlobError(f"listpack entry at {p} has invalid encoding byte 0x{c:02x}")
            p += sz + _backlen(sz)
            if p > last:
                raise BlobError("listpack entry runs past the end of the blob")
    except (IndexError, StructError):
        raise BlobError("listpack entry runs past the end of the blob") from None
    if p != last:
        raise BlobError(f"listpack end marker at {p}, expected at {last}")
    return out


# Stream node and hash-TTL listpacks are decoded entry by entry; more entries than this in
# one blob (Redis defaults: 100 and 128) is refused rather than held (memory bound).
MAX_DECODED_ENTRIES = 4_000_000


def listpack_entries(blob: bytes) -> list:
    """listpack_values with a bound: the few callers that decode entries one by one (stream
    nodes, hash field-TTL triplets) would hold ~40 bytes per entry, so a hostile blob of
    millions of one-byte entries is refused (counted first, without decoding) instead."""
    if len(blob) > 1 << 20:
        n, _ = listpack_scan(blob)
        if n > MAX_DECODED_ENTRIES:
            raise BlobError(
                f"listpack of {n} entries is more than rdbscan decodes entry by "
                f"entry ({MAX_DECODED_ENTRIES})"
            )
    return listpack_values(blob)


def _zl_entry(b: bytes, x: int, p: int) -> tuple[int, int, int]:
    """(previous entry's length, length as text, size) of the ziplist entry at b[x], whose
    first byte is not 0xff (the caller's end); p is its offset in the blob, for the error.
    The one decoding of an entry header that ziplist_scan and blob_stream.ziplist_stream_scan
    share."""
    prev = b[x]
    if prev < 254:
        h = 1
    else:
        prev = U32.unpack_from(b, x + 1)[0]
        h = 5
    x += h
    e = b[x]
    t = e >> 6
    if t == 0:
        ln = e & 0x3F
        return prev, ln, h + 1 + ln
    if t == 1:
        ln = ((e & 0x3F) << 8) | b[x + 1]
        return prev, ln, h + 2 + ln
    if e == 0x80:
        ln = U32BE.unpack_from(b, x + 1)[0]
        return prev, ln, h + 5 + ln
    if e == 0xC0:
        return prev, int_text_len(I16.unpack_from(b, x + 1)[0]), h + 3
    if e == 0xD0:
        return prev, int_text_len(I32.unpack_from(b, x + 1)[0]), h + 5
    if e == 0xE0:
        return prev, int_text_len(I64.unpack_from(b, x + 1)[0]), h + 9
    if e == 0xF0:
        return prev, int_text_len(int.from_bytes(b[x + 1 : x + 4], "little", signed=True)), h + 4
    if e == 0xFE:
        return prev, int_text_len(b[x + 1] - 256 if b[x + 1] > 127 else b[x + 1]), h + 2
    if 0xF1 <= e <= 0xFD:
        return prev, 2 if e >= 0xFB else 1, h + 1  # immediates 0..12
    raise BlobError(f"ziplist entry at {p + h} has invalid encoding byte 0x{e:02x}")


def _zl_end(
    b: bytes,
    y: int,
    p: int,
    last: int,
    count: int,
    tail: int,
    start: int,
    bad: _Bad,
    i: int,
    mx: int,
) -> None:
    """What ziplist_scan and ziplist_stream_scan check after the walk stopped at p: the end
    marker's place, a wrong prevlen (bad: its entry, the prevlen, the size before), the header's
    tail (start: the last entry's offset) and count; b[y] is the blob's last byte (read only
    where p is the last offset)."""
    _walk_end("ziplist", p, last, bad, _ZL_WRONG_PREVLEN, i, mx)
    if tail > last or (i and tail != start):
        raise BlobRefused(
            f"ziplist tail offset {tail} is not its last entry's offset {start}"
            if i
            else f"ziplist tail offset {tail} points past its end",
            "ziplist tail",
            (i, mx),
        )
    _check_count_and_end("ziplist", count, b[y], i, mx)


def ziplist_scan(b: bytes, members_only: bool = False) -> tuple[int, int]:
    """(number of entries, longest entry as text) of a ziplist (docs/rdb-format.md section 5.1).

    A ziplist that decodes but that ziplistValidateIntegrity refuses (an entry's prevlen that
    is not the previous entry's size, a zltail that is not the last entry's offset, a zllen
    that is neither the entries' count nor 65535, a last byte that is not 0xff) raises
    BlobRefused after the walk, naming the first problem."""
    n = len(b)
    count, tail = ziplist_header(n, b)
    p = 10
    i = 0
    mx = 0
    last = n - 1
    start = 0  # offset of the last entry walked
    prev = 0  # its size (the next entry's prevlen)
    bad = None  # the first entry whose prevlen is wrong: (position, prevlen, size)
    try:
        while True:
            if b[p] == 0xFF or p == last:
                break
            back, ln, size = _zl_entry(b, p, p)
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
    _zl_end(b, last, p, last, count, tail, start, bad, i, mx)
    return i, mx


def intset_scan(b: bytes) -> tuple[int, int]:
    """(members, longest member as text) of an intset (docs/rdb-format.md section 5.3).  Members are sorted, so
    the longest decimal text is at one of the two ends.  An intset that intsetValidateIntegrity
    refuses (no members, members not strictly ascending) raises BlobRefused."""
    if len(b) < 8:
        raise BlobError(f"intset of {len(b)} bytes is shorter than its header")
    width = U32.unpack_from(b, 0)[0]
    count = U32.unpack_from(b, 4)[0]
    if width not in (2, 4, 8):
        raise BlobError(f"intset has invalid integer width {width}")
    if 8 + count * width != len(b):
        raise BlobError(
            f"intset of {count} x {width}-byte members must be {8 + count * width} "
            f"bytes, blob has {len(b)}"
        )
    if count == 0:
        raise BlobRefused("intset has no members", "intset empty", (0, 0))
    st = {2: I16, 4: I32, 8: I64}[width]
    first = st.unpack_from(b, 8)[0]
    lastv = st.unpack_from(b, 8 + (count - 1) * width)[0]
    result = (count, max(int_text_len(first), int_text_len(lastv)))
    members = array({2: "h", 4: "i", 8: "q"}[width], b[8:])
    if sys.byteorder == "big":
        members.byteswap()
    if count > 1 and not all(map(lt, members[:-1], members[1:])):
        k = next(k for k in range(1, count) if members[k] <= members[k - 1])
        raise BlobRefused(
            f"intset member {k} ({members[k]}) is not above the one before ({members[k - 1]})",
            "intset order",
            result,
        )
    return result


def zipmap_scan(b: bytes) -> tuple[int, int]:
    """(pairs, longest field or value) of a zipmap (docs/rdb-format.md section 5.4, Redis <= 2.4)."""
    n = len(b)
    p = 1
    pairs = 0
    mx = 0
    try:
        while True:
            c = b[p]
            if c == 255:
                break
            if c < 254:
                klen = c
                p += 1
            else:
                klen = U32.unpack_from(b, p + 1)[0]
                p += 5
            p += klen
            c = b[p]
            if c < 254:
                vlen = c
                p += 1
            else:
                vlen = U32.unpack_from(b, p + 1)[0]
                p += 5
            free = b[p]
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


LP_HEADER_AND_END = 7  # listpack: 4-byte total bytes, 2-byte count, 1-byte end mark


def lp_string_entry_bytes(n: int) -> int:
    """Bytes of a listpack entry holding a string of n bytes (listpack.c lpEncodeString:
    a 1, 2 or 5-byte header, the bytes, the back-length of both)."""
    head = 1 if n <= 63 else (2 if n <= 4095 else 5)
    return head + n + _backlen(head + n)
