# The rdb layer's compiled interface to a batch of key rows: the record walker (RowSink.scan in
# _speedups.pyx) reads strings and single-blob values straight from the reader's buffer and hands
# each whole record to the sink through these C methods; the db layer's batch (db/_batch.pyx
# KeyColumns) subclasses RowSink and cimports this file, so rdb never names the db layer.  The
# pure-Python twin is rdb/sink.py RowSink, whose scan reads nothing.  Both compiled modules carry
# the SHA-256 of this file in SOURCE_SHA256 (setup.py): a change here makes both stale.

from libc.stdint cimport int16_t, int32_t, int64_t, uint8_t


# One record the walker read whole: what a key row needs of the RDB bytes.
cdef struct Record:
    const uint8_t* key      # the key name (in the reader's buffer, valid during add_record)
    Py_ssize_t key_len
    int32_t db
    uint8_t rdb_type        # the RDB type byte
    uint8_t encoding        # constants.ENCODING_IDS of the value's encoding
    int64_t length          # elements (strings: bytes of the value as text)
    int64_t max_elem        # longest element as text
    int64_t blob            # the value's blob bytes (0 for a string)
    int64_t serialized      # bytes of the record in the file
    int64_t offset          # file offset of the record
    int64_t expire          # ms, when has_expire
    int64_t idle            # seconds, when has_idle
    int16_t freq            # LFU counter, when has_freq
    bint has_expire
    bint has_idle
    bint has_freq


cdef class RowSink:
    # True once the batch takes no more rows (the walker stops and the parser hands it over).
    cdef bint is_full(self) noexcept
    # One record (rec is the walker's and valid only during the call), kept or left out by the
    # sink's filter; returns 1 while the batch takes more rows, 0 once it is full (is_full()
    # after the record: one C call per record, not two).
    cdef int add_record(self, const Record* rec) except -1
