# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twins of the parser's hottest loops (issue 5).

Each function here has a pure-Python reference with the same name, arguments, results and
error messages (blobs.py, reader.py); the pure-Python code stays the fallback when this
module was not built, and tests/test_speedups.py checks that both give identical rows on every
fixture.  Built at install time by setup.py (Cython); `rdbscan --version` says which is used.

Every read is bounds-checked by hand (boundscheck is off for speed): a blob that ends early
raises the same BlobError the Python walker raises on IndexError.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint32_t, uint64_t

from .blobs import BlobError

DEF SMALL = 512   # element lengths counted in a C array before they reach the histogram dict


cdef inline int _int_text_len(int64_t v) noexcept:
    """Length of the decimal text of v (sign included)."""
    cdef int n = 1
    cdef uint64_t u
    if v < 0:
        n = 2
        u = <uint64_t>(-(v + 1)) + 1
    else:
        u = <uint64_t>v
    while u >= 10:
        u //= 10
        n += 1
    return n


cdef inline uint32_t _u32le(const uint8_t* b) noexcept:
    return b[0] | (<uint32_t>b[1] << 8) | (<uint32_t>b[2] << 16) | (<uint32_t>b[3] << 24)


cdef inline uint32_t _u32be(const uint8_t* b) noexcept:
    return b[3] | (<uint32_t>b[2] << 8) | (<uint32_t>b[1] << 16) | (<uint32_t>b[0] << 24)


cdef inline uint64_t _u64le(const uint8_t* b) noexcept:
    return _u32le(b) | (<uint64_t>_u32le(b + 4) << 32)


cdef inline uint64_t _u64be(const uint8_t* b) noexcept:
    return (<uint64_t>_u32be(b) << 32) | _u32be(b + 4)


cdef inline int _backlen(Py_ssize_t sz) noexcept:
    if sz <= 127:
        return 1
    if sz < 16383:
        return 2
    if sz < 2097151:
        return 3
    if sz < 268435455:
        return 4
    return 5


def listpack_scan(bytes blob, bint members_only=False):
    """(number of entries, longest entry as text) of a listpack; see blobs.listpack_scan."""
    cdef Py_ssize_t n = len(blob)
    cdef const uint8_t* b = <const uint8_t*>(<char*>blob)
    if n < 7:
        raise BlobError(f"listpack of {n} bytes is shorter than its 7-byte minimum")
    cdef uint32_t total = _u32le(b)
    if total != n:
        raise BlobError(f"listpack header says {total} bytes but the blob has {n}")
    cdef Py_ssize_t p = 6, i = 0, mx = 0, last = n - 1, ln, sz
    cdef uint8_t c
    cdef int v
    while True:
        c = b[p]          # p <= last here
        if c < 0x80:
            ln = 1 if c < 10 else (2 if c < 100 else 3)
            sz = 1
        elif c < 0xC0:
            ln = c & 0x3F
            sz = 1 + ln
        elif c < 0xE0:
            if p + 1 >= n:
                raise BlobError("listpack entry runs past the end of the blob")
            v = ((c & 0x1F) << 8) | b[p + 1]
            ln = _int_text_len(v - 8192 if v >= 4096 else v)
            sz = 2
        elif c < 0xF0:
            if p + 1 >= n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = ((c & 0x0F) << 8) | b[p + 1]
            sz = 2 + ln
        elif c == 0xF0:
            if p + 5 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _u32le(b + p + 1)
            sz = 5 + ln
        elif c == 0xF1:
            if p + 3 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _int_text_len(<int16_t>(b[p + 1] | (b[p + 2] << 8)))
            sz = 3
        elif c == 0xF2:
            if p + 4 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            v = b[p + 1] | (b[p + 2] << 8) | (b[p + 3] << 16)
            ln = _int_text_len(v - 0x1000000 if v >= 0x800000 else v)
            sz = 4
        elif c == 0xF3:
            if p + 5 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _int_text_len(<int32_t>_u32le(b + p + 1))
            sz = 5
        elif c == 0xF4:
            if p + 9 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _int_text_len(<int64_t>_u64le(b + p + 1))
            sz = 9
        elif c == 0xFF:
            break
        else:
            raise BlobError(f"listpack entry at {p} has invalid encoding byte 0x{c:02x}")
        p += sz + _backlen(sz)
        if p > last:
            raise BlobError("listpack entry runs past the end of the blob")
        if ln > mx and (not members_only or not i & 1):
            mx = ln
        i += 1
    if p != last:
        raise BlobError(f"listpack end marker at {p}, expected at {last}")
    return i, mx


def ziplist_scan(bytes blob, bint members_only=False):
    """(number of entries, longest entry as text) of a ziplist; see blobs.ziplist_scan."""
    cdef Py_ssize_t n = len(blob)
    cdef const uint8_t* b = <const uint8_t*>(<char*>blob)
    if n < 11:
        raise BlobError(f"ziplist of {n} bytes is shorter than its 11-byte minimum")
    cdef uint32_t total = _u32le(b)
    if total != n:
        raise BlobError(f"ziplist header says {total} bytes but the blob has {n}")
    cdef Py_ssize_t p = 10, i = 0, mx = 0, last = n - 1, ln
    cdef uint8_t c, e
    cdef int v
    while True:
        c = b[p]          # p <= last here
        if c == 0xFF:
            break
        p += 1 if c < 254 else 5
        if p >= n:
            raise BlobError("ziplist entry runs past the end of the blob")
        e = b[p]
        if e >> 6 == 0:
            ln = e & 0x3F
            p += 1 + ln
        elif e >> 6 == 1:
            if p + 1 >= n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = ((e & 0x3F) << 8) | b[p + 1]
            p += 2 + ln
        elif e == 0x80:
            if p + 5 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _u32be(b + p + 1)
            p += 5 + ln
        elif e == 0xC0:
            if p + 3 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int16_t>(b[p + 1] | (b[p + 2] << 8)))
            p += 3
        elif e == 0xD0:
            if p + 5 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int32_t>_u32le(b + p + 1))
            p += 5
        elif e == 0xE0:
            if p + 9 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int64_t>_u64le(b + p + 1))
            p += 9
        elif e == 0xF0:
            if p + 4 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            v = b[p + 1] | (b[p + 2] << 8) | (b[p + 3] << 16)
            ln = _int_text_len(v - 0x1000000 if v >= 0x800000 else v)
            p += 4
        elif e == 0xFE:
            if p + 1 >= n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int8_t>b[p + 1])
            p += 2
        elif 0xF1 <= e <= 0xFD:
            ln = 2 if e >= 0xFB else 1  # immediates 0..12
            p += 1
        else:
            raise BlobError(f"ziplist entry at {p} has invalid encoding byte 0x{e:02x}")
        if p > last:
            raise BlobError("ziplist entry runs past the end of the blob")
        if ln > mx and (not members_only or not i & 1):
            mx = ln
        i += 1
    if p != last:
        raise BlobError(f"ziplist end marker at {p}, expected at {last}")
    return i, mx



cdef inline Py_ssize_t _str_len(const uint8_t* b, Py_ssize_t pos, Py_ssize_t end,
                                Py_ssize_t* text_len, int* is_int) noexcept:
    """Skip one STR at b[pos] if it lies wholly before `end`: returns the position after it and
    sets its text length (digits for integer encodings); -1 when the STR is LZF-compressed, has
    an unknown encoding, or is not wholly in the buffer (the Python path takes over)."""
    if pos >= end:
        return -1
    cdef uint8_t b0 = b[pos]
    cdef Py_ssize_t n
    cdef uint64_t big
    is_int[0] = 0
    if b0 < 0x40:
        n = pos + 1 + b0
        if n > end:
            return -1
        text_len[0] = b0
        return n
    if b0 < 0x80:
        if pos + 2 > end:
            return -1
        text_len[0] = ((b0 & 0x3F) << 8) | b[pos + 1]
        n = pos + 2 + text_len[0]
        return n if n <= end else -1
    if b0 == 0x80:
        if pos + 5 > end:
            return -1
        text_len[0] = _u32be(b + pos + 1)
        n = pos + 5 + text_len[0]
        return n if n <= end else -1
    if b0 == 0x81:
        if pos + 9 > end:
            return -1
        big = _u64be(b + pos + 1)
        if big > <uint64_t>(end - pos):
            return -1
        text_len[0] = <Py_ssize_t>big
        n = pos + 9 + text_len[0]
        return n if n <= end else -1
    if b0 == 0xC0:
        if pos + 2 > end:
            return -1
        is_int[0] = 1
        text_len[0] = _int_text_len(<int8_t>b[pos + 1])
        return pos + 2
    if b0 == 0xC1:
        if pos + 3 > end:
            return -1
        is_int[0] = 1
        text_len[0] = _int_text_len(<int16_t>(b[pos + 1] | (b[pos + 2] << 8)))
        return pos + 3
    if b0 == 0xC2:
        if pos + 5 > end:
            return -1
        is_int[0] = 1
        text_len[0] = _int_text_len(<int32_t>_u32le(b + pos + 1))
        return pos + 5
    return -1


cdef inline void _count(dict hist, Py_ssize_t* small, Py_ssize_t ln):
    if ln < SMALL:
        small[ln] += 1
    else:
        hist[ln] = hist.get(ln, 0) + 1


cdef void _merge(dict hist, Py_ssize_t* small):
    cdef Py_ssize_t i
    for i in range(SMALL):
        if small[i]:
            hist[i] = hist.get(i, 0) + small[i]


# Element layouts of the hashtable-encoded collections (parser.v_list_or_set / v_hash / v_zset).
LAYOUT_STR = 0          # list / set member
LAYOUT_PAIR = 1         # hash field + value
LAYOUT_ZSET_BINARY = 2  # zset member + 8-byte double score (type 5)
LAYOUT_ZSET_TEXT = 3    # zset member + length-prefixed text score (type 3)


def skip_elements(bytes buf, Py_ssize_t pos, Py_ssize_t count, int layout, dict hist_a,
                  dict hist_b):
    """Skip up to `count` elements of a hashtable-encoded collection lying wholly in
    buf[pos:], counting element text lengths into hist_a (fields / members) and hist_b (hash
    values), as the parser's per-element loop does with Reader.skip_string.

    Stops early at an element the Python path must read (LZF, not wholly in the buffer).
    Returns (new pos, elements done, longest text length, integer-encoded strings skipped)."""
    cdef const uint8_t* b = <const uint8_t*>(<char*>buf)
    cdef Py_ssize_t end = len(buf)
    cdef Py_ssize_t done = 0, mx = 0, ints = 0, la = 0, lb = 0, p, q
    cdef int ia = 0, ib = 0
    cdef Py_ssize_t small_a[SMALL]
    cdef Py_ssize_t small_b[SMALL]
    cdef Py_ssize_t k
    for k in range(SMALL):
        small_a[k] = 0
        small_b[k] = 0
    while done < count:
        p = _str_len(b, pos, end, &la, &ia)
        if p < 0:
            break
        ib = 0
        if layout == LAYOUT_PAIR:
            q = _str_len(b, p, end, &lb, &ib)
            if q < 0:
                break
            p = q
        elif layout == LAYOUT_ZSET_BINARY:
            if p + 8 > end:
                break
            p += 8
        elif layout == LAYOUT_ZSET_TEXT:
            if p >= end:
                break
            if b[p] < 253:
                if p + 1 + b[p] > end:
                    break
                p += 1 + b[p]
            else:
                p += 1
        pos = p
        done += 1
        ints += ia + ib
        _count(hist_a, small_a, la)
        if la > mx:
            mx = la
        if layout == LAYOUT_PAIR:
            _count(hist_b, small_b, lb)
            if lb > mx:
                mx = lb
    _merge(hist_a, small_a)
    if layout == LAYOUT_PAIR:
        _merge(hist_b, small_b)
    return pos, done, mx, ints
