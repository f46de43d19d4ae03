# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twins of the parser's hottest loops.

Each function here has a pure-Python reference with the same name, arguments, results and
error messages (blobs.py, reader.py); the pure-Python code stays the fallback when this
module was not built, and tests/test_speedups.py checks that both give identical rows on every
fixture.  Built at install time by setup.py (Cython); `rdbscan --version` says which is used.

Every read is bounds-checked by hand (boundscheck is off for speed): a blob that ends early
raises the same BlobError the Python walker raises on IndexError.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from .errors import BlobError, BlobRefused
from .constants import ENCODING_IDS, MODULE_ENCODING_ID
from .reader import LZF_CHECK_MAX

# SHA-256 of the .pyx this module was compiled from (setup.py's compile_time_env); speedups.py
# compares it with the .pyx beside the module to tell a stale build.
SOURCE_SHA256 = RDBSCAN_PYX_SHA256

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


cdef inline int64_t _decoded_backlen(const uint8_t* b, Py_ssize_t q) noexcept:
    """blobs._decoded_backlen: the back-length whose last byte is b[q] (lpDecodeBacklen), -1
    for more than 5 bytes."""
    cdef int64_t v = 0
    cdef int k
    cdef uint8_t c
    for k in range(5):
        c = b[q - k]
        v |= (<int64_t>(c & 127)) << (7 * k)
        if not (c & 128):
            return v
    return -1


def listpack_scan(bytes blob, bint members_only=False):
    """(number of entries, longest entry as text) of a listpack; see blobs.listpack_scan."""
    cdef Py_ssize_t count = 0, mx = 0
    _listpack_scan(<const uint8_t*>(<char*>blob), len(blob), members_only, &count, &mx)
    return count, mx


cdef int _lp_header(const uint8_t* b, Py_ssize_t n) except -1:
    """The entry count of a listpack's header (65535: not counted) once its size is checked
    against the header's, as blobs.listpack_header; `b` holds the blob's first 7 bytes, or n
    when there are fewer.  The one header decoding of _listpack_scan and listpack_stream_scan."""
    if n < 7:
        raise BlobError(f"listpack of {n} bytes is shorter than its 7-byte minimum")
    cdef uint32_t total = _u32le(b)
    if total != n:
        raise BlobError(f"listpack header says {total} bytes but the blob has {n}")
    return b[4] | (b[5] << 8)


cdef int _zl_header(const uint8_t* b, Py_ssize_t n, uint32_t* tail) except -1:
    """The entry count of a ziplist's header (65535: not counted) and its tail offset, once its
    size is checked against the header's, as blobs.ziplist_header; `b` holds the blob's first
    11 bytes, or n when there are fewer.  The one header decoding of _ziplist_scan and
    ziplist_stream_scan."""
    if n < 11:
        raise BlobError(f"ziplist of {n} bytes is shorter than its 11-byte minimum")
    cdef uint32_t total = _u32le(b)
    if total != n:
        raise BlobError(f"ziplist header says {total} bytes but the blob has {n}")
    tail[0] = _u32le(b + 4)
    return b[8] | (b[9] << 8)


cdef int _listpack_scan(const uint8_t* b, Py_ssize_t n, bint members_only, Py_ssize_t* count,
                        Py_ssize_t* longest) except -1:
    cdef int hdr = _lp_header(b, n)
    cdef Py_ssize_t p = 6, i = 0, mx = 0, last = n - 1, ln, sz, q
    cdef Py_ssize_t bad_p = -1, bad_sz = 0   # the first entry whose back-length is wrong
    cdef int64_t bad_back = 0, back
    cdef uint8_t c
    cdef int v
    while True:
        c = b[p]          # p <= last here
        if p == last:
            break         # the terminator's place (0xff checked below)
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
        q = p + sz + _backlen(sz)
        if q > last:
            raise BlobError("listpack entry runs past the end of the blob")
        if (b[q - 1] != sz or sz > 127) and bad_p < 0:
            back = _decoded_backlen(b, q - 1)
            if back != sz:
                bad_p, bad_back, bad_sz = p, back, sz
        p = q
        if ln > mx and (not members_only or not i & 1):
            mx = ln
        i += 1
    if p != last:
        raise BlobError(f"listpack end marker at {p}, expected at {last}")
    count[0] = i
    longest[0] = mx
    if bad_p >= 0:
        raise BlobRefused(f"listpack entry at {bad_p} has back-length {bad_back}, not its size "
                          f"{bad_sz}", "listpack back-length", (i, mx))
    if hdr != i and hdr != 65535:
        raise BlobRefused(f"listpack header counts {hdr} entries, it holds {i}",
                          "listpack count", (i, mx))
    if b[last] != 0xFF:
        raise BlobRefused(f"listpack ends with 0x{b[last]:02x}, not 0xff", "listpack terminator",
                          (i, mx))
    return 0


def ziplist_scan(bytes blob, bint members_only=False):
    """(number of entries, longest entry as text) of a ziplist; see blobs.ziplist_scan."""
    cdef Py_ssize_t count = 0, mx = 0
    _ziplist_scan(<const uint8_t*>(<char*>blob), len(blob), members_only, &count, &mx)
    return count, mx


cdef int _ziplist_scan(const uint8_t* b, Py_ssize_t n, bint members_only, Py_ssize_t* count,
                       Py_ssize_t* longest) except -1:
    cdef uint32_t tail
    cdef int hdr = _zl_header(b, n, &tail)
    cdef Py_ssize_t p = 10, i = 0, mx = 0, last = n - 1, ln, q
    cdef Py_ssize_t start = 0, prev = 0   # the last entry walked: offset, size
    cdef Py_ssize_t bad_p = -1, bad_prev = 0, bad_size = 0   # the first wrong prevlen
    cdef uint32_t prevlen
    cdef uint8_t c, e
    cdef int v
    while True:
        c = b[p]          # p <= last here
        if c == 0xFF or p == last:
            break
        if c < 254:
            prevlen = c
            q = p + 1
        else:
            if p + 5 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            prevlen = _u32le(b + p + 1)
            q = p + 5
        if prevlen != <uint64_t>prev and bad_p < 0:
            bad_p, bad_prev, bad_size = p, prevlen, prev
        start = p
        p = q
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
        prev = p - start
        if ln > mx and (not members_only or not i & 1):
            mx = ln
        i += 1
    if p != last:
        raise BlobError(f"ziplist end marker at {p}, expected at {last}")
    count[0] = i
    longest[0] = mx
    if bad_p >= 0:
        raise BlobRefused(f"ziplist entry at {bad_p} has previous-entry length {bad_prev}, not "
                          f"{bad_size}", "ziplist previous length", (i, mx))
    if tail > <uint64_t>last or (i and tail != <uint64_t>start):
        raise BlobRefused(f"ziplist tail offset {tail} is not its last entry's offset {start}"
                          if i else f"ziplist tail offset {tail} points past its end",
                          "ziplist tail", (i, mx))
    if hdr != i and hdr != 65535:
        raise BlobRefused(f"ziplist header counts {hdr} entries, it holds {i}", "ziplist count",
                          (i, mx))
    if b[last] != 0xFF:
        raise BlobRefused(f"ziplist ends with 0x{b[last]:02x}, not 0xff", "ziplist terminator",
                          (i, mx))
    return 0



cdef inline Py_ssize_t _plain_len(const uint8_t* b, Py_ssize_t p, Py_ssize_t end,
                                  uint64_t* out) noexcept:
    """A LEN that is a plain length (not a string encoding) wholly before `end`: returns the
    position after it, or -1."""
    if p >= end:
        return -1
    cdef uint8_t b0 = b[p]
    if b0 < 0x40:
        out[0] = b0
        return p + 1
    if b0 < 0x80:
        if p + 2 > end:
            return -1
        out[0] = ((b0 & 0x3F) << 8) | b[p + 1]
        return p + 2
    if b0 == 0x80:
        if p + 5 > end:
            return -1
        out[0] = _u32be(b + p + 1)
        return p + 5
    if b0 == 0x81:
        if p + 9 > end:
            return -1
        out[0] = _u64be(b + p + 1)
        return p + 9
    return -1


cdef inline Py_ssize_t _raw_str(const uint8_t* b, Py_ssize_t p, Py_ssize_t end,
                                Py_ssize_t* start, Py_ssize_t* n) noexcept:
    """An unencoded STR wholly before `end`: its content is b[start:start+n]; returns the
    position after it, or -1."""
    cdef uint64_t ln
    cdef Py_ssize_t q = _plain_len(b, p, end, &ln)
    if q < 0 or ln > <uint64_t>(end - q):
        return -1
    start[0] = q
    n[0] = <Py_ssize_t>ln
    return q + <Py_ssize_t>ln


cdef inline bint _lzf_sizes_ok(uint64_t clen, uint64_t ulen) noexcept:
    """reader.lzf_sizes_ok."""
    return (clen <= ulen + ulen // 16 + 64 and ulen <= clen * 100 + 64
            and (clen > 0 or ulen == 0))


cdef inline Py_ssize_t _lzf_str(const uint8_t* b, Py_ssize_t p, Py_ssize_t end,
                                uint64_t* clen, uint64_t* ulen) noexcept:
    """An LZF STR (b[p] == 0xC3) wholly before `end` with possible sizes: returns the position of
    its compressed bytes (clen of them), or -1."""
    cdef Py_ssize_t q = _plain_len(b, p + 1, end, clen)
    if q < 0:
        return -1
    q = _plain_len(b, q, end, ulen)
    if q < 0 or not _lzf_sizes_ok(clen[0], ulen[0]) or clen[0] > <uint64_t>(end - q):
        return -1
    return q


cdef bint _lzf_length_ok(bytes buf, Py_ssize_t q, uint64_t clen, uint64_t ulen):
    """Whether the LZF data buf[q:q+clen] decompresses to ulen bytes, as Redis checks on load;
    true unchecked above LZF_CHECK_MAX (reader.lzf_length_ok).  It walks the LZF tokens and
    counts what they would write, without writing it: liblzf's lzf_decompress fails (and Redis
    refuses the string) exactly when a literal run or a back-reference's bytes pass the input's
    end, a back-reference reaches before the output's start, or the output would pass ulen."""
    if ulen == 0 or ulen > LZF_CHECK_MAX:
        return True
    cdef const uint8_t* b = <const uint8_t*>(<char*>buf) + q
    cdef Py_ssize_t i = 0, end = <Py_ssize_t>clen
    cdef uint64_t out = 0, ln
    cdef uint8_t ctrl
    while i < end:
        ctrl = b[i]
        i += 1
        if ctrl < 32:  # a literal run of ctrl + 1 bytes
            ln = ctrl + 1
            if i + <Py_ssize_t>ln > end:
                return False
            i += ln
        else:  # a back-reference: length (ctrl >> 5) + 2, offset 13 bits + 1
            ln = ctrl >> 5
            if ln == 7:
                if i >= end:
                    return False
                ln += b[i]
                i += 1
            if i >= end:
                return False
            if ((<uint64_t>(ctrl & 0x1f)) << 8) + b[i] + 1 > out:
                return False
            i += 1
            ln += 2
        out += ln
        if out > ulen:
            return False
    return out == ulen


cdef inline Py_ssize_t _str_len(const uint8_t* b, Py_ssize_t pos, Py_ssize_t end,
                                Py_ssize_t* text_len, int* is_int) noexcept:
    """Skip one STR at b[pos] if it lies wholly before `end`: returns the position after it and
    sets its text length (digits for integer encodings); -1 when the STR is LZF-compressed, has
    an unknown encoding, or is not wholly in the buffer (the Python path takes over)."""
    cdef Py_ssize_t start
    is_int[0] = 0
    if pos >= end:
        return -1
    cdef uint8_t b0 = b[pos]
    if b0 < 0xC0:
        return _raw_str(b, pos, end, &start, text_len)
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


# ---------------------------------------------------------------------------------------------
# The record loop for the common keys, straight into key-row columns.
#
# Strings and single-blob values (listpacks, ziplists, intsets, lists held in a one-node
# quicklist) are nearly every key of a real dump.  KeyColumns.scan reads as many of them as lie wholly in the reader's buffer and
# writes their rows into typed C columns, with no Python object per key; at the first record
# it does not handle (an opcode, a collection, a value not wholly in the buffer, anything
# damaged) it stops and the parser's Python loop reads that record, yielding a KeyRecord that
# RowBuilder appends here too, so rows stay in file order.  Errors always come from the
# Python path.  Twins: parser._Parser.records / string_value / v_blob / v_quicklist,
# slots.key_slot, rows.RowBuilder.add; tests/test_speedups.py compares whole tables with the
# pure-Python run.

from libc.stdlib cimport malloc, realloc, free
from libc.math cimport nearbyint
from libc.string cimport memcmp, memcpy, memset
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

import lzf as _lzf

DEF SHAPE_CACHE = 65536   # value costs remembered by value shape (direct-mapped)
DEF KEY_COSTS = 1024      # key costs remembered by key length (shorter keys)
DEF EMBED_KEYS = 128      # kv.embed_table: key lengths ...
DEF EMBED_VALUES = 128    # ... and value lengths it covers (longer: never embedded)
DEF KEY_DATA_SOFT = 4 * 1024 * 1024    # a batch ends once its key names reach this size
                                       # (rows.KEY_DATA_SOFT, the pure-Python batch's)
DEF KEY_KEEP = 1024    # rows.KEY_KEEP: longer key names take the Python path (a prefix is kept)
DEF KEY_DATA_HARD = 0x7FFFFFFF         # int32 Arrow offsets

cdef uint16_t _CRC16[256]


cdef void _crc16_table() noexcept:
    cdef int i, j
    cdef uint16_t c
    for i in range(256):
        c = <uint16_t>(i << 8)
        for j in range(8):
            c = <uint16_t>((c << 1) ^ 0x1021) if c & 0x8000 else <uint16_t>(c << 1)
        _CRC16[i] = c


_crc16_table()


cdef inline uint16_t _key_slot(const uint8_t* k, Py_ssize_t n) noexcept:
    """slots.key_slot: CRC16/XMODEM of the {hashtag} (or the whole key) mod 16384."""
    cdef Py_ssize_t i, s = -1, e = -1
    for i in range(n):
        if k[i] == 0x7B:      # {
            s = i
            break
    if s >= 0:
        for i in range(s + 1, n):
            if k[i] == 0x7D:  # }
                e = i
                break
        if e > s + 1:
            k = k + s + 1
            n = e - s - 1
    cdef uint16_t crc = 0
    for i in range(n):
        crc = <uint16_t>(crc << 8) ^ _CRC16[((crc >> 8) ^ k[i]) & 0xFF]
    return crc & 0x3FFF


def key_slot(bytes key):
    """The compiled twin of slots.key_slot (tests compare them)."""
    return _key_slot(<const uint8_t*>(<char*>key), len(key))


cdef inline bint _is_long_text(const uint8_t* d, Py_ssize_t n) noexcept:
    """Canonical decimal text of a signed 64-bit integer (-?[1-9][0-9]{0,18}|0 in range):
    what Redis stores with the int encoding."""
    cdef Py_ssize_t i = 0, j
    cdef uint64_t v = 0
    cdef bint neg
    if n == 1 and d[0] == 0x30:
        return True
    if n < 1 or n > 20:
        return False
    neg = d[0] == 0x2D
    if neg:
        i = 1
    if i >= n or d[i] < 0x31 or d[i] > 0x39 or n - i > 19:
        return False
    for j in range(i, n):
        if d[j] < 0x30 or d[j] > 0x39:
            return False
        v = v * 10 + (d[j] - 0x30)
    if neg:
        return v <= <uint64_t>9223372036854775808ULL
    return v <= <uint64_t>9223372036854775807ULL


cdef int _intset_scan(const uint8_t* b, Py_ssize_t n, Py_ssize_t* count,
                      Py_ssize_t* longest) except -1:
    """blobs.intset_scan (members, longest member as text); BlobError on a bad intset."""
    if n < 8:
        raise BlobError(f"intset of {n} bytes is shorter than its header")
    cdef uint32_t width = _u32le(b), cnt = _u32le(b + 4)
    cdef int64_t first, last
    if width != 2 and width != 4 and width != 8:
        raise BlobError(f"intset has invalid integer width {width}")
    if 8 + <uint64_t>cnt * width != <uint64_t>n:
        raise BlobError(f"intset of {cnt} x {width}-byte members must be "
                        f"{8 + cnt * width} bytes, blob has {n}")
    count[0] = cnt
    if cnt == 0:
        longest[0] = 0
        raise BlobRefused("intset has no members", "intset empty", (0, 0))
    if width == 2:
        first = <int16_t>(b[8] | (b[9] << 8))
        last = <int16_t>(b[8 + (cnt - 1) * 2] | (b[9 + (cnt - 1) * 2] << 8))
    elif width == 4:
        first = <int32_t>_u32le(b + 8)
        last = <int32_t>_u32le(b + 8 + (cnt - 1) * 4)
    else:
        first = <int64_t>_u64le(b + 8)
        last = <int64_t>_u64le(b + 8 + (cnt - 1) * 8)
    longest[0] = max(_int_text_len(first), _int_text_len(last))
    # intsetValidateIntegrity: strictly ascending
    cdef int64_t before = first, cur
    cdef uint32_t k
    for k in range(1, cnt):
        if width == 2:
            cur = <int16_t>(b[8 + k * 2] | (b[9 + k * 2] << 8))
        elif width == 4:
            cur = <int32_t>_u32le(b + 8 + k * 4)
        else:
            cur = <int64_t>_u64le(b + 8 + k * 8)
        if cur <= before:
            raise BlobRefused(f"intset member {k} ({cur}) is not above the one before ({before})",
                              "intset order", (cnt, longest[0]))
        before = cur
    return 0


def intset_scan(bytes blob):
    """The compiled twin of blobs.intset_scan."""
    cdef Py_ssize_t count = 0, mx = 0
    _intset_scan(<const uint8_t*>(<char*>blob), len(blob), &count, &mx)
    return count, mx


# --- blobs longer than blob_stream.WHOLE_MAX, walked as a stream (docs/hostile-inputs.md) ---

DEF LZF_WINDOW = 8192   # lzf_stream.WINDOW: the farthest an LZF back-reference reaches


cdef class LZFStream:
    """The compiled twin of lzf_stream.LZFStream: one LZF payload of `ulen` bytes decoded from
    pieces of compressed input; ValueError in decode() or finish() where the pure twin raises."""
    cdef readonly Py_ssize_t ulen, total
    cdef uint8_t _tail[LZF_WINDOW]
    cdef Py_ssize_t _tail_len
    cdef uint8_t _pend[40]
    cdef Py_ssize_t _pend_len

    def __cinit__(self, Py_ssize_t ulen):
        self.ulen = ulen
        self.total = 0
        self._tail_len = 0
        self._pend_len = 0

    def decode(self, bytes data):
        """The output of the next piece of compressed bytes (at most 88 bytes per input byte)."""
        cdef Py_ssize_t dlen = len(data), n = dlen + self._pend_len
        cdef Py_ssize_t cap = self.ulen - self.total, tl = self._tail_len
        if cap > 88 * n:
            cap = 88 * n
        cdef uint8_t* inp = <uint8_t*>PyBytes_AS_STRING(data)
        cdef uint8_t* joined = NULL
        cdef uint8_t* work = <uint8_t*>malloc(tl + cap + 1)
        if work == NULL:
            raise MemoryError()
        if self._pend_len:
            joined = <uint8_t*>malloc(n)
            if joined == NULL:
                free(work)
                raise MemoryError()
            memcpy(joined, self._pend, self._pend_len)
            memcpy(joined + self._pend_len, inp, dlen)
            inp = joined
        memcpy(work, self._tail, tl)
        cdef Py_ssize_t ip = 0, op = tl, oend = tl + cap, ln, dist, k
        cdef unsigned int ctrl
        cdef int err = 0
        while ip < n:
            ctrl = inp[ip]
            if ctrl < 32:        # a literal run of ctrl + 1 bytes
                ln = ctrl + 1
                if ip + 1 + ln > n:
                    break
                if op + ln > oend:
                    err = 1
                    break
                memcpy(work + op, inp + ip + 1, ln)
                op += ln
                ip += 1 + ln
                continue
            ln = ctrl >> 5
            if ln == 7:          # a long back-reference: one more length byte
                if ip + 2 >= n:
                    break
                ln += inp[ip + 1]
                dist = ((ctrl & 0x1F) << 8) + inp[ip + 2] + 1
                k = 3
            else:
                if ip + 1 >= n:
                    break
                dist = ((ctrl & 0x1F) << 8) + inp[ip + 1] + 1
                k = 2
            ln += 2
            if dist > op:
                err = 2
                break
            if op + ln > oend:
                err = 1
                break
            ip += k
            for k in range(ln):   # byte by byte: the source may overlap the output
                work[op + k] = work[op - dist + k]
            op += ln
        if err:
            free(work)
            if joined != NULL:
                free(joined)
            if err == 2:
                raise ValueError("LZF back-reference before the start of the output")
            raise ValueError("LZF output longer than its header says")
        self._pend_len = n - ip
        memcpy(self._pend, inp + ip, n - ip)
        if joined != NULL:
            free(joined)
        self.total += op - tl
        out = PyBytes_FromStringAndSize(<char*>(work + tl), op - tl)
        k = op if op < LZF_WINDOW else LZF_WINDOW
        memcpy(self._tail, work + op - k, k)
        self._tail_len = k
        free(work)
        return out

    def finish(self):
        """After the last piece: the payload ended on a whole instruction, at ulen bytes."""
        if self._pend_len:
            raise ValueError("LZF payload ends inside an instruction")
        if self.total != self.ulen:
            raise ValueError("LZF output shorter than its header says")


def listpack_stream_scan(src, bint members_only=False):
    """The compiled twin of blob_stream.listpack_stream_scan: listpack_scan over a
    blob_source.BlobSource (the same results, refusals and errors)."""
    cdef Py_ssize_t n = src.n
    cdef bytes buf
    cdef Py_ssize_t off, end
    buf, off = src.window(0, 16)
    cdef const uint8_t* b = <const uint8_t*>(<char*>buf)
    end = off + len(buf)
    cdef int hdr = _lp_header(b, n)
    cdef Py_ssize_t p = 6, i = 0, mx = 0, last = n - 1, ln, sz, q, x
    cdef Py_ssize_t bad_p = -1, bad_sz = 0
    cdef int64_t bad_back = 0, back
    cdef uint8_t c
    cdef int v
    while True:
        if p + 10 > end and end < n:
            buf, off = src.window(p - 8 if p > 8 else 0, p + 10)
            b = <const uint8_t*>(<char*>buf)
            end = off + len(buf)
        x = p - off
        c = b[x]          # p <= last here
        if p == last:
            break
        if c < 0x80:
            ln = 1 if c < 10 else (2 if c < 100 else 3)
            sz = 1
        elif c < 0xC0:
            ln = c & 0x3F
            sz = 1 + ln
        elif c < 0xE0:
            if p + 1 >= n:
                raise BlobError("listpack entry runs past the end of the blob")
            v = ((c & 0x1F) << 8) | b[x + 1]
            ln = _int_text_len(v - 8192 if v >= 4096 else v)
            sz = 2
        elif c < 0xF0:
            if p + 1 >= n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = ((c & 0x0F) << 8) | b[x + 1]
            sz = 2 + ln
        elif c == 0xF0:
            if p + 5 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _u32le(b + x + 1)
            sz = 5 + ln
        elif c == 0xF1:
            if p + 3 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _int_text_len(<int16_t>(b[x + 1] | (b[x + 2] << 8)))
            sz = 3
        elif c == 0xF2:
            if p + 4 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            v = b[x + 1] | (b[x + 2] << 8) | (b[x + 3] << 16)
            ln = _int_text_len(v - 0x1000000 if v >= 0x800000 else v)
            sz = 4
        elif c == 0xF3:
            if p + 5 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _int_text_len(<int32_t>_u32le(b + x + 1))
            sz = 5
        elif c == 0xF4:
            if p + 9 > n:
                raise BlobError("listpack entry runs past the end of the blob")
            ln = _int_text_len(<int64_t>_u64le(b + x + 1))
            sz = 9
        elif c == 0xFF:
            break
        else:
            raise BlobError(f"listpack entry at {p} has invalid encoding byte 0x{c:02x}")
        q = p + sz + _backlen(sz)
        if q > last:
            raise BlobError("listpack entry runs past the end of the blob")
        if q > end:       # the entry ends past the window: its back-length is what is needed
            buf, off = src.window(q - 5, q + 10)
            b = <const uint8_t*>(<char*>buf)
            end = off + len(buf)
        if (b[q - 1 - off] != sz or sz > 127) and bad_p < 0:
            back = _decoded_backlen(b, q - 1 - off)
            if back != sz:
                bad_p, bad_back, bad_sz = p, back, sz
        p = q
        if ln > mx and (not members_only or not i & 1):
            mx = ln
        i += 1
    if p != last:
        raise BlobError(f"listpack end marker at {p}, expected at {last}")
    if bad_p >= 0:
        raise BlobRefused(f"listpack entry at {bad_p} has back-length {bad_back}, not its size "
                          f"{bad_sz}", "listpack back-length", (i, mx))
    if hdr != i and hdr != 65535:
        raise BlobRefused(f"listpack header counts {hdr} entries, it holds {i}",
                          "listpack count", (i, mx))
    if b[last - off] != 0xFF:
        raise BlobRefused(f"listpack ends with 0x{b[last - off]:02x}, not 0xff",
                          "listpack terminator", (i, mx))
    return i, mx


def ziplist_stream_scan(src, bint members_only=False):
    """The compiled twin of blob_stream.ziplist_stream_scan: ziplist_scan over a
    blob_source.BlobSource (the same results, refusals and errors)."""
    cdef Py_ssize_t n = src.n
    cdef bytes buf
    cdef Py_ssize_t off, end
    buf, off = src.window(0, 16)
    cdef const uint8_t* b = <const uint8_t*>(<char*>buf)
    end = off + len(buf)
    cdef uint32_t tail, prevlen
    cdef int hdr = _zl_header(b, n, &tail)
    cdef Py_ssize_t p = 10, i = 0, mx = 0, last = n - 1, ln, q, x
    cdef Py_ssize_t start = 0, prev = 0
    cdef Py_ssize_t bad_p = -1, bad_prev = 0, bad_size = 0
    cdef uint8_t c, e
    cdef int v
    while True:
        if p + 16 > end and end < n:
            buf, off = src.window(p, p + 16)
            b = <const uint8_t*>(<char*>buf)
            end = off + len(buf)
        x = p - off
        c = b[x]          # p <= last here
        if c == 0xFF or p == last:
            break
        if c < 254:
            prevlen = c
            q = p + 1
        else:
            if p + 5 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            prevlen = _u32le(b + x + 1)
            q = p + 5
        if prevlen != <uint64_t>prev and bad_p < 0:
            bad_p, bad_prev, bad_size = p, prevlen, prev
        start = p
        p = q
        if p >= n:
            raise BlobError("ziplist entry runs past the end of the blob")
        x = p - off
        e = b[x]
        if e >> 6 == 0:
            ln = e & 0x3F
            p += 1 + ln
        elif e >> 6 == 1:
            if p + 1 >= n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = ((e & 0x3F) << 8) | b[x + 1]
            p += 2 + ln
        elif e == 0x80:
            if p + 5 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _u32be(b + x + 1)
            p += 5 + ln
        elif e == 0xC0:
            if p + 3 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int16_t>(b[x + 1] | (b[x + 2] << 8)))
            p += 3
        elif e == 0xD0:
            if p + 5 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int32_t>_u32le(b + x + 1))
            p += 5
        elif e == 0xE0:
            if p + 9 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int64_t>_u64le(b + x + 1))
            p += 9
        elif e == 0xF0:
            if p + 4 > n:
                raise BlobError("ziplist entry runs past the end of the blob")
            v = b[x + 1] | (b[x + 2] << 8) | (b[x + 3] << 16)
            ln = _int_text_len(v - 0x1000000 if v >= 0x800000 else v)
            p += 4
        elif e == 0xFE:
            if p + 1 >= n:
                raise BlobError("ziplist entry runs past the end of the blob")
            ln = _int_text_len(<int8_t>b[x + 1])
            p += 2
        elif 0xF1 <= e <= 0xFD:
            ln = 2 if e >= 0xFB else 1  # immediates 0..12
            p += 1
        else:
            raise BlobError(f"ziplist entry at {p} has invalid encoding byte 0x{e:02x}")
        if p > last:
            raise BlobError("ziplist entry runs past the end of the blob")
        prev = p - start
        if ln > mx and (not members_only or not i & 1):
            mx = ln
        i += 1
    if p != last:
        raise BlobError(f"ziplist end marker at {p}, expected at {last}")
    if bad_p >= 0:
        raise BlobRefused(f"ziplist entry at {bad_p} has previous-entry length {bad_prev}, not "
                          f"{bad_size}", "ziplist previous length", (i, mx))
    if tail > <uint64_t>last or (i and tail != <uint64_t>start):
        raise BlobRefused(f"ziplist tail offset {tail} is not its last entry's offset {start}"
                          if i else f"ziplist tail offset {tail} points past its end",
                          "ziplist tail", (i, mx))
    if hdr != i and hdr != 65535:
        raise BlobRefused(f"ziplist header counts {hdr} entries, it holds {i}", "ziplist count",
                          (i, mx))
    if b[last - off] != 0xFF:
        raise BlobRefused(f"ziplist ends with 0x{b[last - off]:02x}, not 0xff",
                          "ziplist terminator", (i, mx))
    return i, mx


# --- keys.family: the compiled twin of key_pattern (reference: tests/family_reference.py) ---

DEF FAMILY_MAX_KEY = 4096   # tests/family_reference.py FAMILY_MAX_KEY


cdef inline bint _is_digit(uint8_t c) noexcept nogil:
    return 48 <= c <= 57


cdef inline bint _compact_date(const uint8_t* d) noexcept nogil:
    """8 digits that read as (19|20)YYMMDD with month 01-12 and day 01-31 (macros._DATE8)."""
    if not ((d[0] == 49 and d[1] == 57) or (d[0] == 50 and d[1] == 48)):
        return False
    if not ((d[4] == 48 and d[5] != 48) or (d[4] == 49 and d[5] <= 50)):
        return False
    return (d[6] == 48 and d[7] != 48) or d[6] == 49 or d[6] == 50 or (d[6] == 51 and d[7] <= 49)


cdef Py_ssize_t _family(const uint8_t* k, Py_ssize_t n, char* out) noexcept nogil:
    """Write key_pattern(k) to out (room for 4 * n bytes) for a key of plain segments and
    integer ids (segments end at ':' and '#'), as the key_pattern macro; returns its length, or -1 for any other key."""
    cdef Py_ssize_t i = 0, o = 0, s, e, d0, j
    cdef uint8_t c
    cdef bint special
    if n > FAMILY_MAX_KEY:
        return -1
    while True:
        s = i
        special = False
        while i < n and k[i] != 58 and k[i] != 35:   # ':', '#' (macros.SPLIT_MARK)
            c = k[i]
            if c < 0x20 or c > 0x7E:
                return -1
            if _is_digit(c) or c == 45:   # '-'
                special = True
            i += 1
        e = i
        if not special:
            memcpy(out + o, k + s, e - s)
            o += e - s
        else:   # \{?[0-9]+\}?, not a compact date
            j = s
            if k[j] == 123:   # '{'
                out[o] = 123
                o += 1
                j += 1
            d0 = j
            while j < e and _is_digit(k[j]):
                j += 1
            if j == d0 or (j - d0 == 8 and _compact_date(k + d0)):
                return -1
            memcpy(out + o, b"{id}", 4)
            o += 4
            if j < e and k[j] == 125:   # '}'
                out[o] = 125
                o += 1
                j += 1
            if j != e:
                return -1
        if i == n:
            return o
        out[o] = k[i]
        o += 1
        i += 1


def fast_family(bytes key):
    """The compiled twin of fast_family in tests/family_reference.py (for tests)."""
    cdef Py_ssize_t n = len(key)
    cdef char* out = <char*>malloc(4 * n + 1)
    cdef Py_ssize_t m
    if not out:
        raise MemoryError()
    try:
        m = _family(<const uint8_t*>(<char*>key), n, out)
        return None if m < 0 else out[:m].decode("ascii")
    finally:
        free(out)


# --- keys.plain_key: the compiled twin of the is_plain_key macro ------------------------

cdef uint8_t _PLAIN_CHAR[256]   # 1: a-z 0-9 _, 2: ':'


cdef void _plain_table() noexcept:
    cdef int c
    for c in range(256):
        _PLAIN_CHAR[c] = 1 if (97 <= c <= 122 or 48 <= c <= 57 or c == 95) else (2 if c == 58 else 0)


_plain_table()


cdef inline bint _plain(const uint8_t* k, Py_ssize_t n) noexcept nogil:
    """The is_plain_key macro for ":": [a-z][a-z0-9_]*(:[a-z0-9_]*)+ (lowercase words joined by `:`)."""
    cdef Py_ssize_t i
    cdef uint8_t seen = 0, c
    if n < 2 or not (97 <= k[0] <= 122):
        return False
    for i in range(1, n):
        c = _PLAIN_CHAR[k[i]]
        if c == 0:
            return False
        seen |= c
    return seen & 2 != 0


def plain_key(bytes key):
    """The compiled twin of plain_key in tests/family_reference.py (for tests)."""
    return _plain(<const uint8_t*>(<char*>key), len(key))


cdef int _room(char** buf, Py_ssize_t* cap, Py_ssize_t need) except -1:
    """Grow buf to hold `need` bytes, doubling its capacity (contents kept)."""
    cdef Py_ssize_t c = cap[0]
    cdef char* grown
    if need <= c:
        return 0
    while c < need:
        c *= 2
    grown = <char*>realloc(buf[0], c)
    if not grown:
        raise MemoryError()
    buf[0] = grown
    cap[0] = c
    return 0


cdef struct Shape:
    int64_t length
    int64_t blob
    int64_t cost
    uint16_t type_code
    uint16_t enc_code
    uint8_t used


# Nullable columns: their validity bitmaps, by index.
DEF V_EXPIRE = 0
DEF V_IDLE = 1
DEF V_FREQ = 2
DEF V_FTTL = 3
DEF V_FMIN = 4
DEF V_INTS = 5
DEF V_KLEN = 6     # a truncated key name's full length (rows.KEY_KEEP)
DEF V_KHASH = 7    # and its hash
DEF V_LPB = 8      # a multi-node quicklist's entries as one listpack (bytes)
DEF V_FAMILY = 9
DEF PLAIN = 10    # not a validity bitmap: the values of keys.plain_key
DEF N_VALID = 11
DEF N_EXTRAS = 8


cdef class KeyColumns:
    """One batch of key rows as typed C columns (the `keys` table's columns but dump_id and
    the key text, which rows.py derives).  `scan` fills it from RDB bytes, `append` from a
    row tuple of the Python path, `take` hands the columns over as bytes and empties it."""

    cdef readonly Py_ssize_t n, capacity
    cdef readonly bint nonascii      # some key name in the batch has a byte >= 0x80
    cdef Py_ssize_t kused, kcap, fused, fcap
    cdef int32_t* c_db
    cdef int32_t* c_koff
    cdef char* c_kdata
    cdef int32_t* c_foff
    cdef char* c_fdata
    cdef uint8_t* c_rtype
    cdef uint16_t* c_type
    cdef uint16_t* c_enc
    cdef int64_t* c_length
    cdef int64_t* c_maxel
    cdef int64_t* c_ser
    cdef int64_t* c_mem
    cdef int64_t* c_total
    cdef int64_t* c_expire
    cdef int64_t* c_idle
    cdef int16_t* c_freq
    cdef int16_t* c_slot
    cdef int64_t* c_offset
    cdef int64_t* c_fttl
    cdef int64_t* c_fmin
    cdef int64_t* c_ints
    cdef int64_t* c_klen
    cdef int64_t* c_khash
    cdef int64_t* c_lpb
    cdef int64_t* c_blob             # value blob bytes of compiled rows, -1 on appended ones
    cdef uint8_t* c_valid[N_VALID]
    cdef Shape* cache
    cdef int64_t key_costs[KEY_COSTS]
    cdef object costs                # the memory model's costs (rows.MemoryCosts)
    cdef int kv_mode                 # -1 unknown; 1: the key lives in the object (kv.py)
    cdef dict kv_costs               # kv_mode: memory by (type, enc, key len, len, blob, ttl)
    cdef int64_t shares_db
    cdef double share_main, share_expire
    cdef readonly list type_names, encoding_names
    cdef Py_ssize_t module_rows      # rows of module values in the batch (append)
    cdef dict type_codes, encoding_codes
    cdef uint16_t type_of[256]
    cdef uint16_t blob_enc_of[256]
    cdef uint16_t enc_int, enc_embstr, enc_raw, enc_listpack
    # A filter (db/filters.py, set_filter): rows it leaves out are never committed.
    cdef bint filtering
    cdef readonly Py_ssize_t dropped  # records read and left out by the filter
    cdef object f_dbs                # a frozenset of db numbers, or None
    cdef bint f_types
    cdef uint8_t f_type_ok[256]      # by RDB type byte
    cdef int64_t f_min_len, f_min_mem
    cdef bint f_skip_expired
    cdef object f_snapshot_ms        # gives the snapshot time (ms), asked at the first expiry
    cdef int f_cutoff_known          # 0: not asked yet
    cdef int64_t f_cutoff
    cdef list f_prefixes             # literal key prefixes (bytes), or None
    cdef object f_key_ok             # key bytes -> bool, or None

    def __cinit__(self, Py_ssize_t capacity, costs, dict type_names, dict type_encodings):
        """`costs`: key_cost(key length), value_cost(type, encoding, length, blob),
        embeds_key(), kv_cost(type, encoding, key length, length, blob, ttl) and
        total_shares(db) of the memory model (rows.MemoryCosts, which refers to no batch)."""
        cdef int i
        self.capacity = capacity
        self.n = 0
        self.kused = 0
        self.kcap = 1 << 20
        self.fused = 0
        self.fcap = 1 << 20
        self.c_db = <int32_t*>malloc(capacity * 4)
        self.c_koff = <int32_t*>malloc((capacity + 1) * 4)
        self.c_kdata = <char*>malloc(self.kcap)
        self.c_foff = <int32_t*>malloc((capacity + 1) * 4)
        self.c_fdata = <char*>malloc(self.fcap)
        self.c_rtype = <uint8_t*>malloc(capacity)
        self.c_type = <uint16_t*>malloc(capacity * 2)
        self.c_enc = <uint16_t*>malloc(capacity * 2)
        self.c_length = <int64_t*>malloc(capacity * 8)
        self.c_maxel = <int64_t*>malloc(capacity * 8)
        self.c_ser = <int64_t*>malloc(capacity * 8)
        self.c_mem = <int64_t*>malloc(capacity * 8)
        self.c_total = <int64_t*>malloc(capacity * 8)
        self.c_expire = <int64_t*>malloc(capacity * 8)
        self.c_idle = <int64_t*>malloc(capacity * 8)
        self.c_freq = <int16_t*>malloc(capacity * 2)
        self.c_slot = <int16_t*>malloc(capacity * 2)
        self.c_offset = <int64_t*>malloc(capacity * 8)
        self.c_fttl = <int64_t*>malloc(capacity * 8)
        self.c_fmin = <int64_t*>malloc(capacity * 8)
        self.c_ints = <int64_t*>malloc(capacity * 8)
        self.c_klen = <int64_t*>malloc(capacity * 8)
        self.c_khash = <int64_t*>malloc(capacity * 8)
        self.c_lpb = <int64_t*>malloc(capacity * 8)
        self.c_blob = <int64_t*>malloc(capacity * 8)
        for i in range(N_VALID):
            self.c_valid[i] = <uint8_t*>malloc(capacity // 8 + 1)
        self.cache = <Shape*>malloc(SHAPE_CACHE * sizeof(Shape))
        if (not self.c_db or not self.c_koff or not self.c_kdata or not self.c_foff
                or not self.c_fdata or not self.c_rtype
                or not self.c_type or not self.c_enc or not self.c_length or not self.c_maxel
                or not self.c_ser or not self.c_mem or not self.c_total or not self.c_expire
                or not self.c_idle or not self.c_freq or not self.c_slot or not self.c_offset
                or not self.c_fttl or not self.c_fmin or not self.c_ints or not self.cache
                or not self.c_klen or not self.c_khash or not self.c_lpb
                or not self.c_blob):
            raise MemoryError()
        for i in range(N_VALID):
            if not self.c_valid[i]:
                raise MemoryError()
            memset(self.c_valid[i], 0, capacity // 8 + 1)
        memset(self.cache, 0, SHAPE_CACHE * sizeof(Shape))
        for i in range(KEY_COSTS):
            self.key_costs[i] = -1
        self.shares_db = -1
        self.kv_mode = -1
        self.kv_costs = {}
        # Rows of the compiled loop never write these: keys.extras copies them under a null
        # flag, so they read as 0, not as uninitialised memory.
        memset(self.c_fttl, 0, capacity * 8)
        memset(self.c_fmin, 0, capacity * 8)
        memset(self.c_ints, 0, capacity * 8)
        memset(self.c_klen, 0, capacity * 8)
        memset(self.c_khash, 0, capacity * 8)
        memset(self.c_lpb, 0, capacity * 8)
        self.c_koff[0] = 0
        self.c_foff[0] = 0
        self.costs = costs
        self.type_names = []
        self.type_codes = {}
        self.encoding_names = []
        self.encoding_codes = {}
        for i in range(256):
            self.type_of[i] = 0xFFFF
            self.blob_enc_of[i] = 0xFFFF
        for t, name in type_names.items():
            self.type_of[t] = self._code(self.type_names, self.type_codes, name)
        for t, name in type_encodings.items():
            self.blob_enc_of[t] = self._code(self.encoding_names, self.encoding_codes, name)
        self.enc_int = self._code(self.encoding_names, self.encoding_codes, "int")
        self.enc_embstr = self._code(self.encoding_names, self.encoding_codes, "embstr")
        self.enc_raw = self._code(self.encoding_names, self.encoding_codes, "raw")
        self.enc_listpack = self._code(self.encoding_names, self.encoding_codes, "listpack")
        self.filtering = False
        self.dropped = 0
        self.f_min_mem = 0

    def set_filter(self, dbs=None, rdb_types=None, int64_t min_length=0, int64_t min_memory=0,
                   bint skip_expired=False, prefixes=None, key_ok=None, snapshot_ms=None):
        """Leave out the records a filter rejects (db/filters.py KeyFilter.compiled): a db not
        in `dbs`, an RDB type byte not in `rdb_types`, a length or memory below the minimum, an
        expiry at or before the snapshot time (snapshot_ms(), asked once), a key with none of
        `prefixes`, a key `key_ok` refuses.  Such a record is read, counted
        in `dropped`, and its row never committed."""
        cdef int i
        self.f_dbs = frozenset(dbs) if dbs else None
        self.f_types = rdb_types is not None
        for i in range(256):
            self.f_type_ok[i] = 1 if rdb_types is None or i in rdb_types else 0
        self.f_min_len = min_length
        self.f_min_mem = min_memory
        self.f_skip_expired = skip_expired
        self.f_cutoff_known = 0
        self.f_snapshot_ms = snapshot_ms
        self.f_prefixes = list(prefixes) if prefixes is not None else None
        self.f_key_ok = key_ok
        self.filtering = bool(dbs or rdb_types is not None or min_length or min_memory
                              or skip_expired or prefixes is not None or key_ok is not None)

    cdef bint _rejects(self, const uint8_t* b, Py_ssize_t kpos, Py_ssize_t klen, int32_t db,
                       uint8_t t, int64_t length, bint has_expire, int64_t expire) except -1:
        """Whether the filter leaves out this record, but for its memory (checked once it is
        estimated: a record left out here costs no estimate)."""
        cdef bytes pre
        cdef Py_ssize_t plen
        cdef bint hit
        if self.f_dbs is not None and db not in self.f_dbs:
            return True
        if not self.f_type_ok[t]:
            return True
        if length < self.f_min_len:
            return True
        if self.f_skip_expired and has_expire:
            if not self.f_cutoff_known:
                self.f_cutoff = self.f_snapshot_ms() if self.f_snapshot_ms is not None else 0
                self.f_cutoff_known = 1
            if expire <= self.f_cutoff:
                return True
        if self.f_prefixes is not None:
            hit = False
            for pre in self.f_prefixes:
                plen = len(pre)
                if plen <= klen and memcmp(<const char*>pre, b + kpos, plen) == 0:
                    hit = True
                    break
            if not hit:
                return True
        if self.f_key_ok is not None:
            if not self.f_key_ok(PyBytes_FromStringAndSize(<const char*>(b + kpos), klen)):
                return True
        return False

    def __dealloc__(self):
        cdef int i
        free(self.c_db)
        free(self.c_koff)
        free(self.c_kdata)
        free(self.c_foff)
        free(self.c_fdata)
        free(self.c_rtype)
        free(self.c_type)
        free(self.c_enc)
        free(self.c_length)
        free(self.c_maxel)
        free(self.c_ser)
        free(self.c_mem)
        free(self.c_total)
        free(self.c_expire)
        free(self.c_idle)
        free(self.c_freq)
        free(self.c_slot)
        free(self.c_offset)
        free(self.c_fttl)
        free(self.c_fmin)
        free(self.c_ints)
        free(self.c_klen)
        free(self.c_khash)
        free(self.c_lpb)
        free(self.c_blob)
        for i in range(N_VALID):
            free(self.c_valid[i])
        free(self.cache)

    cdef uint16_t _code(self, list names, dict codes, str name) except? 0xFFFF:
        code = codes.get(name)
        if code is None:
            if len(names) >= 0xFFFF:
                raise ValueError("too many distinct type or encoding names")
            code = codes[name] = len(names)
            names.append(name)
        return code

    cdef inline bint _full(self) noexcept:
        return self.n >= self.capacity or self.kused >= KEY_DATA_SOFT

    @property
    def full(self):
        """True when the batch should be taken (rows or key bytes at their limit)."""
        return self._full()

    cdef int _key(self, const char* k, Py_ssize_t klen) except -1:
        """Append one key name to the key data and its family (keys.family; null when the
        compiled twin leaves it to DuckDB) to the family data, both grown as needed, and set
        its keys.plain_key bit."""
        cdef Py_ssize_t need = self.kused + klen
        cdef Py_ssize_t i, fam
        if need > KEY_DATA_HARD:
            raise OverflowError("key names of one batch exceed 2 GiB")
        # Both buffers grown before either is written: a failure leaves the batch as it was.
        _room(&self.c_kdata, &self.kcap, need)
        _room(&self.c_fdata, &self.fcap, self.fused + (4 * klen if klen <= FAMILY_MAX_KEY else 0))
        memcpy(self.c_kdata + self.kused, k, klen)
        if not self.nonascii:
            for i in range(klen):
                if <uint8_t>k[i] & 0x80:
                    self.nonascii = True
                    break
        self.kused = need
        self.c_koff[self.n + 1] = <int32_t>need
        fam = _family(<const uint8_t*>k, klen, self.c_fdata + self.fused)
        if fam >= 0:
            self.fused += fam
            self._set_valid(V_FAMILY, self.n)
        if _plain(<const uint8_t*>k, klen):
            self._set_valid(PLAIN, self.n)
        self.c_foff[self.n + 1] = <int32_t>self.fused
        return 0

    cdef inline void _set_valid(self, int col, Py_ssize_t i) noexcept:
        self.c_valid[col][i >> 3] |= <uint8_t>(1 << (i & 7))

    cdef inline void _clear_valid(self, Py_ssize_t i) noexcept:
        """Row i's null flags to null (a row written after a failed one reuses its slot)."""
        cdef int col
        for col in range(N_VALID):
            self.c_valid[col][i >> 3] &= <uint8_t>~(1 << (i & 7))

    cdef int _estimate(self, uint16_t tc, uint16_t ec, int64_t key_len, int64_t length,
                       int64_t blob, int32_t db, bint ttl, Py_ssize_t i) except -1:
        """memory_bytes and memory_total_bytes of row i, as rows.RowBuilder.add computes them
        (memory.estimate and memory.total): the key's cost by key length and the value's by
        value shape, each asked of the memory model (self.costs) once, and
        the total from the db's bucket shares, as memory.total adds them."""
        cdef int64_t key_cost, mem
        cdef double t
        if self.kv_mode < 0:
            self.kv_mode = 1 if self.costs.embeds_key() else 0
        if self.kv_mode:
            # Redis 8.6 / Valkey 8.1+: key, expiry and value share one cost (kv.kv_estimate).
            shape = (tc, ec, key_len, length, blob, ttl)
            cost = self.kv_costs.get(shape)
            if cost is None:
                if len(self.kv_costs) >= 100_000:
                    self.kv_costs.clear()
                cost = self.kv_costs[shape] = self.costs.kv_cost(
                    self.type_names[tc], self.encoding_names[ec], key_len, length, blob, ttl)
            mem = cost
            if db != self.shares_db:
                self.share_main, self.share_expire = self.costs.total_shares(db)
                self.shares_db = db
            t = <double>mem + self.share_main
            if ttl:
                t += self.share_expire
            self.c_mem[i] = mem
            self.c_total[i] = <int64_t>nearbyint(t)
            return 0
        if key_len < KEY_COSTS and self.key_costs[key_len] >= 0:
            key_cost = self.key_costs[key_len]
        else:
            key_cost = self.costs.key_cost(key_len)
            if key_len < KEY_COSTS:
                self.key_costs[key_len] = key_cost
        cdef uint64_t h = (<uint64_t>length + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL
        h ^= <uint64_t>blob * 0x94D049BB133111EBULL
        h ^= (<uint64_t>tc << 40) ^ (<uint64_t>ec << 20)
        h ^= h >> 31
        cdef Shape* s = &self.cache[h & (SHAPE_CACHE - 1)]
        if not (s.used and s.length == length and s.blob == blob and s.type_code == tc
                and s.enc_code == ec):
            s.cost = self.costs.value_cost(self.type_names[tc], self.encoding_names[ec],
                                               length, blob)
            s.length = length
            s.blob = blob
            s.type_code = tc
            s.enc_code = ec
            s.used = 1
        if db != self.shares_db:
            self.share_main, self.share_expire = self.costs.total_shares(db)
            self.shares_db = db
        mem = key_cost + s.cost
        t = <double>mem + self.share_main      # memory.total: the same float additions
        if ttl:
            t += self.share_expire
        self.c_mem[i] = mem
        self.c_total[i] = <int64_t>nearbyint(t)   # round half to even, as Python's round
        return 0

    def append(self, tuple row):
        """One row of the Python path, in RowBuilder's tuple order: (dump_id, db, key text,
        key bytes, type, encoding, rdb_type, length, longest element, serialized bytes, memory,
        memory total, expire, idle, freq, slot, offset, fields with TTL, earliest field expiry,
        int members, full key length and key hash of a truncated key name, listpack bytes)."""
        cdef Py_ssize_t i = self.n
        cdef bytes key = row[3]
        if i >= self.capacity:
            raise OverflowError("KeyColumns is full: take() the batch first")
        self._clear_valid(i)
        self.c_db[i] = row[1]
        self.c_type[i] = self._code(self.type_names, self.type_codes, row[4])
        self.c_enc[i] = self._code(self.encoding_names, self.encoding_codes, row[5])
        self.c_rtype[i] = row[6]
        self.c_length[i] = row[7]
        self.c_maxel[i] = row[8]
        self.c_ser[i] = row[9]
        self.c_mem[i] = row[10]
        self.c_total[i] = row[11]
        self.c_offset[i] = row[16]
        self._opt64(self.c_expire, V_EXPIRE, i, row[12])
        self._opt64(self.c_idle, V_IDLE, i, row[13])
        if row[14] is None:
            self.c_freq[i] = 0
        else:
            self.c_freq[i] = row[14]
            self._set_valid(V_FREQ, i)
        self._opt64(self.c_fttl, V_FTTL, i, row[17])
        self._opt64(self.c_fmin, V_FMIN, i, row[18])
        self._opt64(self.c_ints, V_INTS, i, row[19])
        self._opt64(self.c_klen, V_KLEN, i, row[20])
        self._opt64(self.c_khash, V_KHASH, i, row[21])
        self._opt64(self.c_lpb, V_LPB, i, row[22])
        self.c_blob[i] = -1
        self.c_slot[i] = row[15]
        self._key(<const char*>key, len(key))   # last: what can fail has been done
        self.n = i + 1
        if row[4] == "module":
            self.module_rows += 1

    cdef inline int _opt64(self, int64_t* col, int v, Py_ssize_t i, value) except -1:
        if value is None:
            col[i] = 0
        else:
            col[i] = value
            self._set_valid(v, i)
        return 0

    cdef tuple _extras(self):
        """keys.extras as Arrow list<int64> buffers (row validity, offsets, values, values'
        validity): idle, freq, fields with TTL, earliest field expiry, int members, full key
        length and key hash of a truncated key name, listpack bytes (the order in
        store.KEYS_SCHEMA) for the rows that have any of them, null for the others."""
        cdef Py_ssize_t n = self.n, nb = n // 8 + 1, i, rows = 0, j, k
        cdef int col
        cdef int cols[N_EXTRAS]
        cols[0] = V_IDLE
        cols[1] = V_FREQ
        cols[2] = V_FTTL
        cols[3] = V_FMIN
        cols[4] = V_INTS
        cols[5] = V_KLEN
        cols[6] = V_KHASH
        cols[7] = V_LPB
        cdef bytes valid = PyBytes_FromStringAndSize(NULL, nb)
        cdef uint8_t* rv = <uint8_t*>PyBytes_AS_STRING(valid)
        for i in range(nb):
            rv[i] = (self.c_valid[V_IDLE][i] | self.c_valid[V_FREQ][i] | self.c_valid[V_FTTL][i]
                     | self.c_valid[V_FMIN][i] | self.c_valid[V_INTS][i]
                     | self.c_valid[V_KLEN][i] | self.c_valid[V_LPB][i])
        for i in range(n):
            if rv[i >> 3] & (1 << (i & 7)):
                rows += 1
        cdef bytes offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * 4)
        cdef int32_t* off = <int32_t*>PyBytes_AS_STRING(offsets)
        cdef bytes values = PyBytes_FromStringAndSize(NULL, rows * N_EXTRAS * 8)
        cdef int64_t* val = <int64_t*>PyBytes_AS_STRING(values)
        cdef bytes values_valid = PyBytes_FromStringAndSize(NULL, (rows * N_EXTRAS) // 8 + 1)
        cdef uint8_t* vv = <uint8_t*>PyBytes_AS_STRING(values_valid)
        memset(vv, 0, (rows * N_EXTRAS) // 8 + 1)
        j = 0
        for i in range(n):
            off[i] = <int32_t>j
            if not rv[i >> 3] & (1 << (i & 7)):
                continue
            val[j] = self.c_idle[i]
            val[j + 1] = self.c_freq[i]
            val[j + 2] = self.c_fttl[i]
            val[j + 3] = self.c_fmin[i]
            val[j + 4] = self.c_ints[i]
            val[j + 5] = self.c_klen[i]
            val[j + 6] = self.c_khash[i]
            val[j + 7] = self.c_lpb[i]
            for k in range(N_EXTRAS):
                col = cols[k]
                if self.c_valid[col][i >> 3] & (1 << (i & 7)):
                    vv[(j + k) >> 3] |= <uint8_t>(1 << ((j + k) & 7))
            j += N_EXTRAS
        off[n] = <int32_t>j
        return valid, offsets, values, values_valid

    cdef bytes _encoding_ids(self):
        """keys.encoding_id per row, as rows._encoding_columns gives it: MODULE_ENCODING_ID for
        a module value (whose encoding name is its type name), else the position of its
        encoding in constants.ENCODING_NAMES."""
        cdef bytes table = bytes([ENCODING_IDS.get(e, MODULE_ENCODING_ID) for e in self.encoding_names])
        cdef const uint8_t* t = <const uint8_t*>PyBytes_AS_STRING(table)
        cdef bytes out = PyBytes_FromStringAndSize(NULL, self.n)
        cdef uint8_t* o = <uint8_t*>PyBytes_AS_STRING(out)
        cdef Py_ssize_t i
        cdef int module = self.type_codes.get("module", -1)
        for i in range(self.n):
            o[i] = MODULE_ENCODING_ID if self.c_type[i] == module else t[self.c_enc[i]]
        return out

    def take(self):
        """The batch as {column: bytes} (nullable columns: (data, validity bitmap)) plus
        'n', 'key_offsets', 'key_data', 'family_offsets', 'family_data', 'family_valid',
        'plain_key' (a bitmap of values), 'encoding_id' (one byte per row), 'module_rows',
        'nonascii' and 'extras' (see _extras); the columns are then empty again."""
        cdef Py_ssize_t n = self.n, nb = n // 8 + 1, i
        out = {
            "n": n,
            "nonascii": self.nonascii,
            "key_offsets": PyBytes_FromStringAndSize(<char*>self.c_koff, (n + 1) * 4),
            "key_data": PyBytes_FromStringAndSize(self.c_kdata, self.kused),
            "family_offsets": PyBytes_FromStringAndSize(<char*>self.c_foff, (n + 1) * 4),
            "family_data": PyBytes_FromStringAndSize(self.c_fdata, self.fused),
            "family_valid": PyBytes_FromStringAndSize(<char*>self.c_valid[V_FAMILY], nb),
            "plain_key": PyBytes_FromStringAndSize(<char*>self.c_valid[PLAIN], nb),
            "db": PyBytes_FromStringAndSize(<char*>self.c_db, n * 4),
            "type": PyBytes_FromStringAndSize(<char*>self.c_type, n * 2),
            "encoding": PyBytes_FromStringAndSize(<char*>self.c_enc, n * 2),
            "encoding_id": self._encoding_ids(),
            "module_rows": self.module_rows,
            "rdb_type": PyBytes_FromStringAndSize(<char*>self.c_rtype, n),
            "length": PyBytes_FromStringAndSize(<char*>self.c_length, n * 8),
            "max_elem_bytes": PyBytes_FromStringAndSize(<char*>self.c_maxel, n * 8),
            "serialized_bytes": PyBytes_FromStringAndSize(<char*>self.c_ser, n * 8),
            "memory_bytes": PyBytes_FromStringAndSize(<char*>self.c_mem, n * 8),
            "memory_total_bytes": PyBytes_FromStringAndSize(<char*>self.c_total, n * 8),
            "slot": PyBytes_FromStringAndSize(<char*>self.c_slot, n * 2),
            "file_offset": PyBytes_FromStringAndSize(<char*>self.c_offset, n * 8),
            # not a column of key_rows: the value's blob (0 for strings) of the rows this loop
            # read, -1 on rows appended from the Python path (rdbscan/migrate projections)
            "blob_bytes": PyBytes_FromStringAndSize(<char*>self.c_blob, n * 8),
            "expire_at_ms": (PyBytes_FromStringAndSize(<char*>self.c_expire, n * 8),
                             PyBytes_FromStringAndSize(<char*>self.c_valid[V_EXPIRE], nb)),
            "extras": self._extras(),
        }
        for i in range(N_VALID):
            memset(self.c_valid[i], 0, nb)
        self.n = 0
        self.kused = 0
        self.fused = 0
        self.nonascii = False
        self.module_rows = 0
        return out

    def scan(self, bytes buf, Py_ssize_t pos, int64_t base, int32_t db, int embstr_limit,
             Py_ssize_t max_item, bint listpack_lists, bytes embed=None):
        """Read the records at buf[pos:] that this loop handles (see the comment above the
        class) into the batch, until the batch is full.  `base` is the file offset of buf[0],
        `embstr_limit` the parser's embstr_limit(), `listpack_lists` whether a one-node
        quicklist 2 is a listpack-encoded list (Redis 7.2+), `embed` the parser's embed table
        (kv.embed_table: whether a string of that key length, value length and TTL is embstr)
        or None.  Returns (position after the last record taken, records taken)."""
        cdef const uint8_t* b = <const uint8_t*>(<char*>buf)
        cdef const uint8_t* emb = NULL
        cdef Py_ssize_t end = len(buf), q, taken = 0
        if embed is not None:
            emb = <const uint8_t*>(<char*>embed)
        while not self._full():
            q = self._record(buf, b, pos, end, base, db, embstr_limit, max_item, listpack_lists,
                             emb)
            if q < 0:
                break
            pos = q
            taken += 1
        return pos, taken

    cdef Py_ssize_t _record(self, bytes buf, const uint8_t* b, Py_ssize_t pos, Py_ssize_t end,
                            int64_t base, int32_t db, int embstr_limit,
                            Py_ssize_t max_item, bint listpack_lists,
                            const uint8_t* emb) except -2:
        """One record (its expire / idle / freq opcodes, type, key, value) into row n;
        returns the position after it, or -1 when the Python path must read it."""
        cdef Py_ssize_t p = pos, q, kpos, klen, vpos, vlen, count = 0, mx = 0, i = self.n
        cdef int is_int
        cdef int64_t expire = 0, idle = 0
        cdef int freq = 0
        cdef bint has_expire = False, has_idle = False, has_freq = False
        cdef uint64_t ln, clen, ulen
        cdef uint8_t t, b0
        cdef uint16_t enc
        cdef int64_t length, blob = 0
        cdef const uint8_t* v
        cdef bytes out
        while True:
            if p >= end:
                return -1
            t = b[p]
            if t == 0xFC:        # EXPIRETIME_MS
                if p + 9 > end:
                    return -1
                expire = <int64_t>_u64le(b + p + 1)
                has_expire = True
                p += 9
            elif t == 0xFD:      # EXPIRETIME (seconds)
                if p + 5 > end:
                    return -1
                expire = <int64_t>(<int32_t>_u32le(b + p + 1)) * 1000
                has_expire = True
                p += 5
            elif t == 0xF8:      # IDLE
                q = _plain_len(b, p + 1, end, &ln)
                if q < 0 or ln > <uint64_t>9223372036854775807ULL:
                    return -1
                idle = <int64_t>ln
                has_idle = True
                p = q
            elif t == 0xF9:      # FREQ
                if p + 2 > end:
                    return -1
                freq = b[p + 1]
                has_freq = True
                p += 2
            else:
                break
        if t != 0 and t != 10 and t != 11 and t != 12 and t != 13 and t != 14 and t != 16 \
                and t != 17 and t != 18 and t != 20:
            return -1
        p = _raw_str(b, p + 1, end, &kpos, &klen)
        if p < 0 or p >= end or klen > KEY_KEEP:
            return -1
        if t == 14 or t == 18:
            # A quicklist of one packed node (small lists): node count, [container,] blob.
            p = _plain_len(b, p, end, &ln)
            if p < 0 or ln != 1:
                return -1
            if t == 18:
                p = _plain_len(b, p, end, &ln)
                if p < 0 or ln != 2:      # QUICKLIST_NODE_CONTAINER_PACKED
                    return -1
            if p >= end:
                return -1
        b0 = b[p]
        if t == 0:
            if b0 == 0xC3:     # LZF: measured; decompressed only to check its length
                q = _lzf_str(b, p, end, &clen, &ulen)
                if q < 0 or not _lzf_length_ok(buf, q, clen, ulen):
                    return -1
                q += <Py_ssize_t>clen
                length = <int64_t>ulen
                enc = self.enc_embstr if length <= embstr_limit else self.enc_raw
            else:
                q = _str_len(b, p, end, &vlen, &is_int)
                if q < 0:
                    return -1
                length = vlen
                if is_int or (vlen <= 20 and _is_long_text(b + q - vlen, vlen)):
                    enc = self.enc_int
                else:
                    enc = self.enc_embstr if vlen <= embstr_limit else self.enc_raw
            if emb != NULL and enc != self.enc_int:
                # parser.Parser.embedded: the writing server's rule (kv.string_embedded)
                enc = self.enc_embstr if (klen < EMBED_KEYS and length < EMBED_VALUES and
                                          emb[(has_expire * EMBED_KEYS + klen) * EMBED_VALUES
                                              + length]) else self.enc_raw
            self.c_maxel[i] = length
        else:
            if b0 < 0xC0:
                q = _raw_str(b, p, end, &vpos, &vlen)
                if q < 0:
                    return -1
                v = b + vpos
            elif b0 == 0xC3:
                q = _lzf_str(b, p, end, &clen, &ulen)
                if q < 0 or ulen == 0 or ulen > <uint64_t>max_item:
                    return -1
                try:
                    out = _lzf.decompress(buf[q:q + <Py_ssize_t>clen], <Py_ssize_t>ulen)
                except (ValueError, SystemError):
                    return -1
                if out is None or len(out) != <Py_ssize_t>ulen:
                    return -1
                q += <Py_ssize_t>clen
                v = <const uint8_t*>(<char*>out)
                vlen = <Py_ssize_t>ulen
            else:
                return -1
            try:
                if t == 16 or t == 17 or t == 20 or t == 18:
                    _listpack_scan(v, vlen, t == 17, &count, &mx)
                elif t == 11:
                    _intset_scan(v, vlen, &count, &mx)
                else:
                    _ziplist_scan(v, vlen, t == 12, &count, &mx)
            except BlobError:
                return -1
            if count == 0:    # Redis refuses empty collections: the Python path flags them
                return -1
            if t == 12 or t == 13 or t == 16 or t == 17:
                if count & 1:
                    return -1
                count //= 2
            length = count
            blob = vlen
            if t == 18 and listpack_lists:   # parser.v_quicklist: Redis 7.2+ listpack lists
                enc = self.enc_listpack
            else:
                enc = self.blob_enc_of[t]
            self.c_maxel[i] = mx
        # The record is whole: commit row i (the key last: what can fail has been done).
        if self.filtering and self._rejects(b, kpos, klen, db, t, length, has_expire, expire):
            self.dropped += 1
            return q     # read, not kept: row i stays free
        self._estimate(self.type_of[t], enc, klen, length, blob, db, has_expire, i)
        if self.c_mem[i] < self.f_min_mem:   # 0 without a filter
            self.dropped += 1
            return q
        self._clear_valid(i)
        self.c_db[i] = db
        self.c_rtype[i] = t
        self.c_type[i] = self.type_of[t]
        self.c_enc[i] = enc
        self.c_length[i] = length
        self.c_blob[i] = blob
        self.c_ser[i] = q - pos
        self.c_offset[i] = base + pos
        self.c_expire[i] = expire
        if has_expire:
            self._set_valid(V_EXPIRE, i)
        self.c_idle[i] = idle
        if has_idle:
            self._set_valid(V_IDLE, i)
        self.c_freq[i] = <int16_t>freq
        if has_freq:
            self._set_valid(V_FREQ, i)
        self.c_slot[i] = <int16_t>_key_slot(b + kpos, klen)
        self._key(<const char*>(b + kpos), klen)
        self.n = i + 1
        return q
