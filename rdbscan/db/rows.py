"""Key rows: turns the parser's KeyRecords into columns for the `keys`, `streams` and
`stream_groups` tables (schema in store.py).  Knows neither RDB bytes nor DuckDB.

Two implementations of the `keys` batch with one interface, same rows, picked once below
(`compiled`: db/_batch.pyx, loaded when backend.compiled is, the walkers whose interface it
implements): PyKeyColumns keeps a tuple per key and transposes the batch into lists;
CompiledKeyColumns is a `_batch.KeyColumns` (typed C columns), a row sink of the rdb layer
(_speedups.pxd RowSink), which the parser also fills directly for strings and single-blob values
(its `scan`), and the batch becomes Arrow arrays over its buffers.  The compiled batch asks the
memory model through MemoryCosts, which refers to no batch and no RowBuilder (no reference
cycle).
"""

from __future__ import annotations

import struct
from types import ModuleType
from typing import Any

from ..model.estimate import estimate
from ..model.kv import kv_estimate
from ..model.memory import (
    EXPIRES_ENTRY,
    Profile,
    bucket_shares,
    key_cost,
    select_profile,
    total,
    value_cost,
)
from ..model.slots import key_slot
from ..rdb import backend, long_names
from ..rdb import constants as C
from ..rdb.sink import RowSink
from .columns import EXTRAS_FIXED, KEYS_COLUMNS, KEYS_FORMATS, KEYS_KINDS, arrow_schema
from .store import STREAM_GROUPS_COLUMNS, STREAMS_COLUMNS

ESTIMATE_CACHE = 100_000  # value shapes whose memory estimate is remembered
# Key rows per batch.  The compiled batch holds typed C columns, handed over to a ~4 MB Arrow
# batch (32,768 small keys) that waits in BulkWriter's queue: the parser's batch, the queued one
# and those DuckDB's two INSERT threads read are in memory at once.  Issue 28 (docs/benchmarks.md,
# "Where `load` spends its CPU"): on pop5m (5 M small strings) 32,768 rows take the report's
# peak RSS from 223 to 205 MiB for 1.05x the load's wall time (6 pairs); 16,384 rows cost
# 1.11x.  The Python path keeps a tuple per row, so its batches stay smaller.
BATCH_ROWS = 32_768
PURE_BATCH_ROWS = 20_000
# A batch also ends once its key names reach this many bytes (_batch.KEY_DATA_SOFT), so that
# long key names cannot make one batch huge: 20,000 keys of 10 KiB load at 436 MB peak RSS with
# 16 MiB, 310 MB with 4 MiB (bench/hostile.py).  Keys of up to 256 bytes still fill 16,384 rows.
KEY_DATA_SOFT = 4 * 1024 * 1024
# Key names longer than this keep only their first KEY_KEEP bytes in keys.key / key_raw (cut back
# to a whole UTF-8 character), with their full length (keys.key_length) and a hash of the whole
# name (keys.key_hash, key_digest) in extras, and keys.key_truncated true.  DuckDB pins strings
# longer than about 16 KiB in memory until their row group is written, which exhausts the
# loader's 64 MB buffer pool (one 40 MiB key, 50 keys of 1 MiB, 2,000 of 100 KiB); the INSERT
# also derives keys.family from the key, a second copy.  2,000 names of 100 KiB load at 8 KiB:
# 26 s, 370 MB peak RSS; at 4 KiB: 13 s, 250 MB; 20,000 names of 10 KiB at 4 KiB: 322 MB, at
# 2 KiB: 305 MB, at 1 KiB: 233 MB (bench/hostile.py).  Redis allows key names of 512 MB.
# _speedups.KEY_KEEP is the same limit (longer names take the Python path).  The parser reads such
# names as they stream past (rdb/long_names.py: prefix, length, hash and slot; never whole).
KEY_KEEP = long_names.KEY_KEEP


class _Shape:
    """The figures of a string or single-blob value (a one-node quicklist included) that its
    memory estimate depends on."""

    __slots__ = (
        "blob_bytes",
        "elems",
        "encoding",
        "field_ttls",
        "length",
        "nodes",
        "stream",
        "type",
        "vals",
    )

    def __init__(self, type_name, encoding, length, blob):
        self.type = type_name
        self.encoding = encoding
        self.length = length
        self.blob_bytes = blob
        self.elems = self.vals = self.field_ttls = self.stream = None
        # a list in a one-node quicklist: that node (the blob)
        self.nodes = {blob: 1} if encoding == "quicklist" else None


key_digest = long_names.key_digest  # keys.key_hash of a truncated key name


def key_prefix(key: bytes) -> bytes:
    """The first KEY_KEEP bytes of a long key name, without a UTF-8 character cut in two."""
    head = key[:KEY_KEEP]
    try:
        head.decode()
    except UnicodeDecodeError as e:
        if e.start >= KEY_KEEP - 3 and e.reason == "unexpected end of data":
            head = head[: e.start]
    return head


class MemoryCosts:
    """What the compiled batch asks of the memory model for a row it writes itself
    (KeyColumns._estimate puts them together as RowBuilder.add does: memory.estimate = key
    cost + value cost, then memory.total).  Holds the dump's header and the profile, never the
    RowBuilder, so the batch that holds it refers back to nothing."""

    __slots__ = ("info", "profile", "shares", "target")

    def __init__(self, info, target: str | None):
        self.info = info
        self.target = target
        self.profile: Profile | None = None  # chosen at the first key (the header is read)
        self.shares: dict[int, tuple[float, float]] = {}

    def select(self) -> Profile:
        if self.profile is None:
            self.profile = select_profile(self.info, self.target)
        return self.profile

    def bucket_shares(self, db: int) -> tuple[float, float]:
        """Per-key share of the main and expires bucket arrays, from RESIZEDB (docs/rdb-format.md section 8.6)."""
        share = self.shares.get(db)
        if share is None:
            share = self.shares[db] = bucket_shares(self.info.resizedb, db)
        return share

    def key_cost(self, key_len: int) -> int:
        return key_cost(key_len, self.select())

    def value_cost(self, type_name: str, encoding: str, length: int, blob: int) -> int:
        """Of a string or single-blob value (a one-node quicklist included)."""
        return int(value_cost(_Shape(type_name, encoding, length, blob), self.select()))

    def embeds_key(self) -> bool:
        """The profile keeps the key inside the value's object (kv_cost instead of key_cost +
        value_cost)."""
        return bool(self.select().kv)

    def kv_cost(
        self, type_name: str, encoding: str, key_len: int, length: int, blob: int, ttl: bool
    ) -> int:
        """memory.estimate of a string or single-blob value under such a profile."""
        return kv_estimate(
            _Shape(type_name, encoding, length, blob), key_len, bool(ttl), self.select()
        )

    def total_shares(self, db: int) -> tuple[float, float]:
        """(main bucket share, expires entry + expires bucket share) of a key in db: what
        memory.total adds to a key's memory, the second for keys with a TTL."""
        main, expires = self.bucket_shares(db)
        return main, EXPIRES_ENTRY + expires


class SnapshotTime:
    """The snapshot time in ms (a filter's skip_expired), asked of `source` once, by
    RowBuilder.add or by the compiled batch's filter, whichever meets an expiry first."""

    __slots__ = ("ms", "source")

    def __init__(self, source):
        self.source = source
        self.ms: int | None = None

    def __call__(self) -> int:
        if self.ms is None:
            self.ms = int(self.source()) if self.source is not None else 0
        return self.ms


class PyKeyColumns(RowSink):
    """The pure-Python twin of _batch.KeyColumns: the same methods over one tuple per row
    (RowBuilder.add's order), transposed into lists when the batch is taken.  Its scan
    (rdb.sink.RowSink's) reads no record (the parser's Python loop reads them all, and
    RowBuilder.add applies the filter), and it keeps smaller batches (PURE_BATCH_ROWS): a tuple
    per row weighs more than typed columns."""

    __slots__ = ("capacity", "dropped", "key_bytes", "rows")

    def __init__(self, capacity: int, costs, type_names: dict, type_encodings: dict):
        self.capacity = min(capacity, PURE_BATCH_ROWS)
        self.rows: list[tuple] = []
        self.key_bytes = 0
        self.dropped = 0  # the filter is RowBuilder.add's: it drops nothing here

    @property
    def n(self) -> int:
        return len(self.rows)

    @property
    def full(self) -> bool:
        return len(self.rows) >= self.capacity or self.key_bytes >= KEY_DATA_SOFT

    def set_filter(self, **kwargs) -> None:
        """Nothing to do: every record reaches RowBuilder.add, which applies the filter."""

    def append(self, row: tuple) -> None:
        self.rows.append(row)
        self.key_bytes += len(row[3])

    def columns(self, dump_id: int, projector, native: bool = False) -> list:
        """The batch as lists in KEYS_COLUMNS order (transposed once per batch, which costs far
        less than appending to 20 lists per key); the batch is then empty.  The projector has
        seen each row already (RowBuilder.add).  `native` is the compiled batch's (no
        KeyBatch here)."""
        rows, self.rows, self.key_bytes = self.rows, [], 0
        if not rows:
            return [[] for _ in KEYS_COLUMNS]
        return _pure_columns(rows)


# The compiled batch and the sources it is built from (setup.py's MODULES): it implements the
# walkers' interface (_speedups.pxd), so it is used only with them, and is stale when either
# source changed since the build.
SOURCES = ("rdbscan/db/_batch.pyx", "rdbscan/rdb/_speedups.pxd")
compiled: ModuleType | None = (
    backend.load_compiled("rdbscan.db._batch", SOURCES) if backend.compiled is not None else None
)

KeyColumns: type
if compiled is not None:
    _Compiled: Any = compiled.KeyColumns
    _batch: Any = compiled

    class CompiledKeyColumns(_Compiled):
        """_batch.KeyColumns (typed C columns, which the parser also fills directly for
        strings and single-blob values: its scan) with what the db layer adds: the batch as
        Arrow arrays over its buffers, or as a _batch.KeyBatch, without pyarrow."""

        __slots__ = ()

        def columns(self, dump_id: int, projector, native: bool = False):
            """The batch as Arrow arrays in KEYS_COLUMNS order, or (native) as a
            _batch.KeyBatch; the batch is then empty.  The projector is shown the rows the
            compiled loop wrote (RowBuilder.add showed it the others)."""
            taken = self.take()
            if projector is not None:
                projector.add_compiled(taken, self.type_names, self.encoding_names)
            if native:
                if taken["nonascii"] and not _batch.utf8_keys(taken):
                    _batch.escape_keys(taken)  # key_raw: the names that are not UTF-8
                return _batch.key_batch(taken, dump_id, KEYS_FORMATS)
            return _arrow_columns(taken, dump_id)

    KeyColumns = CompiledKeyColumns
else:
    KeyColumns = PyKeyColumns
# The stream a database's writer hands DuckDB the compiled batches through (store.BulkWriter)
KEY_STREAM = compiled.KeyStream if compiled is not None else None


class RowBuilder:
    """Accumulates one batch of rows at a time."""

    def __init__(
        self,
        dump_id: int,
        info,
        target: str | None = None,
        batch_rows: int = BATCH_ROWS,
        projector=None,
        key_filter=None,
        snapshot_ms=None,
        columns: type | None = None,
    ):
        """key_filter: a filters.KeyFilter (rows it rejects are never added); snapshot_ms: a
        callable giving the snapshot time in ms, asked once at the first key with an expiry
        when the filter skips expired keys; columns: the batch class (default KeyColumns, the
        backend's; PyKeyColumns to compare the two in one process)."""
        self.dump_id = dump_id
        # Another consumer of every key (rdbscan/migrate's Projector: the key's cost on other
        # servers): add_record(rec) for the records this builder adds, add_compiled(columns,
        # type names, encoding names) for a compiled batch as it is taken.
        self.projector = projector
        self.info = info
        self.costs = MemoryCosts(info, target)
        self.estimates: dict[tuple, tuple[int, int]] = {}  # memory estimate by value shape (add)
        # The batch, which the parser may fill directly (parse(..., sink=)).
        self.sink = (columns or KeyColumns)(batch_rows, self.costs, C.TYPE_NAMES, C.TYPE_ENCODINGS)
        self.batch_rows = self.sink.capacity
        self.filter = key_filter if key_filter is not None and key_filter.active else None
        self.dropped_py = 0  # records of the Python path the filter left out
        self.snapshot_ms = SnapshotTime(snapshot_ms)
        if self.filter is not None:
            self.sink.set_filter(**self.filter.compiled(C.TYPE_NAMES), snapshot_ms=self.snapshot_ms)
        self.reset()

    @property
    def profile(self) -> Profile | None:
        """The memory profile, once a key has been estimated."""
        return self.costs.profile

    @property
    def dropped(self) -> int:
        """Keys read and left out by the filter."""
        return self.dropped_py + self.sink.dropped

    def reset(self) -> None:
        self.streams: list[list] = [[] for _ in STREAMS_COLUMNS]
        self.groups: list[list] = [[] for _ in STREAM_GROUPS_COLUMNS]

    @property
    def count(self) -> int:
        return self.sink.n

    @property
    def full(self) -> bool:
        """The batch should be written now."""
        return self.sink.full

    def take_keys(self, native: bool = False):
        """The batch as columns (KEYS_COLUMNS order), or where it can (native) as a
        _batch.KeyBatch (store.BulkWriter takes either); taking it empties it."""
        return self.sink.columns(self.dump_id, self.projector, native)

    def add(self, rec) -> None:
        """One record of the pure-Python parser as a row of the batch (streams as rows of their
        own tables, and to the projector when there is one), unless the filter drops it.  The
        per-key path of a pure-Python load: the memory figures come from _memory, one call."""
        if self.filter is not None and not self.filter.keep(
            rec, self.snapshot_ms() if rec.expire_ms is not None else None
        ):
            self.dropped_py += 1
            return
        mem, tot, fttl, fmin, ints, lpb = self._memory(rec)
        if self.filter is not None and not self.filter.keep_memory(mem):
            self.dropped_py += 1
            return
        k = rec.key
        db = rec.db
        expire = rec.expire_ms
        full_len: int | None = None  # of a name longer than KEY_KEEP, with its hash
        digest: int | None = None
        if rec.long_key is not None:  # read as it streamed past: its first bytes are in key
            full_len, digest, slot = rec.long_key
            k = key_prefix(k)
        else:
            slot = key_slot(k)
            if len(k) > KEY_KEEP:  # an LZF-compressed name, read whole
                full_len, digest = len(k), key_digest(k)
                k = key_prefix(k)
        text = k.decode("utf-8", "backslashreplace")
        invalid = None if rec.invalid is None else C.INVALID_IDS[rec.invalid]
        row = (
            self.dump_id,
            db,
            text,
            k,
            rec.type,
            rec.encoding,
            rec.rdb_type,
            rec.length,
            rec.max_elem,
            rec.end - rec.offset,
            mem,
            tot,
            expire,
            rec.idle,
            rec.freq,
            slot,
            rec.offset,
            fttl,
            fmin,
            ints,
            full_len,
            digest,
            lpb,
            invalid,
            rec.array_last,
        )
        self.sink.append(row)
        if rec.stream is not None:
            self._add_stream(rec, rec.stream, text)
        if self.projector is not None:
            self.projector.add_record(rec)

    def _memory(self, rec) -> tuple:
        """(memory, memory with the expiry and bucket shares, fields with a TTL, their earliest
        expiry, integer members, listpack bytes) of a record.  Strings and single-blob values
        are estimated once per shape: both estimates depend on these figures alone, and dumps
        repeat them endlessly (5 M `DEBUG POPULATE` keys: 7 shapes)."""
        costs = self.costs
        prof = costs.profile
        if prof is None:
            prof = costs.select()
        db = rec.db
        expire = rec.expire_ms
        ttl = rec.field_ttls
        if rec.elems is None and rec.nodes is None and ttl is None and rec.module is None:
            shape = (
                rec.type,
                rec.encoding,
                rec.key_length,
                rec.length,
                rec.blob_bytes,
                db,
                expire is None,
            )
            mem_tot = self.estimates.get(shape)
            if mem_tot is None:
                if len(self.estimates) >= ESTIMATE_CACHE:
                    self.estimates.clear()
                mem = estimate(rec, prof)
                mem_tot = self.estimates[shape] = (
                    mem,
                    total(mem, expire is not None, costs.bucket_shares(db)),
                )
            return mem_tot[0], mem_tot[1], None, None, None, None
        mem = estimate(rec, prof)
        tot = total(mem, expire is not None, costs.bucket_shares(db))
        fttl, fmin = (None, None) if ttl is None else (ttl.fields_with_ttl, ttl.min_field_expire_ms)
        return mem, tot, fttl, fmin, rec.int_members, rec.listpack_bytes

    def _add_stream(self, rec, st, key_text: str) -> None:
        for col, value in zip(
            self.streams,
            (
                self.dump_id,
                rec.db,
                key_text,
                rec.length,
                st.listpacks,
                st.first_id,
                st.last_id,
                st.max_deleted_id,
                st.entries_added,
                st.group_count,
                st.consumers,
                st.pending,
            ),
        ):
            col.append(value)
        for g in st.groups:
            for col, value in zip(
                self.groups,
                (
                    self.dump_id,
                    rec.db,
                    key_text,
                    g.name.decode("utf-8", "backslashreplace"),
                    g.last_delivered_id,
                    g.entries_read,
                    g.consumer_count,
                    g.pending,
                    g.nacked,
                ),
            ):
                col.append(value)


def _encoding_columns(type_names, encoding_names) -> tuple[list, list]:
    """(encoding_id, module_type) of rows by their type and encoding names: a module value's
    encoding is its type name, kept in module_type."""
    ids, modules = [], []
    for t, e in zip(type_names, encoding_names):
        module = t == "module"
        ids.append(C.MODULE_ENCODING_ID if module else C.ENCODING_IDS[e])
        modules.append(e if module else None)
    return ids, modules


def _raw_key(text: str, key: bytes) -> bytes | None:
    """key_raw: the key's bytes when they are not valid UTF-8 (`text` then escapes them)."""
    return None if key.isascii() or text.encode() == key else key


def _extras(*values) -> list | None:
    """key_rows.extras: idle, freq, fields with TTL, earliest field expiry, int members, full
    length and hash of a truncated key name, listpack bytes, invalid, an array's highest index
    (the order in store.KEYS_SCHEMA), None when the key has none of them; the values after the
    first EXTRAS_FIXED only up to the last one present."""
    if values.count(None) == len(values):
        return None
    out = list(values)
    while len(out) > EXTRAS_FIXED and out[-1] is None:
        out.pop()
    return out


def _pure_columns(rows: list[tuple]) -> list:
    """The tuples of RowBuilder.add (the order KeyColumns.append reads) as lists in
    KEYS_COLUMNS order.  family and plain_key are left to the INSERT (key_pattern and a regex
    in DuckDB): in Python, family.fast_family per key would cost more than DuckDB's macro
    (pop1m: 4.1 s against 3.2 s)."""
    c = list(zip(*rows))
    ids, modules = _encoding_columns(c[4], c[5])
    nulls = [None] * len(rows)
    return [
        c[0],
        c[1],
        c[2],
        list(map(_raw_key, c[2], c[3])),
        nulls,
        nulls,
        c[6],
        ids,
        modules,
        *c[7:13],
        c[15],
        c[16],
        list(map(_extras, c[13], c[14], c[17], c[18], c[19], c[20], c[21], c[22], c[23], c[24])),
    ]


def _arrow_columns(cols: dict, dump_id: int) -> list:
    """A taken compiled batch (KeyColumns.take) as Arrow arrays in KEYS_COLUMNS order, over
    its buffers (no per-key Python objects)."""
    import pyarrow as pa

    n = cols["n"]
    buf = pa.py_buffer
    out = []
    offsets, data = buf(cols["key_offsets"]), buf(cols["key_data"])
    key_bytes = pa.Array.from_buffers(pa.binary(), n, [None, offsets, data])
    key_text = pa.Array.from_buffers(pa.string(), n, [None, offsets, data])
    key_raw = None
    if cols["nonascii"]:
        try:
            key_text.validate(full=True)  # valid UTF-8 reads the same as decoded
        except pa.ArrowInvalid:
            keys = key_bytes.to_pylist()
            texts = [k.decode("utf-8", "backslashreplace") for k in keys]
            key_text = pa.array(texts, pa.string())
            key_raw = pa.array(list(map(_raw_key, texts, keys)), pa.binary())
    encoding_id = pa.Array.from_buffers(pa.uint8(), n, [None, buf(cols["encoding_id"])])
    if cols["module_type"] is not None:  # module values: their type name
        module_type = pa.Array.from_buffers(pa.string(), n, list(map(buf, cols["module_type"])))
    else:
        module_type = pa.nulls(n, pa.string())
    for field in arrow_schema(KEYS_KINDS):
        name = field.name
        if name == "dump_id":
            out.append(
                pa.Array.from_buffers(pa.int32(), n, [None, buf(struct.pack("<i", dump_id) * n)])
            )
        elif name == "key":
            out.append(key_text)
        elif name == "key_raw":
            out.append(key_raw if key_raw is not None else pa.nulls(n, pa.binary()))
        elif name == "family":
            out.append(
                pa.Array.from_buffers(
                    pa.string(),
                    n,
                    [
                        buf(cols["family_valid"]),
                        buf(cols["family_offsets"]),
                        buf(cols["family_data"]),
                    ],
                )
            )
        elif name == "plain_key":
            out.append(pa.Array.from_buffers(pa.bool_(), n, [None, buf(cols["plain_key"])]))
        elif name == "encoding_id":
            out.append(encoding_id)
        elif name == "module_type":
            out.append(module_type)
        elif name == "extras":
            valid, offsets, values, values_valid = cols["extras"]
            child = pa.Array.from_buffers(
                pa.int64(), len(values) // 8, [buf(values_valid), buf(values)]
            )
            out.append(
                pa.Array.from_buffers(field.type, n, [buf(valid), buf(offsets)], children=[child])
            )
        else:
            value = cols[name]
            if isinstance(value, tuple):  # nullable: (data, validity bitmap)
                out.append(pa.Array.from_buffers(field.type, n, [buf(value[1]), buf(value[0])]))
            else:
                out.append(pa.Array.from_buffers(field.type, n, [None, buf(value)]))
    return out
