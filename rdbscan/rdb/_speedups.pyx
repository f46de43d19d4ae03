# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Compiled twins of the parser's hottest loops (the rdb layer's compiled core).

Each function here has a pure-Python reference with the same name, arguments, results and
error messages (blobs.py, reader.py); the pure-Python code stays the fallback when this
module was not built, and tests/test_speedups.py checks that both give identical rows on every
fixture.  Built at install time by setup.py (Cython); `rdbscan --version` says which is used.
The record walker (RowSink.scan) hands its records to a batch of key rows through the C
interface declared in _speedups.pxd; the batch itself is the db layer's (db/_batch.pyx).

Every read is bounds-checked by hand (boundscheck is off for speed): a blob that ends early
raises the same BlobError the Python walker raises on IndexError.
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t

from .errors import BlobError, BlobRefused
from .constants import ENCODING_IDS, TYPE_ENCODINGS
from .reader import LZF_CHECK_MAX

# SHA-256 of the sources this module was compiled from (_speedups.pyx, then _speedups.pxd:
# setup.py's compile_time_env); backend.py compares it with the files beside the module to tell
# a stale build.
SOURCE_SHA256 = RDBSCAN_SPEEDUPS_SHA256

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


DEF LZF_SLACK = 32   # bytes _lzf_decode may write past ulen (and read past the input's end)


cdef inline void _copy16(uint8_t* d, const uint8_t* s) noexcept nogil:
    memcpy(d, s, 16)


cdef Py_ssize_t _lzf_decode(const uint8_t* ip, Py_ssize_t clen, Py_ssize_t readable,
                            uint8_t* op, Py_ssize_t ulen) noexcept nogil:
    """Decode the LZF data ip[0:clen] into op, which has room for ulen + LZF_SLACK bytes; returns
    the length written, or -1 where liblzf's lzf_decompress (python-lzf) fails: a literal run or
    a back-reference's bytes pass the input's end, a back-reference reaches before the output's
    start, or the output would pass ulen (the checks of _lzf_length_ok).  `readable`: how many
    bytes from ip may be read (at least clen).  Copies go 16 bytes at a time, past their end
    into the slack, while both sides have room: twice the speed of python-lzf's byte loops on
    listpacks (docs/benchmarks.md, "LZF blobs decoded in place")."""
    cdef Py_ssize_t i = 0, o = 0, ln, dist, k
    cdef unsigned int ctrl
    while i < clen:
        ctrl = ip[i]
        i += 1
        if ctrl < 32:   # a literal run of ctrl + 1 bytes
            ln = ctrl + 1
            if i + ln > clen or o + ln > ulen:
                return -1
            if i + 32 <= readable:
                _copy16(op + o, ip + i)
                if ln > 16:
                    _copy16(op + o + 16, ip + i + 16)
            else:
                memcpy(op + o, ip + i, ln)
            i += ln
            o += ln
        else:   # a back-reference: length (ctrl >> 5) + 2, offset 13 bits + 1
            ln = ctrl >> 5
            if ln == 7:
                if i >= clen:
                    return -1
                ln += ip[i]
                i += 1
            if i >= clen:
                return -1
            dist = ((<Py_ssize_t>(ctrl & 0x1f)) << 8) + ip[i] + 1
            i += 1
            ln += 2
            if dist > o or o + ln > ulen:
                return -1
            if dist >= 16:   # 16 bytes at a time never read what this copy writes
                k = 0
                while k < ln:
                    _copy16(op + o + k, op + o - dist + k)
                    k += 16
            else:            # byte by byte: the source overlaps the output
                for k in range(ln):
                    op[o + k] = op[o - dist + k]
            o += ln
    return o


def lzf_decode(bytes data, Py_ssize_t ulen, Py_ssize_t clen=-1):
    """_lzf_decode of data[:clen] (all of it when clen < 0), the rest readable as a record's
    buffer is past its blob (for tests): the ulen bytes, or None where python-lzf's
    decompress(data[:clen], ulen) gives no ulen bytes (fails, or gives fewer)."""
    cdef uint8_t* out = <uint8_t*>malloc(ulen + LZF_SLACK)
    cdef Py_ssize_t n
    if clen < 0 or clen > len(data):
        clen = len(data)
    if out == NULL:
        raise MemoryError()
    try:
        n = _lzf_decode(<const uint8_t*>PyBytes_AS_STRING(data), clen, len(data), out, ulen)
        return PyBytes_FromStringAndSize(<char*>out, n) if n == ulen else None
    finally:
        free(out)


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
# The record loop for the common keys, straight into a batch of key rows.
#
# Strings and single-blob values (listpacks, ziplists, intsets, lists held in a one-node
# quicklist) are nearly every key of a real dump.  RowSink.scan reads as many of them as lie
# wholly in the reader's buffer and hands each to the sink (add_record, a C call: the db layer's
# KeyColumns writes its row into typed C columns, with no Python object per key); at the first
# record it does not handle (an opcode, a collection, a value not wholly in the buffer, anything
# damaged) it stops and the parser's Python loop reads that record, yielding a KeyRecord that
# RowBuilder appends to the same batch, so rows stay in file order.  Errors always come from
# the Python path.  Twins: parser._Parser.records / string_value / v_blob / v_quicklist (here),
# rows.RowBuilder.add (db/_batch.pyx KeyColumns.add_record); tests/test_speedups.py compares
# whole tables with the pure-Python run.

from libc.stdlib cimport malloc, free
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize


DEF EMBED_KEYS = 128      # kv.embed_table: key lengths ...
DEF EMBED_VALUES = 128    # ... and value lengths it covers (longer: never embedded)
DEF KEY_KEEP = 1024    # rows.KEY_KEEP: longer key names take the Python path (a prefix is kept)


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




# --- the walker's encodings (Record.encoding: constants.ENCODING_IDS) -------------------------

cdef uint8_t _BLOB_ENC[256]     # by RDB type byte: its blob's encoding, 0xFF for none
cdef uint8_t _ENC_INT = ENCODING_IDS["int"]
cdef uint8_t _ENC_EMBSTR = ENCODING_IDS["embstr"]
cdef uint8_t _ENC_RAW = ENCODING_IDS["raw"]
cdef uint8_t _ENC_LISTPACK = ENCODING_IDS["listpack"]


cdef void _blob_encodings():
    cdef int t
    for t in range(256):
        _BLOB_ENC[t] = ENCODING_IDS.get(TYPE_ENCODINGS.get(t), 0xFF)


_blob_encodings()


cdef class RowSink:
    """A batch of key rows as the record walker sees it (_speedups.pxd): `scan` reads records
    and hands each to `add_record` until `is_full`.  The db layer's KeyColumns implements the
    two C methods; this base class takes no row (rdb/sink.py RowSink is its pure twin)."""

    cdef bint is_full(self) noexcept:
        return True

    cdef int add_record(self, const Record* rec) except -1:
        raise NotImplementedError("RowSink.add_record")

    def scan(self, bytes buf, Py_ssize_t pos, int64_t base, int32_t db, int embstr_limit,
             Py_ssize_t max_item, bint listpack_lists, bytes embed=None):
        """Read the records at buf[pos:] that this loop handles (see the comment above) into
        the batch, until the batch is full.  `base` is the file offset of buf[0],
        `embstr_limit` the parser's embstr_limit(), `listpack_lists` whether a one-node
        quicklist 2 is a listpack-encoded list (Redis 7.2+), `embed` the parser's embed table
        (kv.embed_table: whether a string of that key length, value length and TTL is embstr)
        or None.  Returns (position after the last record taken, records taken); a record the
        sink's filter leaves out is taken all the same."""
        cdef const uint8_t* b = <const uint8_t*>(<char*>buf)
        cdef const uint8_t* emb = NULL
        cdef Py_ssize_t end = len(buf), q, taken = 0
        cdef Record rec
        rec.db = db
        if embed is not None:
            emb = <const uint8_t*>(<char*>embed)
        if self.is_full():
            return pos, 0
        while True:
            q = _record(buf, b, pos, end, base, embstr_limit, max_item, listpack_lists, emb,
                        &rec)
            if q < 0:
                break
            pos = q
            taken += 1
            if not self.add_record(&rec):   # full now
                break
        return pos, taken


cdef Py_ssize_t _record(bytes buf, const uint8_t* b, Py_ssize_t pos, Py_ssize_t end,
                        int64_t base, int embstr_limit, Py_ssize_t max_item,
                        bint listpack_lists, const uint8_t* emb, Record* rec) except -2:
    """One record (its expire / idle / freq opcodes, type, key, value) into `rec` (its db
    already set); returns the position after it, or -1 when the Python path must read it."""
    cdef Py_ssize_t p = pos, q, kpos, klen, vpos, vlen, count = 0, mx = 0
    cdef int is_int
    cdef int64_t expire = 0, idle = 0
    cdef int freq = 0
    cdef bint has_expire = False, has_idle = False, has_freq = False
    cdef uint64_t ln, clen, ulen
    cdef uint8_t t, b0, enc
    cdef int64_t length, blob = 0
    cdef const uint8_t* v
    cdef uint8_t* decoded = NULL   # an LZF blob decoded for its walk (freed after it)
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
            enc = _ENC_EMBSTR if length <= embstr_limit else _ENC_RAW
        else:
            q = _str_len(b, p, end, &vlen, &is_int)
            if q < 0:
                return -1
            length = vlen
            if is_int or (vlen <= 20 and _is_long_text(b + q - vlen, vlen)):
                enc = _ENC_INT
            else:
                enc = _ENC_EMBSTR if vlen <= embstr_limit else _ENC_RAW
        if emb != NULL and enc != _ENC_INT:
            # parser.Parser.embedded: the writing server's rule (kv.string_embedded)
            enc = _ENC_EMBSTR if (klen < EMBED_KEYS and length < EMBED_VALUES and
                                  emb[(has_expire * EMBED_KEYS + klen) * EMBED_VALUES
                                      + length]) else _ENC_RAW
        rec.max_elem = length
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
            decoded = <uint8_t*>malloc(<size_t>ulen + LZF_SLACK)
            if decoded == NULL:
                return -1   # the Python path takes over (and says what it could not allocate)
            if _lzf_decode(b + q, <Py_ssize_t>clen, end - q, decoded,
                           <Py_ssize_t>ulen) != <Py_ssize_t>ulen:
                free(decoded)
                return -1
            q += <Py_ssize_t>clen
            v = decoded
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
        finally:
            free(decoded)
        if count == 0:    # Redis refuses empty collections: the Python path flags them
            return -1
        if t == 12 or t == 13 or t == 16 or t == 17:
            if count & 1:
                return -1
            count //= 2
        length = count
        blob = vlen
        if t == 18 and listpack_lists:   # parser.v_quicklist: Redis 7.2+ listpack lists
            enc = _ENC_LISTPACK
        else:
            enc = _BLOB_ENC[t]
        rec.max_elem = mx
    rec.key = b + kpos
    rec.key_len = klen
    rec.rdb_type = t
    rec.encoding = enc
    rec.length = length
    rec.blob = blob
    rec.serialized = q - pos
    rec.offset = base + pos
    rec.expire = expire
    rec.has_expire = has_expire
    rec.idle = idle
    rec.has_idle = has_idle
    rec.freq = <int16_t>freq
    rec.has_freq = has_freq
    return q
