# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The db layer's compiled batch of key rows: typed C columns for the `keys` table.

KeyColumns subclasses the rdb layer's RowSink (rdb/_speedups.pxd): the record walker there
(RowSink.scan) reads strings and single-blob values from the RDB bytes and hands each record
to add_record here, which applies the filter, asks the memory model (rows.MemoryCosts) and
writes the row; rows.RowBuilder appends the rows of the parser's Python loop (append).  This
module knows no RDB byte and the walker no column.  Its pure-Python twin is db/rows.py
PyKeyColumns (same methods); db/rows.py picks one, and tests/test_speedups.py holds the rows of
both equal on every fixture.  Built by setup.py with the walkers (optional: without a C
compiler rdbscan runs the pure path).
"""
from libc.stdint cimport int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, malloc, realloc, free
from libc.math cimport nearbyint
from libc.string cimport memcmp, memcpy, memset
from cpython.buffer cimport PyBuffer_FillInfo
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_FromStringAndSize

from rdbscan.rdb._speedups cimport Record, RowSink

from rdbscan.rdb.constants import ENCODING_IDS, ENCODING_NAMES, MODULE_ENCODING_ID

# SHA-256 of the sources this module was compiled from (db/_batch.pyx, then the interface it
# implements, rdb/_speedups.pxd: setup.py's compile_time_env); rows.py compares it with the
# files beside the module (backend.load_compiled) to tell a stale build.
SOURCE_SHA256 = RDBSCAN_BATCH_SHA256

DEF SHAPE_CACHE = 65536   # value costs remembered by value shape (direct-mapped)
DEF KEY_COSTS = 1024      # key costs remembered by key length (shorter keys)
DEF KEY_DATA_SOFT = 4 * 1024 * 1024    # a batch ends once its key names reach this size
                                       # (rows.KEY_DATA_SOFT, the pure-Python batch's)
DEF KEY_DATA_HARD = 0x7FFFFFFF         # int32 Arrow offsets


# --- keys.slot: the compiled twin of slots.key_slot -------------------------------------------

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


# --- keys.family: the compiled twin of key_pattern (reference: tests/family_reference.py) ---

DEF FAMILY_MAX_KEY = 4096   # tests/family_reference.py FAMILY_MAX_KEY


cdef inline bint _is_digit(uint8_t c) noexcept nogil:
    return 48 <= c <= 57


cdef inline bint _is_hex(uint8_t c) noexcept nogil:
    return _is_digit(c) or 97 <= (c | 32) <= 102   # 0-9 a-f A-F


cdef inline bint _is_letter(uint8_t c) noexcept nogil:
    return 97 <= (c | 32) <= 122


cdef inline bint _two_digits_in(const uint8_t* d, int lo, int hi) noexcept nogil:
    """d[0:2] are digits whose number is in lo..hi."""
    return _is_digit(d[0]) and _is_digit(d[1]) and lo <= (d[0] - 48) * 10 + d[1] - 48 <= hi


cdef bint _is_date(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """macros._DATE as a whole: YYYY-MM[-DD][(T| )HH] or YYYYMMDD, years 19xx and 20xx."""
    cdef Py_ssize_t p
    if n < 7 or not (_two_digits_in(s, 19, 20) and _is_digit(s[2]) and _is_digit(s[3])):
        return False
    if n == 8 and _two_digits_in(s + 4, 1, 12) and _two_digits_in(s + 6, 1, 31):
        return True
    if s[4] != 45 or not _two_digits_in(s + 5, 1, 12):   # '-'
        return False
    p = 7
    if p + 3 <= n and s[p] == 45 and _two_digits_in(s + p + 1, 1, 31):
        p += 3
    if p + 3 <= n and (s[p] == 84 or s[p] == 32) and _two_digits_in(s + p + 1, 0, 99):  # T, ' '
        p += 3
    return p == n


cdef bint _is_ipv4(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """macros.IPV4 as a whole: four numbers 0-255 joined by '.', no leading zero."""
    cdef Py_ssize_t i = 0, d
    cdef int part, value
    for part in range(4):
        if part:
            if i >= n or s[i] != 46:   # '.'
                return False
            i += 1
        d = i
        value = 0
        while i < n and i - d < 3 and _is_digit(s[i]):
            value = value * 10 + (s[i] - 48)
            i += 1
        if i == d or value > 255 or (i - d > 1 and s[d] == 48):   # none, too big, leading '0'
            return False
    return i == n


cdef bint _is_email(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """macros.EMAIL as a whole: local@label.label...tld, the local part of [A-Za-z0-9._%+-],
    each label of [A-Za-z0-9-], two labels at least, the last of 2+ letters."""
    cdef Py_ssize_t i = 0, start, labels = 0
    cdef uint8_t c
    while i < n and s[i] != 64:   # '@'
        c = s[i]
        if not (_is_digit(c) or _is_letter(c) or c == 46 or c == 95 or c == 37 or c == 43
                or c == 45):   # . _ % + -
            return False
        i += 1
    if i == 0 or i == n:   # no local part, no '@'
        return False
    i += 1
    start = i
    while True:
        while i < n and (_is_digit(s[i]) or _is_letter(s[i]) or s[i] == 45):
            i += 1
        if i == start:   # an empty label
            return False
        labels += 1
        if i == n:
            break
        if s[i] != 46:   # '.'
            return False
        i += 1
        start = i
    if labels < 2 or n - start < 2:
        return False
    for i in range(start, n):
        if not _is_letter(s[i]):
            return False
    return True


cdef bint _is_id(const uint8_t* s, Py_ssize_t n) noexcept nogil:
    """A whole segment that key_pattern's passes turn into {id} (macros._key_pattern_passes_sql):
    a number ([-+]?[0-9]+(.[0-9]+)?), a UUID, 8+ hex characters with a digit, or 16+ token
    characters ([A-Za-z0-9_+/=-]) with a digit and a letter."""
    cdef Py_ssize_t i = 0, d
    cdef bint digit = False, letter = False, hex_only = True, token = True
    cdef uint8_t c
    if n == 0:
        return False
    if s[0] == 43 or s[0] == 45:   # number: '+', '-'
        i = 1
    d = i
    while i < n and _is_digit(s[i]):
        i += 1
    if i > d:
        if i == n:
            return True
        if s[i] == 46:   # '.'
            i += 1
            d = i
            while i < n and _is_digit(s[i]):
                i += 1
            if i > d and i == n:
                return True
    if n == 36 and s[8] == 45 and s[13] == 45 and s[18] == 45 and s[23] == 45:   # UUID
        for i in range(36):
            if i != 8 and i != 13 and i != 18 and i != 23 and not _is_hex(s[i]):
                break
        else:
            return True
    for i in range(n):
        c = s[i]
        if _is_digit(c):
            digit = True
        elif _is_letter(c):
            letter = True
            hex_only = hex_only and _is_hex(c)
        elif c == 95 or c == 43 or c == 47 or c == 61 or c == 45:   # _ + / = -
            hex_only = False
        else:
            return False
    return digit and ((hex_only and n >= 8) or (letter and n >= 16))


cdef Py_ssize_t _family(const uint8_t* k, Py_ssize_t n, char* out) noexcept nogil:
    """Write key_pattern(k) to out (room for 4 * n bytes) for a key of printable ASCII (segments
    end at ':' and '#', as the key_pattern macro with its default delimiter); returns its
    length, or -1 for any other key.  A segment that holds a digit, '-' or '@' is a date
    ({date}), an IPv4 address ({ip}), an e-mail address ({email}), an id ({id}) or left as it
    is, with one brace kept on each side (`{42}` -> `{{id}}`)."""
    cdef Py_ssize_t i = 0, o = 0, s, e
    cdef uint8_t c
    cdef bint special, at
    if n > FAMILY_MAX_KEY:
        return -1
    while True:
        s = i
        special = at = False
        while i < n and k[i] != 58 and k[i] != 35:   # ':', '#' (macros.SPLIT_MARK)
            c = k[i]
            if c < 0x20 or c > 0x7E:
                return -1
            if _is_digit(c) or c == 45:   # '-'
                special = True
            elif c == 64:   # '@': only a segment with one can be an e-mail address
                special = at = True
            i += 1
        e = i
        if special:   # no placeholder holds '{' or '}': one brace each side is the segment's
            if k[s] == 123:   # '{'
                out[o] = 123
                o += 1
                s += 1
            if e > s and k[e - 1] == 125:   # '}'
                e -= 1
            if _is_date(k + s, e - s):
                memcpy(out + o, b"{date}", 6)
                o += 6
            elif _is_ipv4(k + s, e - s):
                memcpy(out + o, b"{ip}", 4)
                o += 4
            elif at and _is_email(k + s, e - s):
                memcpy(out + o, b"{email}", 7)
                o += 7
            elif _is_id(k + s, e - s):
                memcpy(out + o, b"{id}", 4)
                o += 4
            else:
                memcpy(out + o, k + s, e - s)
                o += e - s
            if e < i:
                out[o] = 125
                o += 1
        else:
            memcpy(out + o, k + s, e - s)
            o += e - s
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


cdef class Owned:
    """One C column of a taken batch (KeyColumns.take), read in place through the buffer
    protocol (pa.py_buffer) and freed with its last reference: the batch hands its arrays over
    instead of copying them, and the next batch is written into new ones, so that a batch in
    flight to DuckDB is not held twice (as C columns and as a copy)."""
    cdef char* ptr
    cdef readonly Py_ssize_t size

    def __getbuffer__(self, Py_buffer* view, int flags):
        PyBuffer_FillInfo(view, self, self.ptr, self.size, 1, flags)

    def __releasebuffer__(self, Py_buffer* view):
        pass

    def __len__(self):
        return self.size

    def __dealloc__(self):
        free(self.ptr)


cdef Owned _owned(void* ptr, Py_ssize_t size):
    cdef Owned o = Owned.__new__(Owned)
    o.ptr = <char*>ptr
    o.size = size
    return o


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
DEF V_INVALID = 11  # what a server would refuse in the key (constants.INVALID_IDS)
DEF V_ALAST = 12  # a Redis 8.8 array's highest index
DEF N_VALID = 13
DEF N_EXTRAS = 8  # the values every row with extras has (columns.EXTRAS_FIXED)


cdef class KeyColumns(RowSink):
    """One batch of key rows as typed C columns (the `keys` table's columns but dump_id and
    the key text, which rows.py derives).  The rdb walker (RowSink.scan, inherited) fills it
    through add_record, `append` from a row tuple of the Python path; `take` hands the columns
    over as bytes and empties it."""

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
    cdef int64_t* c_invalid          # rows of the Python path only (append), as c_fttl...
    cdef int64_t* c_alast
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
    cdef uint16_t enc_of_id[256]     # constants.ENCODING_IDS (the walker's) -> code
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
        # the columns take() hands over (new ones after each batch), then the ones it keeps
        self._new_columns()
        self.c_idle = <int64_t*>malloc(capacity * 8)
        self.c_freq = <int16_t*>malloc(capacity * 2)
        # Rows of the compiled loop never write these: keys.extras copies them under a null
        # flag, so they read as 0 (calloc), not as uninitialised memory.
        self.c_fttl = <int64_t*>calloc(capacity, 8)
        self.c_fmin = <int64_t*>calloc(capacity, 8)
        self.c_ints = <int64_t*>calloc(capacity, 8)
        self.c_klen = <int64_t*>calloc(capacity, 8)
        self.c_khash = <int64_t*>calloc(capacity, 8)
        self.c_lpb = <int64_t*>calloc(capacity, 8)
        self.c_invalid = <int64_t*>calloc(capacity, 8)
        self.c_alast = <int64_t*>calloc(capacity, 8)
        for i in range(N_VALID):
            if i != V_FAMILY and i != PLAIN and i != V_EXPIRE:
                self.c_valid[i] = <uint8_t*>calloc(capacity // 8 + 1, 1)
        self.cache = <Shape*>malloc(SHAPE_CACHE * sizeof(Shape))
        if (not self.c_idle or not self.c_freq or not self.c_fttl or not self.c_fmin
                or not self.c_ints or not self.c_klen or not self.c_khash or not self.c_lpb
                or not self.c_invalid or not self.c_alast
                or not self.cache):
            raise MemoryError()
        for i in range(N_VALID):
            if not self.c_valid[i]:
                raise MemoryError()
        memset(self.cache, 0, SHAPE_CACHE * sizeof(Shape))
        for i in range(KEY_COSTS):
            self.key_costs[i] = -1
        self.shares_db = -1
        self.kv_mode = -1
        self.kv_costs = {}
        self.costs = costs
        self.type_names = []
        self.type_codes = {}
        self.encoding_names = []
        self.encoding_codes = {}
        for i in range(256):
            self.type_of[i] = 0xFFFF
            self.enc_of_id[i] = 0xFFFF
        for t, name in type_names.items():
            self.type_of[t] = self._code(self.type_names, self.type_codes, name)
        for t, name in type_encodings.items():  # the blob encodings' codes first
            self._code(self.encoding_names, self.encoding_codes, name)
        for i, name in enumerate(ENCODING_NAMES):
            self.enc_of_id[i] = self._code(self.encoding_names, self.encoding_codes, name)
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

    cdef bint _rejects(self, const uint8_t* key, Py_ssize_t klen, int32_t db,
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
                if plen <= klen and memcmp(<const char*>pre, key, plen) == 0:
                    hit = True
                    break
            if not hit:
                return True
        if self.f_key_ok is not None:
            if not self.f_key_ok(PyBytes_FromStringAndSize(<const char*>key, klen)):
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
        free(self.c_invalid)
        free(self.c_alast)
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

    cdef bint is_full(self) noexcept:
        return self.n >= self.capacity or self.kused >= KEY_DATA_SOFT

    @property
    def full(self):
        """True when the batch should be taken (rows or key bytes at their limit)."""
        return self.is_full()

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

    cdef int add_record(self, const Record* r) except -1:
        """One record of the rdb walker (RowSink.scan) into row n, as RowBuilder.add makes
        the row of a KeyRecord: the filter first (a record left out here costs no estimate),
        the memory estimate, the filter's minimum memory, then the row (the key last: what can
        fail has been done); a record left out is counted in `dropped` (row n stays free).
        Returns 1 while the batch takes more rows, 0 once it is full."""
        cdef Py_ssize_t i = self.n
        cdef uint16_t tc = self.type_of[r.rdb_type], ec = self.enc_of_id[r.encoding]
        if self.filtering and self._rejects(r.key, r.key_len, r.db, r.rdb_type, r.length,
                                            r.has_expire, r.expire):
            self.dropped += 1
            return 1     # unchanged: not full (the walker checked before this record)
        self._estimate(tc, ec, r.key_len, r.length, r.blob, r.db, r.has_expire, i)
        if self.c_mem[i] < self.f_min_mem:   # 0 without a filter
            self.dropped += 1
            return 1
        self._clear_valid(i)
        self.c_db[i] = r.db
        self.c_rtype[i] = r.rdb_type
        self.c_type[i] = tc
        self.c_enc[i] = ec
        self.c_length[i] = r.length
        self.c_maxel[i] = r.max_elem
        self.c_blob[i] = r.blob
        self.c_ser[i] = r.serialized
        self.c_offset[i] = r.offset
        self.c_expire[i] = r.expire
        if r.has_expire:
            self._set_valid(V_EXPIRE, i)
        self.c_idle[i] = r.idle
        if r.has_idle:
            self._set_valid(V_IDLE, i)
        self.c_freq[i] = r.freq
        if r.has_freq:
            self._set_valid(V_FREQ, i)
        self.c_slot[i] = <int16_t>_key_slot(r.key, r.key_len)
        self._key(<const char*>r.key, r.key_len)
        self.n = i + 1
        return not KeyColumns.is_full(self)   # a direct call, not through the vtable

    def append(self, tuple row):
        """One row of the Python path, in RowBuilder's tuple order: (dump_id, db, key text,
        key bytes, type, encoding, rdb_type, length, longest element, serialized bytes, memory,
        memory total, expire, idle, freq, slot, offset, fields with TTL, earliest field expiry,
        int members, full key length and key hash of a truncated key name, listpack bytes,
        invalid code, an array's highest index)."""
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
        self._opt64(self.c_invalid, V_INVALID, i, row[23])
        self._opt64(self.c_alast, V_ALAST, i, row[24])
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
        validity), in the order of columns.EXTRAS: idle, freq, fields with TTL, earliest field
        expiry, int members, full key length and key hash of a truncated key name, listpack
        bytes on every row that has any extra, then (rows of the Python path) the invalid code
        and an array's highest index, up to the last of them present; null for the others."""
        cdef Py_ssize_t n = self.n, nb = n // 8 + 1, i, size = 0, j, k, w
        cdef int col
        cdef int cols[N_EXTRAS + 2]
        cdef int64_t* src[N_EXTRAS + 2]
        cols[0] = V_IDLE
        cols[1] = V_FREQ
        cols[2] = V_FTTL
        cols[3] = V_FMIN
        cols[4] = V_INTS
        cols[5] = V_KLEN
        cols[6] = V_KHASH
        cols[7] = V_LPB
        cols[8] = V_INVALID
        cols[9] = V_ALAST
        src[0] = self.c_idle
        src[1] = NULL       # c_freq is int16
        src[2] = self.c_fttl
        src[3] = self.c_fmin
        src[4] = self.c_ints
        src[5] = self.c_klen
        src[6] = self.c_khash
        src[7] = self.c_lpb
        src[8] = self.c_invalid
        src[9] = self.c_alast
        cdef bytes valid = PyBytes_FromStringAndSize(NULL, nb)
        cdef uint8_t* rv = <uint8_t*>PyBytes_AS_STRING(valid)
        for i in range(nb):
            rv[i] = (self.c_valid[V_IDLE][i] | self.c_valid[V_FREQ][i] | self.c_valid[V_FTTL][i]
                     | self.c_valid[V_FMIN][i] | self.c_valid[V_INTS][i]
                     | self.c_valid[V_KLEN][i] | self.c_valid[V_LPB][i]
                     | self.c_valid[V_INVALID][i] | self.c_valid[V_ALAST][i])
        for i in range(n):
            if rv[i >> 3] & (1 << (i & 7)):
                size += self._extras_width(i)
        cdef bytes offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * 4)
        cdef int32_t* off = <int32_t*>PyBytes_AS_STRING(offsets)
        cdef bytes values = PyBytes_FromStringAndSize(NULL, size * 8)
        cdef int64_t* val = <int64_t*>PyBytes_AS_STRING(values)
        cdef bytes values_valid = PyBytes_FromStringAndSize(NULL, size // 8 + 1)
        cdef uint8_t* vv = <uint8_t*>PyBytes_AS_STRING(values_valid)
        memset(vv, 0, size // 8 + 1)
        j = 0
        for i in range(n):
            off[i] = <int32_t>j
            if not rv[i >> 3] & (1 << (i & 7)):
                continue
            w = self._extras_width(i)
            for k in range(w):
                val[j + k] = self.c_freq[i] if k == 1 else src[k][i]
                col = cols[k]
                if self.c_valid[col][i >> 3] & (1 << (i & 7)):
                    vv[(j + k) >> 3] |= <uint8_t>(1 << ((j + k) & 7))
            j += w
        off[n] = <int32_t>j
        return valid, offsets, values, values_valid

    cdef inline Py_ssize_t _extras_width(self, Py_ssize_t i) noexcept:
        """How many values row i's extras hold (it has some): the fixed ones, then up to its
        array index or invalid code."""
        if self.c_valid[V_ALAST][i >> 3] & (1 << (i & 7)):
            return N_EXTRAS + 2
        if self.c_valid[V_INVALID][i >> 3] & (1 << (i & 7)):
            return N_EXTRAS + 1
        return N_EXTRAS

    cdef tuple _module_types(self):
        """keys.module_type as Arrow string buffers (validity, offsets, data): a module value's
        encoding name (its type name, e.g. `ReJSON-RL`), null on every other row."""
        cdef Py_ssize_t n = self.n, nb = n // 8 + 1, i
        cdef int module = self.type_codes.get("module", -1)
        cdef bytes valid = PyBytes_FromStringAndSize(NULL, nb)
        cdef uint8_t* rv = <uint8_t*>PyBytes_AS_STRING(valid)
        memset(rv, 0, nb)
        cdef bytes offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * 4)
        cdef int32_t* off = <int32_t*>PyBytes_AS_STRING(offsets)
        names = [name.encode() for name in self.encoding_names]
        parts = []
        cdef Py_ssize_t size = 0
        for i in range(n):
            off[i] = <int32_t>size
            if self.c_type[i] == module:
                rv[i >> 3] |= <uint8_t>(1 << (i & 7))
                name = names[self.c_enc[i]]
                parts.append(name)
                size += len(name)
        off[n] = <int32_t>size
        return valid, offsets, b"".join(parts)

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
        """The batch as {column: buffer} (Owned, or bytes; nullable columns: (data, validity
        bitmap)) plus 'n', 'key_offsets', 'key_data', 'family_offsets', 'family_data',
        'family_valid', 'plain_key' (a bitmap of values), 'encoding_id' (one byte per row),
        'module_rows', 'module_type' (see _module_types; None without module values),
        'nonascii' and 'extras' (see _extras); the columns are then empty again.
        The columns an Arrow batch reads are handed over (Owned), the batch gets new ones."""
        cdef Py_ssize_t n = self.n, nb = n // 8 + 1, i
        out = {
            "n": n,
            "nonascii": self.nonascii,
            "encoding_id": self._encoding_ids(),
            "module_rows": self.module_rows,
            "module_type": self._module_types() if self.module_rows else None,
            "extras": self._extras(),
            "key_offsets": _owned(self.c_koff, (n + 1) * 4),
            "key_data": _owned(self.c_kdata, self.kused),
            "family_offsets": _owned(self.c_foff, (n + 1) * 4),
            "family_data": _owned(self.c_fdata, self.fused),
            "family_valid": _owned(self.c_valid[V_FAMILY], nb),
            "plain_key": _owned(self.c_valid[PLAIN], nb),
            "db": _owned(self.c_db, n * 4),
            "type": _owned(self.c_type, n * 2),
            "encoding": _owned(self.c_enc, n * 2),
            "rdb_type": _owned(self.c_rtype, n),
            "length": _owned(self.c_length, n * 8),
            "max_elem_bytes": _owned(self.c_maxel, n * 8),
            "serialized_bytes": _owned(self.c_ser, n * 8),
            "memory_bytes": _owned(self.c_mem, n * 8),
            "memory_total_bytes": _owned(self.c_total, n * 8),
            "slot": _owned(self.c_slot, n * 2),
            "file_offset": _owned(self.c_offset, n * 8),
            # not a column of key_rows: the value's blob (0 for strings) of the rows this loop
            # read, -1 on rows appended from the Python path (rdbscan/migrate projections)
            "blob_bytes": _owned(self.c_blob, n * 8),
            "expire_at_ms": (_owned(self.c_expire, n * 8), _owned(self.c_valid[V_EXPIRE], nb)),
        }
        self._new_columns()
        for i in range(N_VALID):
            memset(self.c_valid[i], 0, nb)
        self.n = 0
        self.kused = 0
        self.fused = 0
        self.nonascii = False
        self.module_rows = 0
        return out

    cdef int _new_columns(self) except -1:
        """New arrays for the columns take() handed over (the others are written over)."""
        cdef Py_ssize_t capacity = self.capacity, nb = capacity // 8 + 1
        self.c_koff = <int32_t*>malloc((capacity + 1) * 4)
        self.c_kdata = <char*>malloc(self.kcap)
        self.c_foff = <int32_t*>malloc((capacity + 1) * 4)
        self.c_fdata = <char*>malloc(self.fcap)
        self.c_valid[V_FAMILY] = <uint8_t*>malloc(nb)
        self.c_valid[PLAIN] = <uint8_t*>malloc(nb)
        self.c_db = <int32_t*>malloc(capacity * 4)
        self.c_type = <uint16_t*>malloc(capacity * 2)
        self.c_enc = <uint16_t*>malloc(capacity * 2)
        self.c_rtype = <uint8_t*>malloc(capacity)
        self.c_length = <int64_t*>malloc(capacity * 8)
        self.c_maxel = <int64_t*>malloc(capacity * 8)
        self.c_ser = <int64_t*>malloc(capacity * 8)
        self.c_mem = <int64_t*>malloc(capacity * 8)
        self.c_total = <int64_t*>malloc(capacity * 8)
        self.c_slot = <int16_t*>malloc(capacity * 2)
        self.c_offset = <int64_t*>malloc(capacity * 8)
        self.c_blob = <int64_t*>malloc(capacity * 8)
        self.c_expire = <int64_t*>malloc(capacity * 8)
        self.c_valid[V_EXPIRE] = <uint8_t*>malloc(nb)
        if (not self.c_koff or not self.c_kdata or not self.c_foff or not self.c_fdata
                or not self.c_valid[V_FAMILY] or not self.c_valid[PLAIN] or not self.c_db
                or not self.c_type or not self.c_enc or not self.c_rtype or not self.c_length
                or not self.c_maxel or not self.c_ser or not self.c_mem or not self.c_total
                or not self.c_slot or not self.c_offset or not self.c_blob or not self.c_expire
                or not self.c_valid[V_EXPIRE]):
            raise MemoryError()
        memset(self.c_valid[V_FAMILY], 0, nb)
        memset(self.c_valid[PLAIN], 0, nb)
        memset(self.c_valid[V_EXPIRE], 0, nb)
        self.c_koff[0] = 0
        self.c_foff[0] = 0
        return 0



# --- the batch handed to DuckDB through the Arrow C data interface ------------------------------
# (https://arrow.apache.org/docs/format/CDataInterface.html and CStreamInterface.html): the
# columns of a taken batch as one struct array over their own buffers, and a stream of such
# batches that DuckDB's INSERT reads.  No pyarrow: a load of a local dump does not import it
# (issue 28: 25 MiB of a report's peak RSS).  The stream also hands on any batch with an
# __arrow_c_array__ (a pyarrow RecordBatch: the tests mix both kinds in one stream).

cdef extern from *:
    """
    #ifndef ARROW_C_DATA_INTERFACE
    #define ARROW_C_DATA_INTERFACE
    #define ARROW_FLAG_NULLABLE 2
    struct ArrowSchema {
      const char* format;
      const char* name;
      const char* metadata;
      int64_t flags;
      int64_t n_children;
      struct ArrowSchema** children;
      struct ArrowSchema* dictionary;
      void (*release)(struct ArrowSchema*);
      void* private_data;
    };
    struct ArrowArray {
      int64_t length;
      int64_t null_count;
      int64_t offset;
      int64_t n_buffers;
      int64_t n_children;
      const void** buffers;
      struct ArrowArray** children;
      struct ArrowArray* dictionary;
      void (*release)(struct ArrowArray*);
      void* private_data;
    };
    #endif
    #ifndef ARROW_C_STREAM_INTERFACE
    #define ARROW_C_STREAM_INTERFACE
    struct ArrowArrayStream {
      int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
      int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
      const char* (*get_last_error)(struct ArrowArrayStream*);
      void (*release)(struct ArrowArrayStream*);
      void* private_data;
    };
    #endif
    """
    int ARROW_FLAG_NULLABLE
    struct ArrowSchema:
        const char* format
        const char* name
        const char* metadata
        int64_t flags
        int64_t n_children
        ArrowSchema** children
        ArrowSchema* dictionary
        void (*release)(ArrowSchema*) noexcept nogil
        void* private_data
    struct ArrowArray:
        int64_t length
        int64_t null_count
        int64_t offset
        int64_t n_buffers
        int64_t n_children
        const void** buffers
        ArrowArray** children
        ArrowArray* dictionary
        void (*release)(ArrowArray*) noexcept nogil
        void* private_data
    struct ArrowArrayStream:
        int (*get_schema)(ArrowArrayStream*, ArrowSchema*) noexcept nogil
        int (*get_next)(ArrowArrayStream*, ArrowArray*) noexcept nogil
        const char* (*get_last_error)(ArrowArrayStream*) noexcept nogil
        void (*release)(ArrowArrayStream*) noexcept nogil
        void* private_data

from cpython.pycapsule cimport PyCapsule_New, PyCapsule_GetPointer, PyCapsule_IsValid
from cpython.ref cimport PyObject, Py_INCREF, Py_DECREF
from libc.string cimport strlen


# -- schemas: a node owns its format, its name and its children (one malloc'd block each) --

cdef char* _strdup(bytes s) except NULL:
    cdef char* out = <char*>malloc(len(s) + 1)
    if out == NULL:
        raise MemoryError()
    memcpy(out, <const char*>s, len(s))
    out[len(s)] = 0
    return out


cdef void _schema_release(ArrowSchema* s) noexcept nogil:
    cdef int64_t i
    if s.release == NULL:
        return
    for i in range(s.n_children):
        if s.children[i].release != NULL:
            s.children[i].release(s.children[i])
        free(s.children[i])
    free(s.children)
    free(<void*>s.format)
    free(<void*>s.name)
    s.release = NULL


cdef int _schema_fill(ArrowSchema* s, bytes fmt, bytes name) except -1:
    """A nullable field `name` of type `fmt` (a list "+l" gets its int64 child "item")."""
    memset(s, 0, sizeof(ArrowSchema))
    s.flags = ARROW_FLAG_NULLABLE
    s.release = _schema_release
    s.format = _strdup(fmt)
    s.name = _strdup(name)
    if fmt == b"+l":
        s.children = <ArrowSchema**>calloc(1, sizeof(ArrowSchema*))
        if s.children == NULL:
            raise MemoryError()
        s.children[0] = <ArrowSchema*>malloc(sizeof(ArrowSchema))
        if s.children[0] == NULL:
            raise MemoryError()
        s.n_children = 1
        _schema_fill(s.children[0], b"l", b"item")
    return 0


cdef int _struct_schema(ArrowSchema* out, list fields) except -1:
    """A record batch's schema: a struct of `fields`, (name, format) pairs."""
    cdef Py_ssize_t i, n = len(fields)
    memset(out, 0, sizeof(ArrowSchema))
    out.release = _schema_release
    out.format = _strdup(b"+s")
    out.name = _strdup(b"")
    out.children = <ArrowSchema**>calloc(n, sizeof(ArrowSchema*))
    if out.children == NULL:
        raise MemoryError()
    for i in range(n):
        out.children[i] = <ArrowSchema*>malloc(sizeof(ArrowSchema))
        if out.children[i] == NULL:
            raise MemoryError()
        out.n_children = i + 1
        name, fmt = fields[i]
        _schema_fill(out.children[i], fmt.encode(), name.encode())
    return 0


cdef void _schema_capsule_free(object capsule) noexcept:
    cdef ArrowSchema* s = <ArrowSchema*>PyCapsule_GetPointer(capsule, "arrow_schema")
    if s != NULL:
        if s.release != NULL:
            s.release(s)
        free(s)


# -- arrays: every node holds a reference to the Python objects that own the buffers --

cdef struct _Node:
    const void* buffers[3]
    ArrowArray** children
    PyObject* keep


cdef void _array_release(ArrowArray* a) noexcept nogil:
    cdef int64_t i
    cdef _Node* node
    if a.release == NULL:
        return
    node = <_Node*>a.private_data
    for i in range(a.n_children):
        if node.children[i].release != NULL:
            node.children[i].release(node.children[i])
        free(node.children[i])
    free(node.children)
    with gil:
        Py_DECREF(<object>node.keep)
    free(node)
    a.release = NULL


cdef int64_t _nulls(const uint8_t* valid, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, set_ = 0
    if valid == NULL:
        return 0
    for i in range(n):
        if valid[i >> 3] & (1 << (i & 7)):
            set_ += 1
    return n - set_


cdef int _array_fill(ArrowArray* a, object keep, Py_ssize_t n, int n_buffers,
                     const void* b0, const void* b1, const void* b2,
                     Py_ssize_t n_children) except -1:
    cdef _Node* node = <_Node*>calloc(1, sizeof(_Node))
    if node == NULL:
        raise MemoryError()
    memset(a, 0, sizeof(ArrowArray))
    node.buffers[0] = b0
    node.buffers[1] = b1
    node.buffers[2] = b2
    node.keep = <PyObject*>keep
    Py_INCREF(keep)
    a.private_data = node
    a.release = _array_release
    a.length = n
    a.null_count = _nulls(<const uint8_t*>b0, n)
    a.n_buffers = n_buffers
    a.buffers = node.buffers
    if n_children:
        node.children = <ArrowArray**>calloc(n_children, sizeof(ArrowArray*))
        if node.children == NULL:
            raise MemoryError()
        a.children = node.children
    return 0


cdef ArrowArray* _child(ArrowArray* parent, Py_ssize_t i) except NULL:
    cdef ArrowArray* c = <ArrowArray*>malloc(sizeof(ArrowArray))
    if c == NULL:
        raise MemoryError()
    c.release = NULL
    (<_Node*>parent.private_data).children[i] = c
    parent.n_children = i + 1
    return c


cdef const void* _address(object buf) except? NULL:
    if isinstance(buf, Owned):
        return (<Owned>buf).ptr
    return PyBytes_AS_STRING(buf)


cdef class KeyBatch:
    """A taken batch (KeyColumns.take) as one Arrow struct array in KEYS_COLUMNS order, over
    the batch's own buffers; moved out by KeyStream, freed here if it never was."""
    cdef ArrowArray array
    cdef readonly Py_ssize_t rows

    def __dealloc__(self):
        if self.array.release != NULL:
            self.array.release(&self.array)

    def __len__(self):
        return self.rows


def key_batch(dict cols, int32_t dump_id, list formats):
    """The KeyBatch of a taken batch, `formats` the (column, format) pairs of KEYS_COLUMNS
    (columns.KEYS_FORMATS).  The caller made sure its key names are valid UTF-8 (utf8_keys)
    or escaped (escape_keys)."""
    cdef Py_ssize_t n = cols["n"], nb = n // 8 + 1, i, k = len(formats)
    cdef KeyBatch b = KeyBatch.__new__(KeyBatch)
    b.rows = n
    keep = [cols]
    # dump_id, and the zeros of columns that are all null (key_raw, module_type): validity,
    # offsets, and an empty data buffer
    cdef int32_t* ids = <int32_t*>malloc(n * 4 + 1)
    if ids == NULL:
        raise MemoryError()
    keep.append(_owned(ids, n * 4))
    for i in range(n):
        ids[i] = dump_id
    cdef Py_ssize_t zn = (n + 1) * 4 if (n + 1) * 4 > nb else nb
    cdef void* zeros = calloc(zn, 1)
    if zeros == NULL:
        raise MemoryError()
    keep.append(_owned(zeros, zn))
    keep = tuple(keep)
    _array_fill(&b.array, keep, n, 1, NULL, NULL, NULL, k)
    cdef ArrowArray* c
    cdef ArrowArray* item
    for i in range(k):
        name = formats[i][0]
        c = _child(&b.array, i)
        if name == "dump_id":
            _array_fill(c, keep, n, 2, NULL, ids, NULL, 0)
        elif name == "key":
            _array_fill(c, keep, n, 3, NULL, _address(cols["key_offsets"]),
                        _address(cols["key_data"]), 0)
        elif name == "key_raw" and "raw_offsets" in cols:  # escape_keys: the names' bytes
            _array_fill(c, keep, n, 3, _address(cols["raw_valid"]),
                        _address(cols["raw_offsets"]), _address(cols["raw_data"]), 0)
        elif name == "module_type" and cols["module_type"] is not None:
            valid, offsets, data = cols["module_type"]
            _array_fill(c, keep, n, 3, _address(valid), _address(offsets), _address(data), 0)
        elif name in ("key_raw", "module_type"):
            _array_fill(c, keep, n, 3, zeros, zeros, zeros, 0)
        elif name == "family":
            _array_fill(c, keep, n, 3, _address(cols["family_valid"]),
                        _address(cols["family_offsets"]), _address(cols["family_data"]), 0)
        elif name == "plain_key":
            _array_fill(c, keep, n, 2, NULL, _address(cols["plain_key"]), NULL, 0)
        elif name == "encoding_id":
            _array_fill(c, keep, n, 2, NULL, _address(cols["encoding_id"]), NULL, 0)
        elif name == "extras":
            valid, offsets, values, values_valid = cols["extras"]
            _array_fill(c, keep, n, 2, _address(valid), _address(offsets), NULL, 1)
            item = _child(c, 0)
            _array_fill(item, keep, len(values) // 8, 2, _address(values_valid),
                        _address(values), NULL, 0)
        else:
            value = cols[name]
            if isinstance(value, tuple):  # nullable: (data, validity bitmap)
                _array_fill(c, keep, n, 2, _address(value[1]), _address(value[0]), NULL, 0)
            else:
                _array_fill(c, keep, n, 2, NULL, _address(value), NULL, 0)
    return b


cdef inline Py_ssize_t _utf8_char(const uint8_t* p, Py_ssize_t left) noexcept nogil:
    """The length of the well-formed UTF-8 character at p (Unicode's table 3-7), 0 if none."""
    cdef uint8_t c = p[0]
    if c < 0x80:
        return 1
    if c < 0xC2 or c > 0xF4:
        return 0
    if c < 0xE0:
        return 2 if left >= 2 and (p[1] & 0xC0) == 0x80 else 0
    if c < 0xF0:
        if left < 3 or (p[2] & 0xC0) != 0x80:
            return 0
        if c == 0xE0:
            return 3 if 0xA0 <= p[1] <= 0xBF else 0
        if c == 0xED:
            return 3 if 0x80 <= p[1] <= 0x9F else 0
        return 3 if (p[1] & 0xC0) == 0x80 else 0
    if left < 4 or (p[2] & 0xC0) != 0x80 or (p[3] & 0xC0) != 0x80:
        return 0
    if c == 0xF0:
        return 4 if 0x90 <= p[1] <= 0xBF else 0
    if c == 0xF4:
        return 4 if 0x80 <= p[1] <= 0x8F else 0
    return 4 if (p[1] & 0xC0) == 0x80 else 0


def utf8_keys(dict cols):
    """Whether every key name of a taken batch is well-formed UTF-8 (each on its own)."""
    cdef const int32_t* off = <const int32_t*>_address(cols["key_offsets"])
    cdef const uint8_t* data = <const uint8_t*>_address(cols["key_data"])
    cdef Py_ssize_t n = cols["n"]
    return _utf8_rows(off, data, n)


cdef bint _utf8_rows(const int32_t* off, const uint8_t* data, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i, j, end, step
    for i in range(n):
        j = off[i]
        end = off[i + 1]
        while j < end:
            if data[j] < 0x80:
                j += 1
                continue
            step = _utf8_char(data + j, end - j)
            if step == 0:
                return False
            j += step
    return True


cdef const char* _HEX = "0123456789abcdef"


def escape_keys(dict cols):
    """Key names that are not UTF-8, as the pure path writes them: `key` the name decoded
    with Python's "backslashreplace" (each byte that starts no well-formed character as \\xhh),
    `key_raw` its bytes; the names that are UTF-8 keep a null key_raw.  Replaces the taken
    batch's key_offsets and key_data, and adds raw_valid, raw_offsets and raw_data."""
    cdef Py_ssize_t n = cols["n"], nb = n // 8 + 1, i, j, end, step, size = 0, raw = 0
    cdef const int32_t* off = <const int32_t*>_address(cols["key_offsets"])
    cdef const uint8_t* data = <const uint8_t*>_address(cols["key_data"])
    cdef uint8_t* bad = <uint8_t*>calloc(nb, 1)
    if bad == NULL:
        raise MemoryError()
    # sizes: a byte that starts no character takes four ("\xhh")
    for i in range(n):
        j = off[i]
        end = off[i + 1]
        size += end - j
        while j < end:
            step = _utf8_char(data + j, end - j)
            if step == 0:
                size += 3
                bad[i >> 3] |= <uint8_t>(1 << (i & 7))
                step = 1
            j += step
        if bad[i >> 3] & (1 << (i & 7)):
            raw += off[i + 1] - off[i]
    if size > KEY_DATA_HARD:
        free(bad)
        raise OverflowError("escaped key names longer than Arrow's 32-bit offsets")
    cdef int32_t* k_off = <int32_t*>malloc((n + 1) * 4)
    cdef uint8_t* k_data = <uint8_t*>malloc(size + 1)
    cdef int32_t* r_off = <int32_t*>malloc((n + 1) * 4)
    cdef uint8_t* r_data = <uint8_t*>malloc(raw + 1)
    keys_offsets = _owned(k_off, (n + 1) * 4) if k_off != NULL else None
    keys_data = _owned(k_data, size) if k_data != NULL else None
    raw_offsets = _owned(r_off, (n + 1) * 4) if r_off != NULL else None
    raw_data = _owned(r_data, raw) if r_data != NULL else None
    raw_valid = _owned(bad, nb)
    if k_off == NULL or k_data == NULL or r_off == NULL or r_data == NULL:
        raise MemoryError()
    cdef Py_ssize_t o = 0, r = 0
    k_off[0] = 0
    r_off[0] = 0
    for i in range(n):
        j = off[i]
        end = off[i + 1]
        if bad[i >> 3] & (1 << (i & 7)):
            memcpy(r_data + r, data + j, end - j)
            r += end - j
            while j < end:
                step = _utf8_char(data + j, end - j)
                if step == 0:
                    k_data[o] = 92  # backslash
                    k_data[o + 1] = 120  # x
                    k_data[o + 2] = _HEX[data[j] >> 4]
                    k_data[o + 3] = _HEX[data[j] & 15]
                    o += 4
                    j += 1
                else:
                    memcpy(k_data + o, data + j, step)
                    o += step
                    j += step
        else:
            memcpy(k_data + o, data + j, end - j)
            o += end - j
        k_off[i + 1] = <int32_t>o
        r_off[i + 1] = <int32_t>r
    cols["key_offsets"] = keys_offsets
    cols["key_data"] = keys_data
    cols["raw_valid"] = raw_valid
    cols["raw_offsets"] = raw_offsets
    cols["raw_data"] = raw_data


# -- the stream: DuckDB pulls the next batch from a Python iterator (taking the GIL) --

cdef class KeyStream:
    """The key batches an iterator gives (KeyBatch, or pyarrow RecordBatch of the same schema)
    as an Arrow C stream, for DuckDB to scan once (`__arrow_c_stream__`); `fields` are the
    (column, format) pairs (columns.KEYS_FORMATS)."""
    cdef object source
    cdef list fields
    cdef bytes error
    cdef readonly object exception   # what the iterator raised, if it did

    def __init__(self, list fields, source):
        self.fields = fields
        self.source = iter(source)
        self.error = b""
        self.exception = None

    def __arrow_c_schema__(self):
        cdef ArrowSchema* s = <ArrowSchema*>malloc(sizeof(ArrowSchema))
        if s == NULL:
            raise MemoryError()
        s.release = NULL
        try:
            _struct_schema(s, self.fields)
        except BaseException:
            _schema_release(s)
            free(s)
            raise
        return PyCapsule_New(s, "arrow_schema", <void (*)(object) noexcept>_schema_capsule_free)

    def __arrow_c_stream__(self, requested_schema=None):
        cdef ArrowArrayStream* st = <ArrowArrayStream*>malloc(sizeof(ArrowArrayStream))
        if st == NULL:
            raise MemoryError()
        st.get_schema = _stream_schema
        st.get_next = _stream_next
        st.get_last_error = _stream_error
        st.release = _stream_release
        st.private_data = <void*>self
        Py_INCREF(self)
        return PyCapsule_New(st, "arrow_array_stream",
                             <void (*)(object) noexcept>_stream_capsule_free)

    cdef int next_into(self, ArrowArray* out) except -1:
        cdef KeyBatch b
        cdef ArrowArray* src
        try:
            item = next(self.source)
        except StopIteration:
            out.release = NULL  # the end of the stream
            return 0
        if isinstance(item, KeyBatch):
            b = <KeyBatch>item
            memcpy(out, &b.array, sizeof(ArrowArray))
            b.array.release = NULL  # moved
            return 0
        _, capsule = item.__arrow_c_array__()
        src = <ArrowArray*>PyCapsule_GetPointer(capsule, "arrow_array")
        memcpy(out, src, sizeof(ArrowArray))
        src.release = NULL  # moved
        return 0


cdef int _stream_schema(ArrowArrayStream* st, ArrowSchema* out) noexcept nogil:
    with gil:
        self = <KeyStream>st.private_data
        try:
            out.release = NULL
            _struct_schema(out, self.fields)
            return 0
        except BaseException as e:
            if out.release != NULL:
                _schema_release(out)
            self.error = str(e).encode()
            return 12  # ENOMEM


cdef int _stream_next(ArrowArrayStream* st, ArrowArray* out) noexcept nogil:
    with gil:
        self = <KeyStream>st.private_data
        try:
            return self.next_into(out)
        except BaseException as e:
            self.exception = e
            self.error = (str(e) or type(e).__name__).encode()
            return 5  # EIO


cdef const char* _stream_error(ArrowArrayStream* st) noexcept nogil:
    with gil:
        self = <KeyStream>st.private_data
        return PyBytes_AS_STRING(self.error) if self.error else NULL


cdef void _stream_release(ArrowArrayStream* st) noexcept nogil:
    if st.release == NULL:
        return
    with gil:
        Py_DECREF(<object>st.private_data)
    st.release = NULL


cdef void _stream_capsule_free(object capsule) noexcept:
    cdef ArrowArrayStream* st = <ArrowArrayStream*>PyCapsule_GetPointer(
        capsule, "arrow_array_stream")
    if st != NULL:
        if st.release != NULL:
            st.release(st)
        free(st)
