"""The elements of a hashtable-encoded list, set, sorted set or hash (docs/rdb-format.md
section 4) skipped in bulk while they lie wholly in the reader's buffer: the pure-Python twin of
_speedups.skip_elements (backend.py picks one).  Both stop at the first element the parser's
per-element loop must read itself (LZF-compressed, an encoding they do not take, not wholly in
the buffer) and give the same results; tests/test_speedups.py holds them to it.
"""

from __future__ import annotations

from .reader import I16, I32, U32BE, U64BE, int_text_len

# Element layouts (collection_values.CollectionValues.v_list_or_set / v_hash / v_zset).
LAYOUT_STR = 0  # list / set member
LAYOUT_PAIR = 1  # hash field + value
LAYOUT_ZSET_BINARY = 2  # zset member + 8-byte double score (type 5)
LAYOUT_ZSET_TEXT = 3  # zset member + length-prefixed text score (type 3)


def _str_len(b: bytes, p: int, end: int) -> tuple[int, int, int]:
    """(position after, text length, 1 if integer-encoded) of the STR at b[p] when it lies
    wholly before `end` and is neither LZF-compressed nor of an unknown encoding; position -1
    otherwise (Reader.skip_string reads it)."""
    if p >= end:
        return -1, 0, 0
    c = b[p]
    if c < 0x40:
        ln, q = c, p + 1
    elif c < 0x80:
        if p + 2 > end:
            return -1, 0, 0
        ln, q = ((c & 0x3F) << 8) | b[p + 1], p + 2
    elif c == 0x80:
        if p + 5 > end:
            return -1, 0, 0
        ln, q = U32BE.unpack_from(b, p + 1)[0], p + 5
    elif c == 0x81:
        if p + 9 > end:
            return -1, 0, 0
        ln, q = U64BE.unpack_from(b, p + 1)[0], p + 9
    elif c == 0xC0:
        if p + 2 > end:
            return -1, 0, 0
        v = b[p + 1]
        return p + 2, int_text_len(v - 256 if v > 127 else v), 1
    elif c == 0xC1:
        if p + 3 > end:
            return -1, 0, 0
        return p + 3, int_text_len(I16.unpack_from(b, p + 1)[0]), 1
    elif c == 0xC2:
        if p + 5 > end:
            return -1, 0, 0
        return p + 5, int_text_len(I32.unpack_from(b, p + 1)[0]), 1
    else:
        return -1, 0, 0
    if ln > end - q:
        return -1, 0, 0
    return q + ln, ln, 0


def skip_elements(
    buf: bytes, pos: int, count: int, layout: int, hist_a: dict, hist_b: dict | None
) -> tuple[int, int, int, int]:
    """Skip up to `count` elements lying wholly in buf[pos:], counting element text lengths
    into hist_a (fields / members) and hist_b (hash values), as the per-element loop does with
    Reader.skip_string.  Returns (new pos, elements done, longest text length, integer-encoded
    strings skipped)."""
    end = len(buf)
    done = mx = ints = 0
    get_a = hist_a.get
    hist_v = hist_b if hist_b is not None else {}  # None but for LAYOUT_PAIR
    while done < count:
        c = buf[pos] if pos < end else 0xFF
        if c < 0x40 and pos + 1 + c <= end:  # most elements: a short raw string
            p, la, ia = pos + 1 + c, c, 0
        else:
            p, la, ia = _str_len(buf, pos, end)
            if p < 0:
                break
        lb = ib = 0
        if layout == LAYOUT_PAIR:
            p, lb, ib = _str_len(buf, p, end)
            if p < 0:
                break
        elif layout == LAYOUT_ZSET_BINARY:
            if p + 8 > end:
                break
            p += 8
        elif layout == LAYOUT_ZSET_TEXT:
            if p >= end:
                break
            sl = buf[p]
            if sl < 253:
                if p + 1 + sl > end:
                    break
                p += 1 + sl
            else:
                p += 1
        pos = p
        done += 1
        ints += ia + ib
        hist_a[la] = get_a(la, 0) + 1
        if la > mx:
            mx = la
        if layout == LAYOUT_PAIR:
            hist_v[lb] = hist_v.get(lb, 0) + 1
            if lb > mx:
                mx = lb
    return pos, done, mx, ints
