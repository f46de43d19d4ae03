"""The streaming RDB parser: bytes in, one KeyRecord per key out (docs/rdb-format.md sections 1-6).

It knows nothing of DuckDB.  Values are measured while they are skipped: element counts,
the longest element, and the few size figures the memory model needs (a histogram of
element lengths for encodings that allocate per element, blob sizes for compact ones).
Only key names, blob images (listpacks, ziplists, intsets) and stream metadata are ever
held, one at a time.

Usage:
    info = DumpInfo()
    for rec in parse(stream, info, size=os.path.getsize(path)):
        ...
    info.checksum  # 'ok' | 'mismatch' | 'disabled' | 'absent' | 'unverified'
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from ..model.kv import EMBED_KEYS, EMBED_VALUES, embed_table, kv_layout
from . import constants as C
from .backend import compiled, listpack_scan, ziplist_scan
from .blobs import BlobError, _backlen, intset_scan, listpack_values, zipmap_scan
from .errors import CorruptError, NotRDBError, RDBError, TruncatedError, UnsupportedError
from .modules import ModuleFormatError, module_type_name, reader_for
from .reader import I8, I16, I32, I64, U64, LZFError, Reader, int_text_len, lzf_sizes_ok

# Compiled bulk skipper for hashtable-encoded elements (None: the per-element Python loop).
_skip_elements = compiled.skip_elements if compiled is not None else None
_LAYOUT_STR, _LAYOUT_PAIR, _LAYOUT_ZSET_BINARY, _LAYOUT_ZSET_TEXT = 0, 1, 2, 3



def embedded(table: bytes, klen: int, vlen: int, ttl: bool) -> str:
    """A string's encoding by kv.embed_table (the compiled record loop reads it the same way)."""
    if klen < EMBED_KEYS and vlen < EMBED_VALUES and \
            table[(ttl * EMBED_KEYS + klen) * EMBED_VALUES + vlen]:
        return "embstr"
    return "raw"


_CANONICAL_LONG = re.compile(rb"-?[1-9][0-9]{0,18}|0")
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1
_DB_MAX = (1 << 31) - 1
_COUNT_MAX = 1 << 40    # more keys than any server can hold: a damaged size field
# PEL / node id lists longer than this are counted but not kept (memory bound).
MAX_KEPT_IDS = 100_000
TRAILING_HEAD = 64
MAX_SKIPPED_KEPT = 100
# Stream node and hash-TTL listpacks are decoded entry by entry; more entries than this in
# one blob (Redis defaults: 100 and 128) is refused rather than held (memory bound).
MAX_DECODED_ENTRIES = 4_000_000
STREAM_ITEM_FLAG_DELETED = 1
STREAM_ITEM_FLAG_SAMEFIELDS = 2
STREAM_NODE_MAX_ENTRIES = 100   # default stream-node-max-entries (memory model)
# What a dump holds beyond its keys is counted in full but kept only up to these bounds (a
# 7-20 MB file of repeated records reached 0.6-1.5 GB); DumpInfo.cut counts what was left out
# by kind, and the load says so (dumps.cut, a warning; docs/hostile-inputs.md).
MAX_KEPT_AUX = 1_000            # distinct aux field names
MAX_AUX_VALUE = 4_096           # characters of an aux field's value
MAX_KEPT_FUNCTIONS = 1_000      # function libraries named
MAX_KEPT_MODULE_AUX = 1_000     # module aux records named
MAX_KEPT_SLOT_INFO = C.CLUSTER_SLOTS   # slot-info records (a real dump has one per slot)
MAX_KEPT_DBS = C.CLUSTER_SLOTS  # databases with RESIZEDB sizes
MAX_KEPT_GROUPS = 1_000         # consumer groups of one stream kept in detail
MAX_KEPT_CONSUMERS = 10_000     # consumers of one stream (all its groups) kept in detail
LP_HEADER_AND_END = 7           # listpack: 4-byte total bytes, 2-byte count, 1-byte end mark


def lp_string_entry_bytes(n: int) -> int:
    """Bytes of a listpack entry holding a string of n bytes (listpack.c lpEncodeString:
    a 1, 2 or 5-byte header, the bytes, the back-length of both)."""
    head = 1 if n <= 63 else (2 if n <= 4095 else 5)
    return head + n + _backlen(head + n)


class KeyRecord:
    """What the parser knows of one key.  Plain data; consumers derive the columns."""

    __slots__ = ("db", "key", "rdb_type", "type", "encoding", "length", "max_elem", "offset",
                 "end", "expire_ms", "idle", "freq", "blob", "elems", "vals", "nodes", "extra")

    def __init__(self):
        self.elems = None   # {element text length: count} for per-element allocations
        self.vals = None    # hashtable hashes: {value length: count}
        self.nodes = None   # quicklists: {node bytes: count}; streams: {listpack bytes: count}
        self.blob = 0       # decompressed size of a single compact blob (listpack, ziplist, intset)
        self.extra = None   # streams, hash field TTLs, modules: dict

    @property
    def serialized_bytes(self) -> int:
        return self.end - self.offset

    def __repr__(self):
        return (f"KeyRecord(db={self.db}, key={self.key!r}, type={self.type}, "
                f"encoding={self.encoding}, length={self.length}, max_elem={self.max_elem})")


class DumpInfo:
    """Everything about a dump that is not a key: header, aux fields, trailer, outcome."""

    def __init__(self):
        self.magic: str | None = None
        self.rdb_version: int | None = None
        self.valkey_magic = False
        self.aux: dict[str, str] = {}
        self.functions: list[str] = []
        self.module_aux: list[str] = []
        self.slot_info: list[tuple[int, int, int]] = []
        self.slot_info_source: str | None = None
        # Valkey 9's fourth slot-info number: {slot: keys with hash-field TTLs in that slot}.
        self.slot_volatile_items: dict[int, int] = {}
        self.resizedb: dict[int, tuple[int, int]] = {}
        self.checksum = "absent"
        self.checksum_stored: int | None = None
        self.checksum_computed: int | None = None
        self.complete = False
        self.keys = 0
        self.bytes_read = 0
        self.position = 0                   # bytes parsed so far (progress, compiled rows)
        self.trailing_bytes: int | None = None
        self.trailing_head = b""            # first bytes after the RDB (AOF tail, EOF mark)
        self.skipped_keys = 0               # keys left out by skip_bad
        self.skipped: list[str] = []        # the first few of them, described
        # Counted but not kept (the MAX_KEPT_* bounds): {kind: how many were left out}.
        self.cut: dict[str, int] = {}
        self.slot_info_records = 0          # every slot-info record (slot_info keeps a sample)
        self.slot_info_keys = 0             # the sum of their key counts
        self._version_key: tuple | None = None   # version_tuple's memo
        self._version = (7, 0)

    def keep(self, kind: str, kept: int, limit: int) -> bool:
        """Whether one more `kind` may be kept (`kept` are); if not, it is counted in `cut`."""
        if kept < limit:
            return True
        self.cut[kind] = self.cut.get(kind, 0) + 1
        return False

    @property
    def server(self) -> str | None:
        if "valkey-ver" in self.aux or self.valkey_magic:
            return "valkey"
        if "redis-ver" in self.aux:
            return "redis"
        return None

    @property
    def server_version(self) -> str | None:
        return self.aux.get("valkey-ver") or self.aux.get("redis-ver")

    def version_tuple(self) -> tuple[int, int]:
        """(major, minor) of the writing server; guessed from the RDB version without aux.
        Remembered until the aux version or RDB version changes (the parser asks per record)."""
        key = (self.server_version, self.rdb_version)
        if key != self._version_key:
            self._version_key, self._version = key, _version_of(*key)
        return self._version


_RDB_VERSION_SERVERS = {1: (2, 0), 2: (2, 4), 3: (2, 6), 4: (2, 6), 5: (2, 6), 6: (2, 8),
                        7: (3, 2), 8: (4, 0), 9: (6, 2), 10: (7, 0), 11: (7, 2), 12: (7, 4),
                        13: (8, 6), 80: (9, 0)}


def _version_of(server_version: str | None, rdb_version: int | None) -> tuple[int, int]:
    if server_version:
        parts = re.findall(r"\d+", server_version)
        if len(parts) >= 2:
            return int(parts[0]), int(parts[1])
    return _RDB_VERSION_SERVERS.get(rdb_version or 9, (7, 0))



def _id_text(ms: int, seq: int) -> str:
    return f"{ms}-{seq}"


class _Parser:
    def __init__(self, reader: Reader, info: DumpInfo, skip_bad: bool = False,
                 drain_tail: bool = True, sink=None, quantum: int = 8,
                 tail_peek: int = TRAILING_HEAD, tail_ready=None):
        self.r = reader
        self.sink = sink
        self.quantum = quantum      # the allocator's, for the servers whose embstr depends on it
        self.info = info
        self.key: bytes | None = None
        self.rdb_type: int | None = None
        self.skip_bad = skip_bad
        self.drain_tail = drain_tail
        self.tail_peek = tail_peek
        self.tail_ready = tail_ready
        self.bad: CorruptError | None = None   # skip_bad: what is wrong with the current value

    # -- errors --------------------------------------------------------------------------
    def corrupt(self, message: str, offset: int | None = None) -> CorruptError:
        return CorruptError(message, self.r.tell() if offset is None else offset,
                            key=self.key, rdb_type=self.rdb_type)

    def check_count(self, n: int, what: str, min_bytes: int = 1) -> None:
        """An element count cannot exceed what is left of the input."""
        if n > _COUNT_MAX:
            raise self.corrupt(f"{what} claims {n} elements")
        left = self.r.remaining_known()
        if left is not None and n * min_bytes > left:
            # Most often a file cut short (a full disk, an interrupted copy): say so.
            raise TruncatedError(f"unexpected end of input: {what} of {n} elements needs at "
                                 f"least {n * min_bytes} bytes but only {left} remain",
                                 self.r.tell(), key=self.key, rdb_type=self.rdb_type)

    def blob(self, what: str) -> bytes:
        """A blob string.  With skip_bad an LZF payload that does not decompress (its length
        is known, so the reader is already past it) marks the value bad and reads as b''."""
        try:
            return self.r.string(what)
        except LZFError as e:
            e.key, e.rdb_type = self.key, self.rdb_type
            self.recover(e)
            return b""

    def recover(self, err: CorruptError) -> None:
        """A bad value whose extent is known: raise it, or with skip_bad remember it (the
        first one) and let the caller continue to the end of the value."""
        if not self.skip_bad:
            raise err
        if self.bad is None:
            self.bad = err

    # -- header --------------------------------------------------------------------------
    def header(self) -> None:
        r, info = self.r, self.info
        r.fill(9)
        head = r.buf[:9]
        if len(head) < 9 and (b"REDIS".startswith(head[:5]) or b"VALKEY".startswith(head[:6])):
            what = "the input is empty" if not head else f"the input has only {len(head)} bytes"
            raise TruncatedError(f"unexpected end of input: {what}, fewer than the 9 bytes of "
                                 f"an RDB header", 0)
        if head[:5] == b"REDIS" and head[5:9].isdigit():
            info.magic = head[:9].decode()
            version = int(head[5:9])
        elif head[:6] == b"VALKEY" and head[6:9].isdigit():
            info.magic = head[:9].decode()
            info.valkey_magic = True
            version = int(head[6:9])
        else:
            shown = head[:9].decode("ascii", "backslashreplace")
            raise NotRDBError(f"not an RDB file: expected magic 'REDIS' + 4 digits or "
                              f"'VALKEY' + 3 digits, found {shown!r}", 0)
        info.rdb_version = version
        if info.valkey_magic:
            if version not in C.VALKEY_RDB_VERSIONS:
                raise UnsupportedError(
                    f"unsupported Valkey RDB version {version}: rdbscan reads VALKEY080 and "
                    f"REDIS0001..REDIS{C.RDB_VERSION_MAX:04d}", 0)
        elif not 1 <= version <= C.RDB_VERSION_MAX:
            raise UnsupportedError(
                f"unsupported RDB version {version}: the newest rdbscan reads is "
                f"{C.RDB_VERSION_MAX} (Redis 8.6) and Valkey's 80", 0)
        r.pos = 9

    # -- the record loop -----------------------------------------------------------------
    def records(self) -> Iterator[KeyRecord]:
        r, info = self.r, self.info
        self.header()
        valkey = info.valkey_magic
        version = info.rdb_version
        db = 0
        expire = idle = freq = None
        start = None
        string_encoding = self.string_encoder()
        embed = None        # Redis 8.6 / Valkey 8.1+: embstr by key, value and TTL (kv.py)
        handlers = self.handlers()
        sink = self.sink
        while True:
            if not info.keys:
                embed = self.embed_table()   # aux fields (the server version) precede the keys
            if sink is not None and start is None and expire is None and idle is None \
                    and freq is None:
                # Compiled rows: the common records go straight into the sink's columns.
                r.pos, taken = sink.scan(r.buf, r.pos, r.base, db, string_encoding,
                                         r.max_item, info.version_tuple() >= (7, 2),
                                         embed or None)
                if taken:
                    info.keys += taken
                    info.position = r.base + r.pos
                    yield None
            off = r.base + r.pos
            if r.pos >= len(r.buf):
                if not r.fill(1):
                    raise TruncatedError("unexpected end of input: expected a record type or "
                                         "opcode (the file has no EOF marker)", off)
            t = r.buf[r.pos]
            r.pos += 1
            if t < 0xF3:
                # A key: TYPE STR(key) VALUE.
                if start is None:
                    start = off
                h = handlers.get(t)
                if h is None and t != C.RDB_TYPE_STRING:
                    if t in (C.RDB_OPCODE_RAM_LRU, C.RDB_OPCODE_SLOT_NUM):
                        # Key-scoped Redis Enterprise opcodes below 0xF3: one LEN, skipped.
                        r.length("Redis Enterprise opcode payload")
                        continue
                    if t == C.RDB_TYPE_MODULE_PRE_GA:
                        raise UnsupportedError(
                            "value of type 6 (module, Redis 4.0 release-candidate format) "
                            "cannot be skipped without its module; rdbscan cannot read "
                            "past it", off, rdb_type=t)
                    raise CorruptError(f"invalid object type or opcode {t}", off)
                self.rdb_type = t
                self.key = None
                buf, p = r.buf, r.pos
                if p < len(buf) and buf[p] < 0x40 and p + 1 + buf[p] <= len(buf):
                    # Fast path: a short raw key entirely in the buffer.
                    key = buf[p + 1:p + 1 + buf[p]]
                    r.pos = p + 1 + buf[p]
                else:
                    try:
                        key = r.string("key name")
                    except LZFError as e:
                        e.rdb_type = t
                        self.recover(e)
                        key = b""
                self.key = key
                rec = KeyRecord()
                rec.db = db
                rec.key = key
                rec.rdb_type = t
                rec.offset = start
                rec.expire_ms = expire
                rec.idle = idle
                rec.freq = freq
                if t == 0:
                    rec.type = "string"
                    self.string_value(rec, string_encoding)
                    if embed and rec.encoding != "int":
                        rec.encoding = embedded(embed, len(key), rec.length, expire is not None)
                else:
                    rec.type = C.TYPE_NAMES[t]
                    h(rec)
                rec.end = r.base + r.pos
                if self.bad is not None:
                    # skip_bad: the value is damaged but ends where it should; leave it out.
                    info.skipped_keys += 1
                    if len(info.skipped) < MAX_SKIPPED_KEPT:
                        info.skipped.append(self.bad.describe())
                    self.bad = None
                    self.key = None
                    self.rdb_type = None
                    expire = idle = freq = None
                    start = None
                    continue
                info.keys += 1
                self.key = None
                self.rdb_type = None
                expire = idle = freq = None
                start = None
                yield rec
                continue
            # Opcodes.
            if t == C.RDB_OPCODE_EXPIRETIME_MS:
                start = off if start is None else start
                expire = r.unpack(I64, "expire time (ms)")
            elif t == C.RDB_OPCODE_SELECTDB:
                db = r.length("database number")
                if db > _DB_MAX:
                    raise CorruptError(f"database number {db} is out of range (Redis counts "
                                       f"databases in a signed 32-bit int)", off)
            elif t == C.RDB_OPCODE_RESIZEDB:
                keys = r.length("RESIZEDB db size")
                expires = r.length("RESIZEDB expires size")
                if max(keys, expires) > _COUNT_MAX:
                    raise CorruptError(f"RESIZEDB claims {max(keys, expires)} keys", off)
                if db in info.resizedb or info.keep("databases", len(info.resizedb),
                                                     MAX_KEPT_DBS):
                    info.resizedb[db] = (keys, expires)
            elif t == C.RDB_OPCODE_AUX:
                self.aux(off)
            elif t == C.RDB_OPCODE_IDLE:
                start = off if start is None else start
                idle = r.length("LRU idle time")
                if idle > _LONG_MAX:
                    raise CorruptError(f"LRU idle time {idle} s is out of range", off)
            elif t == C.RDB_OPCODE_FREQ:
                start = off if start is None else start
                freq = r.u8("LFU frequency")
            elif t == C.RDB_OPCODE_EXPIRETIME:
                start = off if start is None else start
                expire = r.unpack(I32, "expire time (s)") * 1000
            elif t == C.RDB_OPCODE_SLOT_INFO:
                slot = r.length("slot info: slot")
                keys = r.length("slot info: keys")
                expires = r.length("slot info: expires")
                self.check_slot_info(slot, keys, expires, off)
                self.add_slot_info(slot, keys, expires)
                info.slot_info_source = "opcode-244"
            elif t == C.RDB_OPCODE_FUNCTION2:
                code = r.string("function library")
                if info.keep("functions", len(info.functions), MAX_KEPT_FUNCTIONS):
                    info.functions.append(_library_name(code))
            elif t == C.RDB_OPCODE_FUNCTION_PRE_GA:
                name = r.string("function name")
                r.string("function engine")
                if r.length("function description flag"):
                    r.string("function description")
                r.skip_string("function code")
                if info.keep("functions", len(info.functions), MAX_KEPT_FUNCTIONS):
                    info.functions.append(name.decode("utf-8", "backslashreplace"))
            elif t == C.RDB_OPCODE_MODULE_AUX:
                module_id = r.length("module aux: module id")
                name, _ = module_type_name(module_id)
                self.skip_module_opcodes("module aux")
                if info.keep("module_aux", len(info.module_aux), MAX_KEPT_MODULE_AUX):
                    info.module_aux.append(name)
            elif t == C.RDB_OPCODE_KEY_META:
                if valkey:
                    self.slot_import()
                elif version >= 13:
                    start = off if start is None else start
                    self.key_meta()
                else:
                    raise CorruptError(f"opcode 243 (KEY_META) in an RDB version {version} file",
                                       off)
            elif t == C.RDB_OPCODE_EOF:
                self.trailer()
                return
            else:  # pragma: no cover - every byte >= 0xF3 is handled above
                raise CorruptError(f"invalid opcode {t}", off)

    # -- opcodes -------------------------------------------------------------------------
    def aux(self, off: int) -> None:
        r, info = self.r, self.info
        k = r.string("aux field name").decode("utf-8", "backslashreplace")
        v = r.string("aux field value").decode("utf-8", "backslashreplace")
        if k == "slot-info":
            # Valkey 8 cluster mode: "<slot>,<keys>,<expires>" before each slot's keys; Valkey 9
            # adds ",<keys with volatile items>" (hash-field TTLs).  Valkey's rdbLoad reads the
            # first four with sscanf and ignores what follows (valkey src/rdb.c, "slot-info").
            try:
                nums = [int(x) for x in v.split(",")]
            except ValueError:
                nums = []
            if len(nums) < 3:
                raise self.corrupt(f"aux slot-info value {v!r} is not "
                                   f"'slot,keys,expires[,keys with field TTLs]'", off)
            slot, keys, expires = nums[:3]
            self.check_slot_info(slot, keys, expires, off)
            if len(nums) > 3:
                if not 0 <= nums[3] <= _COUNT_MAX:
                    raise self.corrupt(f"slot info claims {nums[3]} keys with field TTLs", off)
                info.slot_volatile_items[slot] = nums[3]   # one per slot: bounded
            self.add_slot_info(slot, keys, expires)
            info.slot_info_source = "aux-slot-info"
        elif k == "lua":
            info.aux["lua"] = str(int(info.aux.get("lua", "0")) + 1)
        elif k in info.aux or info.keep("aux", len(info.aux), MAX_KEPT_AUX):
            if len(v) > MAX_AUX_VALUE:
                info.cut["aux_value"] = info.cut.get("aux_value", 0) + 1
                v = v[:MAX_AUX_VALUE]
            info.aux[k] = v

    def add_slot_info(self, slot: int, keys: int, expires: int) -> None:
        info = self.info
        info.slot_info_records += 1
        info.slot_info_keys += keys
        if info.keep("slot_info", len(info.slot_info), MAX_KEPT_SLOT_INFO):
            info.slot_info.append((slot, keys, expires))

    def check_slot_info(self, slot: int, keys: int, expires: int,
                        offset: int | None = None) -> None:
        if not 0 <= slot < C.CLUSTER_SLOTS:
            raise self.corrupt(f"slot info for slot {slot}, outside 0..{C.CLUSTER_SLOTS - 1}",
                               offset)
        if not (0 <= keys <= _COUNT_MAX and 0 <= expires <= _COUNT_MAX):
            raise self.corrupt(f"slot info claims {keys} keys and {expires} expires", offset)

    def skip_module_opcodes(self, what: str, visit=None) -> int:
        """Skip a module opcode stream up to its EOF opcode (docs/rdb-format.md section 6.2); returns its items.
        visit(opcode, value) sees each item: an integer's value, a string's length, None for
        a float (rdbscan/rdb/modules.py readers)."""
        r = self.r
        items = 0
        while True:
            op = r.length(f"{what}: opcode")
            if op == C.RDB_MODULE_OPCODE_EOF:
                return items
            if op in (C.RDB_MODULE_OPCODE_SINT, C.RDB_MODULE_OPCODE_UINT):
                v = r.length(f"{what}: integer")
            elif op == C.RDB_MODULE_OPCODE_FLOAT:
                v = r.skip(4, f"{what}: float")
            elif op == C.RDB_MODULE_OPCODE_DOUBLE:
                v = r.skip(8, f"{what}: double")
            elif op == C.RDB_MODULE_OPCODE_STRING:
                v = r.skip_string(f"{what}: string")
            else:
                raise self.corrupt(f"{what}: unknown module opcode {op}")
            if visit is not None:
                visit(op, v)
            items += 1

    def key_meta(self) -> None:
        """Redis RDB 13 KEY_META (opcode 243): per-key module metadata, skipped."""
        r = self.r
        classes = r.length("key metadata: classes")
        self.check_count(classes, "key metadata", 5)
        for _ in range(classes):
            r.skip(4, "key metadata: class spec")
            self.skip_module_opcodes("key metadata")

    def slot_import(self) -> None:
        """Valkey 9 SLOT_IMPORT (opcode 243 under the VALKEY magic): job name and slot ranges."""
        r = self.r
        r.skip_string("slot import: job name")
        ranges = r.length("slot import: ranges")
        self.check_count(ranges, "slot import", 2)
        for _ in range(ranges):
            r.length("slot import: start slot")
            r.length("slot import: end slot")

    def trailer(self) -> None:
        r, info = self.r, self.info
        computed = r.checksum_here()
        if info.rdb_version >= 5:
            stored = r.unpack(U64, "CRC64 checksum")
            info.checksum_stored = stored
            info.checksum_computed = computed
            if stored == 0:
                info.checksum = "disabled"
            elif not r.crc_on:   # verify_crc=False: the bytes' checksum was never computed
                info.checksum = "unverified"
                info.checksum_computed = None
            elif stored == computed:
                info.checksum = "ok"
            else:
                info.checksum = "mismatch"
        else:
            info.checksum = "absent"
        info.bytes_read = r.tell()
        # What follows the RDB (an AOF tail, a replication EOF mark): its size and first bytes.
        r.fill(self.tail_peek)
        if not self.drain_tail and r.size is None and not r.eof and \
                len(r.buf) - r.pos <= self.tail_peek and self.tail_ready and self.tail_ready():
            r.fill(self.tail_peek + 1)   # does not wait: the input has ended or more is there
        info.trailing_head = r.buf[r.pos:r.pos + self.tail_peek]
        if r.size is not None:
            info.trailing_bytes = r.size - r.tell()
        elif self.drain_tail:
            info.trailing_bytes = r.drain()
        else:   # a live stream, not waited for: what arrived, None if more follows the peek
            seen = len(r.buf) - r.pos
            info.trailing_bytes = None if seen > self.tail_peek and not r.eof else seen
        info.complete = True

    # -- values --------------------------------------------------------------------------
    def string_encoder(self):
        """How this dump's server encoded a string of a given length (docs/rdb-format.md section 7.2)."""
        major, minor = self.info.version_tuple()
        if (major, minor) < (3, 0):
            limit = -1                       # 2.x: OBJECT ENCODING says raw for all text
        elif (major, minor) < (3, 2):
            limit = C.EMBSTR_SIZE_LIMIT_3_0
        else:
            limit = C.EMBSTR_SIZE_LIMIT
        return limit

    def embed_table(self) -> bytes:
        """kv.embed_table of a server that decides embstr by key length, value length and TTL
        (Redis 8.6, Valkey 8.1+), else b''."""
        layout = kv_layout(self.info.server, self.info.version_tuple())
        return embed_table(layout, self.quantum) if layout else b""

    def string_value(self, rec: KeyRecord, limit: int) -> None:
        r = self.r
        buf, pos = r.buf, r.pos
        if len(buf) - pos >= 2 and buf[pos] < 0x40 and pos + 1 + buf[pos] <= len(buf):
            # Fast path: a short raw string entirely in the buffer.
            n = buf[pos]
            r.pos = pos + 1 + n
            rec.length = rec.max_elem = n
            if n <= 20 and _CANONICAL_LONG.fullmatch(buf, pos + 1, pos + 1 + n) and (
                    n < 19 or _LONG_MIN <= int(buf[pos + 1:pos + 1 + n]) <= _LONG_MAX):
                rec.encoding = "int"
            else:
                rec.encoding = "embstr" if n <= limit else "raw"
            return
        start = r.tell()
        n, enc = r.length_enc("string value")
        if enc:
            if n == 3:
                clen = r.length("string value (compressed length)")
                ulen = r.length("string value (uncompressed length)")
                if not lzf_sizes_ok(clen, ulen):
                    raise self.corrupt(f"LZF sizes are impossible (compressed {clen}, "
                                       f"uncompressed {ulen})", start)
                r.skip(clen, "string value")
                rec.length = rec.max_elem = ulen
                rec.encoding = "embstr" if ulen <= limit else "raw"
                return
            if n == 0:
                v = r.unpack(I8, "string value")
            elif n == 1:
                v = r.unpack(I16, "string value")
            elif n == 2:
                v = r.unpack(I32, "string value")
            else:
                raise self.corrupt(f"unknown string encoding {n}", start)
            rec.length = rec.max_elem = int_text_len(v)
            rec.encoding = "int"
            return
        if n <= 20:
            r.need(n, "string value", start)
            data = r.buf[r.pos:r.pos + n]
            r.pos += n
            if _CANONICAL_LONG.fullmatch(data) and _LONG_MIN <= int(data) <= _LONG_MAX:
                rec.encoding = "int"
            else:
                rec.encoding = "embstr" if n <= limit else "raw"
        else:
            r.skip(n, "string value")
            rec.encoding = "embstr" if n <= limit else "raw"
        rec.length = rec.max_elem = n

    def handlers(self) -> dict:
        valkey = self.info.valkey_magic
        return {
            C.RDB_TYPE_LIST: self.v_list_or_set,
            C.RDB_TYPE_SET: self.v_list_or_set,
            C.RDB_TYPE_ZSET: self.v_zset,
            C.RDB_TYPE_ZSET_2: self.v_zset,
            C.RDB_TYPE_HASH: self.v_hash,
            C.RDB_TYPE_MODULE_2: self.v_module,
            C.RDB_TYPE_HASH_ZIPMAP: self.v_blob,
            C.RDB_TYPE_LIST_ZIPLIST: self.v_blob,
            C.RDB_TYPE_SET_INTSET: self.v_blob,
            C.RDB_TYPE_ZSET_ZIPLIST: self.v_blob,
            C.RDB_TYPE_HASH_ZIPLIST: self.v_blob,
            C.RDB_TYPE_LIST_QUICKLIST: self.v_quicklist,
            C.RDB_TYPE_STREAM_LISTPACKS: self.v_stream,
            C.RDB_TYPE_HASH_LISTPACK: self.v_blob,
            C.RDB_TYPE_ZSET_LISTPACK: self.v_blob,
            C.RDB_TYPE_LIST_QUICKLIST_2: self.v_quicklist,
            C.RDB_TYPE_STREAM_LISTPACKS_2: self.v_stream,
            C.RDB_TYPE_SET_LISTPACK: self.v_blob,
            C.RDB_TYPE_STREAM_LISTPACKS_3: self.v_stream,
            C.RDB_TYPE_HASH_METADATA_PRE_GA: self.v_hash_2 if valkey else self.v_hash_ttl,
            C.RDB_TYPE_HASH_LISTPACK_EX_PRE_GA: self.v_hash_listpack_ex,
            C.RDB_TYPE_HASH_METADATA: self.v_hash_ttl,
            C.RDB_TYPE_HASH_LISTPACK_EX: self.v_hash_listpack_ex,
            C.RDB_TYPE_STREAM_LISTPACKS_4: self.v_stream,
        }

    def bulk_skip(self, i: int, n: int, mx: int, layout: int, hist_a: dict, hist_b) -> tuple:
        """Compiled skip of elements i.. of n lying wholly in the buffer (_speedups.skip_elements,
        the twin of the per-element skip_string loops below); returns (next i, longest)."""
        r = self.r
        r.pos, done, m, ints = _skip_elements(r.buf, r.pos, n - i, layout, hist_a, hist_b)
        r.ints_skipped += ints
        return i + done, (m if m > mx else mx)

    def v_list_or_set(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("element count")
        self.check_count(n, "collection")
        hist: dict[int, int] = {}
        mx = 0
        skip = r.skip_string
        get = hist.get
        ints_before = r.ints_skipped
        fast = _skip_elements is not None
        i = 0
        while i < n:
            if fast:
                # Compiled: every element wholly in the buffer at once; the Python lines
                # below take the one it stopped at (LZF, or the buffer needs a refill).
                i, mx = self.bulk_skip(i, n, mx, _LAYOUT_STR, hist, None)
                if i >= n:
                    break
            ln = skip("element")
            hist[ln] = get(ln, 0) + 1
            if ln > mx:
                mx = ln
            i += 1
        rec.length = n
        rec.max_elem = mx
        rec.elems = hist
        rec.encoding = C.TYPE_ENCODINGS[rec.rdb_type]
        if rec.rdb_type == C.RDB_TYPE_SET:
            # Members Redis stored integer-encoded (canonical integers in the int32 range).
            rec.extra = {"int_members": r.ints_skipped - ints_before}

    def v_zset(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("zset member count")
        self.check_count(n, "zset", 2)
        hist: dict[int, int] = {}
        mx = 0
        skip = r.skip_string
        get = hist.get
        binary = rec.rdb_type == C.RDB_TYPE_ZSET_2
        fast = _skip_elements is not None
        layout = _LAYOUT_ZSET_BINARY if binary else _LAYOUT_ZSET_TEXT
        i = 0
        while i < n:
            if fast:   # compiled bulk skip, as in v_list_or_set
                i, mx = self.bulk_skip(i, n, mx, layout, hist, None)
                if i >= n:
                    break
            i += 1
            ln = skip("zset member")
            hist[ln] = get(ln, 0) + 1
            if ln > mx:
                mx = ln
            if binary:
                r.skip(8, "zset score")
            else:
                sl = r.u8("zset score length")
                if sl < 253:
                    r.skip(sl, "zset score")
        rec.length = n
        rec.max_elem = mx
        rec.elems = hist
        rec.encoding = "skiplist"

    def v_hash(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("hash field count")
        self.check_count(n, "hash", 2)
        fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        mx = 0
        skip = r.skip_string
        fget, vget = fields.get, vals.get
        fast = _skip_elements is not None
        i = 0
        while i < n:
            if fast:   # compiled bulk skip, as in v_list_or_set
                i, mx = self.bulk_skip(i, n, mx, _LAYOUT_PAIR, fields, vals)
                if i >= n:
                    break
            i += 1
            f = skip("hash field")
            v = skip("hash value")
            fields[f] = fget(f, 0) + 1
            vals[v] = vget(v, 0) + 1
            if f > mx:
                mx = f
            if v > mx:
                mx = v
        rec.length = n
        rec.max_elem = mx
        rec.elems = fields
        rec.vals = vals
        rec.encoding = "hashtable"

    def v_hash_ttl(self, rec: KeyRecord) -> None:
        """Types 24 (HASH_METADATA) and 22 (its 7.4-rc form): fields with their own TTLs."""
        r = self.r
        pre_ga = rec.rdb_type == C.RDB_TYPE_HASH_METADATA_PRE_GA
        min_expire = 0 if pre_ga else r.unpack(I64, "hash minimum field expiry")
        n = r.length("hash field count")
        self.check_count(n, "hash", 3)
        fields: dict[int, int] = {}
        ttl_fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        mx = 0
        with_ttl = 0
        earliest = None
        skip = r.skip_string
        for _ in range(n):
            t = r.length("hash field TTL")
            f = skip("hash field")
            v = skip("hash value")
            if t:
                at = t if pre_ga else t + min_expire - 1
                if not _LONG_MIN <= at <= _LONG_MAX:
                    self.recover(self.corrupt(f"hash field expiry {at} ms is out of range"))
                    at = 0
                with_ttl += 1
                if earliest is None or at < earliest:
                    earliest = at
                ttl_fields[f] = ttl_fields.get(f, 0) + 1
            else:
                fields[f] = fields.get(f, 0) + 1
            vals[v] = vals.get(v, 0) + 1
            mx = max(mx, f, v)
        rec.length = n
        rec.max_elem = mx
        rec.elems = fields
        rec.vals = vals
        rec.encoding = "hashtable"
        rec.extra = {"fields_with_ttl": with_ttl, "min_field_expire_ms": earliest,
                     "ttl_field_sizes": ttl_fields}

    def v_hash_2(self, rec: KeyRecord) -> None:
        """Valkey 9 HASH_2 (type 22 under the VALKEY magic): field, value, i64 expiry (-1 none)."""
        r = self.r
        n = r.length("hash field count")
        self.check_count(n, "hash", 10)
        fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        mx = 0
        with_ttl = 0
        earliest = None
        skip = r.skip_string
        for _ in range(n):
            f = skip("hash field")
            v = skip("hash value")
            at = r.unpack(I64, "hash field expiry")
            if at != -1:
                with_ttl += 1
                if earliest is None or at < earliest:
                    earliest = at
            fields[f] = fields.get(f, 0) + 1
            vals[v] = vals.get(v, 0) + 1
            mx = max(mx, f, v)
        rec.length = n
        rec.max_elem = mx
        rec.elems = fields
        rec.vals = vals
        rec.encoding = "hashtable"
        rec.extra = {"fields_with_ttl": with_ttl, "min_field_expire_ms": earliest}

    def v_hash_listpack_ex(self, rec: KeyRecord) -> None:
        """Types 25 / 23: [i64 min expire] listpack of field, value, ttl triplets (0 = no TTL)."""
        r = self.r
        if rec.rdb_type == C.RDB_TYPE_HASH_LISTPACK_EX:
            r.unpack(I64, "hash minimum field expiry")
        start = r.tell()
        blob = self.blob("hash listpack")
        try:
            items = _listpack_entries(blob)
        except BlobError as e:
            self.recover(self.corrupt(f"hash listpack: {e}", start))
            items = []
        if len(items) % 3:
            self.recover(self.corrupt(f"hash listpack holds {len(items)} entries, not "
                                      f"field/value/TTL triplets", start))
            items = []
        mx = 0
        with_ttl = 0
        earliest = None
        for i in range(0, len(items), 3):
            f, v, t = items[i], items[i + 1], items[i + 2]
            mx = max(mx, len(f) if isinstance(f, bytes) else int_text_len(f),
                     len(v) if isinstance(v, bytes) else int_text_len(v))
            if not isinstance(t, int):
                self.recover(self.corrupt("hash listpack: field TTL entry is not an integer",
                                          start))
                break
            if t:
                with_ttl += 1
                if earliest is None or t < earliest:
                    earliest = t
        rec.length = len(items) // 3
        rec.max_elem = mx
        rec.blob = len(blob)
        rec.encoding = "listpackex"
        rec.extra = {"fields_with_ttl": with_ttl, "min_field_expire_ms": earliest}

    def v_blob(self, rec: KeyRecord) -> None:
        """Types whose value is one blob string: ziplists, listpacks, intsets, zipmaps."""
        t = rec.rdb_type
        start = self.r.tell()
        blob = self.blob("encoded value")
        try:
            if t in (C.RDB_TYPE_HASH_LISTPACK, C.RDB_TYPE_ZSET_LISTPACK, C.RDB_TYPE_SET_LISTPACK):
                count, mx = listpack_scan(blob, t == C.RDB_TYPE_ZSET_LISTPACK)
                if t != C.RDB_TYPE_SET_LISTPACK:
                    if count & 1:
                        raise BlobError(f"{count} entries do not make pairs")
                    count //= 2
            elif t == C.RDB_TYPE_SET_INTSET:
                count, mx = intset_scan(blob)
            elif t == C.RDB_TYPE_HASH_ZIPMAP:
                count, mx = zipmap_scan(blob)
            else:
                count, mx = ziplist_scan(blob, t == C.RDB_TYPE_ZSET_ZIPLIST)
                if t != C.RDB_TYPE_LIST_ZIPLIST:
                    if count & 1:
                        raise BlobError(f"{count} entries do not make pairs")
                    count //= 2
        except BlobError as e:
            self.recover(self.corrupt(f"{C.RDB_TYPE_LABELS[t]} blob: {e}", start))
            count = mx = 0
        rec.length = count
        rec.max_elem = mx
        rec.blob = len(blob)
        rec.encoding = C.TYPE_ENCODINGS[t]

    def v_quicklist(self, rec: KeyRecord) -> None:
        r = self.r
        v2 = rec.rdb_type == C.RDB_TYPE_LIST_QUICKLIST_2
        n = r.length("quicklist node count")
        self.check_count(n, "quicklist", 2)
        nodes: dict[int, int] = {}
        count = 0
        mx = 0
        packed = 0
        entries_bytes = 0   # listpack entries of every node, uncompressed (v2)
        for _ in range(n):
            container = C.QUICKLIST_NODE_CONTAINER_PACKED
            if v2:
                container = r.length("quicklist node container")
            if container == C.QUICKLIST_NODE_CONTAINER_PLAIN:
                ln = r.skip_string("quicklist plain node")
                nodes[ln] = nodes.get(ln, 0) + 1
                entries_bytes += lp_string_entry_bytes(ln)
                count += 1
                if ln > mx:
                    mx = ln
                continue
            if container != C.QUICKLIST_NODE_CONTAINER_PACKED:
                raise self.corrupt(f"quicklist node container {container} is neither 1 (plain) "
                                   f"nor 2 (packed)")
            start = r.tell()
            blob = self.blob("quicklist node")
            try:
                c, m = listpack_scan(blob) if v2 else ziplist_scan(blob)
            except BlobError as e:
                self.recover(self.corrupt(f"quicklist node: {e}", start))
                c = m = 0
            packed += 1
            nodes[len(blob)] = nodes.get(len(blob), 0) + 1
            entries_bytes += len(blob) - LP_HEADER_AND_END
            count += c
            if m > mx:
                mx = m
        rec.length = count
        rec.max_elem = mx
        rec.nodes = nodes
        # Redis 7.2+ writes a listpack-encoded list as a one-node quicklist (docs/rdb-format.md section 4.2).
        if v2 and n == 1 and packed == 1 and self.info.version_tuple() >= (7, 2):
            rec.encoding = "listpack"
            rec.blob = next(iter(nodes))
        else:
            rec.encoding = "quicklist"
            if v2 and n >= 2:
                # The one listpack these nodes' entries would make (a rewrite of the list):
                # the compact-encoding check needs it uncompressed (nodes may be LZF-compressed).
                rec.extra = {"listpack_bytes": entries_bytes + LP_HEADER_AND_END}

    def v_stream(self, rec: KeyRecord) -> None:
        """Streams, types 15/19/21/26 (docs/rdb-format.md section 5.7)."""
        r = self.r
        t = rec.rdb_type
        n_lp = r.length("stream listpack count")
        self.check_count(n_lp, "stream", 3)
        lp_sizes: dict[int, int] = {}
        node_ids: list[bytes] | None = []
        mx = 0
        lp_unfilled: dict[int, int] = {}
        tail_lp: int | None = None
        tail_entries = 0
        for _ in range(n_lp):
            start = r.tell()
            node_key = self.blob("stream node key")
            if len(node_key) != 16:
                self.recover(self.corrupt(f"stream node key is {len(node_key)} bytes, "
                                          f"expected 16", start))
            start = r.tell()
            lp = self.blob("stream listpack")
            try:
                m, entries = _stream_node_max(lp)
            except (BlobError, IndexError, TypeError) as e:
                self.recover(self.corrupt(f"stream listpack: {e or 'malformed entry'}", start))
                m = entries = 0
            if m > mx:
                mx = m
            lp_sizes[len(lp)] = lp_sizes.get(len(lp), 0) + 1
            # Memory model: nodes that never reached stream-node-max-entries keep their
            # preallocation on a live server; the last one is the tail.
            if tail_lp is not None and tail_entries < STREAM_NODE_MAX_ENTRIES:
                lp_unfilled[tail_lp] = lp_unfilled.get(tail_lp, 0) + 1
            tail_lp, tail_entries = len(lp), entries
            if node_ids is not None:
                node_ids.append(node_key)
                if len(node_ids) > MAX_KEPT_IDS:
                    node_ids = None
        length = r.length("stream length")
        if length > _COUNT_MAX:
            raise self.corrupt(f"stream length {length} is impossible")
        last_id = _id_text(r.length("stream last id"), r.length("stream last id"))
        first_id = max_deleted = None
        entries_added = None
        if t >= C.RDB_TYPE_STREAM_LISTPACKS_2:
            first_id = _id_text(r.length("stream first id"), r.length("stream first id"))
            max_deleted = _id_text(r.length("stream max deleted id"),
                                   r.length("stream max deleted id"))
            entries_added = r.length("stream entries added")
            if entries_added > _LONG_MAX:
                raise self.corrupt(f"stream entries-added counter {entries_added} is out of range")
        n_groups = r.length("stream group count")
        self.check_count(n_groups, "stream groups", 4)
        groups = []
        consumers_total = 0
        consumers_kept = 0
        pending_total = 0
        info = self.info
        for _ in range(n_groups):
            name = r.string("consumer group name")
            delivered = _id_text(r.length("group last delivered id"),
                                 r.length("group last delivered id"))
            entries_read = None
            if t >= C.RDB_TYPE_STREAM_LISTPACKS_2:
                entries_read = r.length("group entries read")
                if entries_read >= 1 << 63:   # SCG_INVALID_ENTRIES_READ (-1) as unsigned
                    entries_read = None
            pel = r.length("group pending count")
            self.check_count(pel, "group pending list", 17)
            kept = info.keep("stream_groups", len(groups), MAX_KEPT_GROUPS)
            pel_ids: list[bytes] | None = [] if pel <= MAX_KEPT_IDS and kept else None
            for _ in range(pel):
                rid = r.read(16, "pending entry id")
                r.skip(8, "pending entry delivery time")
                r.length("pending entry delivery count")
                if pel_ids is not None:
                    pel_ids.append(rid)
            n_cons = r.length("group consumer count")
            self.check_count(n_cons, "group consumers", 10)
            consumers = []
            for _ in range(n_cons):
                cname = r.string("consumer name")
                seen = r.unpack(I64, "consumer seen time")
                active = None
                if t >= C.RDB_TYPE_STREAM_LISTPACKS_3:
                    active = r.unpack(I64, "consumer active time")
                cpel = r.length("consumer pending count")
                self.check_count(cpel, "consumer pending list", 16)
                keep_c = kept and info.keep("stream_consumers", consumers_kept,
                                            MAX_KEPT_CONSUMERS)
                cids: list[bytes] | None = [] if cpel <= MAX_KEPT_IDS and keep_c else None
                for _ in range(cpel):
                    rid = r.read(16, "consumer pending id")
                    if cids is not None:
                        cids.append(rid)
                if keep_c:
                    consumers_kept += 1
                    consumers.append({"name": cname, "seen_ms": seen, "active_ms": active,
                                      "pending": cpel, "pending_ids": cids})
            consumers_total += n_cons
            pending_total += pel
            if kept:
                groups.append({"name": name, "last_delivered_id": delivered,
                               "entries_read": entries_read, "pending": pel,
                               "pending_ids": pel_ids, "consumers": consumers,
                               "consumer_count": n_cons})
            else:   # counted in the stream's totals; its consumers are not kept either
                info.cut["stream_consumers"] = info.cut.get("stream_consumers", 0) + n_cons
        if t >= C.RDB_TYPE_STREAM_LISTPACKS_4:
            self.skip_stream_idmp()
        rec.length = length
        rec.max_elem = mx
        rec.nodes = lp_sizes
        rec.encoding = "stream"
        if self.info.version_tuple()[:2] == (5, 0) and self.info.server == "redis":
            rec.encoding = "unknown"     # Redis 5.0's OBJECT ENCODING did not name streams
        rec.extra = {"listpacks": n_lp, "node_ids": node_ids, "last_id": last_id,
                     "first_id": first_id, "max_deleted_id": max_deleted,
                     "entries_added": entries_added, "groups": groups, "group_count": n_groups,
                     "consumers": consumers_total, "pending": pending_total,
                     "tail_lp_bytes": tail_lp, "lp_unfilled": lp_unfilled}

    def skip_stream_idmp(self) -> None:
        """Redis 8.6 stream IDMP trailer (type 26), skipped."""
        r = self.r
        r.length("stream idmp duration")
        r.length("stream idmp max entries")
        producers = r.length("stream idmp producers")
        self.check_count(producers, "stream idmp producers", 2)
        for _ in range(producers):
            r.skip_string("stream idmp producer id")
            count = r.length("stream idmp iid count")
            self.check_count(count, "stream idmp iids", 3)
            for _ in range(count):
                r.skip_string("stream idmp iid")
                r.length("stream idmp id")
                r.length("stream idmp id")
        r.length("stream idmp iids added")
        r.length("stream idmp duplicates")

    def v_module(self, rec: KeyRecord) -> None:
        r = self.r
        module_id = r.length("module id")
        name, encver = module_type_name(module_id)
        reader = reader_for(name, encver)
        try:
            items = self.skip_module_opcodes(f"module {name} value",
                                             None if reader is None else reader.feed)
            fields = None if reader is None else reader.finish()
        except ModuleFormatError as e:   # what the module's own loader refuses
            raise self.corrupt(str(e)) from None
        rec.length = 1 if fields is None else fields["length"]
        rec.max_elem = 0 if fields is None else fields["max_elem"]
        rec.encoding = name
        rec.extra = {"module": name, "encver": encver, "items": items, "fields": fields}


def _listpack_entries(blob: bytes) -> list:
    """listpack_values with a bound: the few callers that decode entries one by one (stream
    nodes, hash field-TTL triplets) would hold ~40 bytes per entry, so a hostile blob of
    millions of one-byte entries is refused (counted first, without decoding) instead."""
    if len(blob) > 1 << 20:
        n, _ = listpack_scan(blob)
        if n > MAX_DECODED_ENTRIES:
            raise BlobError(f"listpack of {n} entries is more than rdbscan decodes entry by "
                            f"entry ({MAX_DECODED_ENTRIES})")
    return listpack_values(blob)


def _stream_node_max(lp: bytes) -> tuple[int, int]:
    """(longest field or value among the live entries, entries ever added: live + deleted)
    of one stream node listpack.  Counts read from the listpack must be non-negative
    integers: a negative one would walk backwards (an endless loop on hostile input)."""
    v = _listpack_entries(lp)
    if len(v) < 4:
        raise BlobError(f"stream node listpack has {len(v)} entries, fewer than its master entry")
    nf = v[2]
    if not isinstance(nf, int) or nf < 0 or 3 + nf >= len(v):
        raise BlobError(f"stream node master entry has an invalid field count {nf!r}")
    master = v[3:3 + nf]
    if v[3 + nf] != 0:
        raise BlobError("stream node master entry is not terminated by 0")
    i = 4 + nf
    end = len(v)
    mx = 0
    master_used = False
    while i < end:
        flags = v[i]
        if not isinstance(flags, int):
            raise BlobError("stream entry flags are not an integer")
        i += 3
        if flags & STREAM_ITEM_FLAG_SAMEFIELDS:
            items = v[i:i + nf]
            i += nf
            if not flags & STREAM_ITEM_FLAG_DELETED:
                master_used = True
        else:
            k = v[i] if i < end else None
            if not isinstance(k, int) or k < 0:
                raise BlobError(f"stream entry has an invalid field count {k!r}")
            items = v[i + 1:i + 1 + 2 * k]
            i += 1 + 2 * k
        i += 1  # lp-count
        if not flags & STREAM_ITEM_FLAG_DELETED:
            for x in items:
                ln = len(x) if isinstance(x, bytes) else int_text_len(x)
                if ln > mx:
                    mx = ln
    if i != end:
        raise BlobError("stream node entries do not line up with the listpack")
    if master_used:
        for x in master:
            ln = len(x) if isinstance(x, bytes) else int_text_len(x)
            if ln > mx:
                mx = ln
    if not isinstance(v[0], int) or not isinstance(v[1], int):
        raise BlobError("stream node master entry counts are not integers")
    return mx, v[0] + v[1]


def _library_name(code: bytes) -> str:
    """'#!lua name=mylib ...' -> 'mylib' (the FUNCTION2 payload is the library source)."""
    first = code.split(b"\n", 1)[0].decode("utf-8", "backslashreplace")
    m = re.search(r"name=(\S+)", first)
    return m.group(1) if m else first[:64]


def parse(stream, info: DumpInfo, *, size: int | None = None, verify_crc: bool = True,
          initial: bytes = b"", skip_bad: bool = False, drain_tail: bool = True,
          tail_peek: int = TRAILING_HEAD, tail_ready=None,
          sink=None, quantum: int = 8) -> Iterator[KeyRecord | None]:
    """Parse an RDB byte stream, yielding one KeyRecord per key and filling `info`.

    `sink` (a compiled `_speedups.KeyColumns`, see rows.RowBuilder.sink) takes the rows of
    strings and single-blob values directly: those keys are not yielded as KeyRecords, and
    None is yielded after each run of them so the caller can take a full batch.

    Raises an RDBError subclass on damaged or unsupported input; the records yielded
    before the error stay valid.  With `skip_bad`, a value that is damaged inside but whose
    extent is known (a blob that does not decode) is left out and counted in
    `info.skipped_keys` instead.  With `drain_tail` and an unknown size, the bytes after the
    RDB are read and counted (`info.trailing_bytes`)."""
    reader = Reader(stream, size=size, crc=verify_crc, initial=initial)
    parser = _Parser(reader, info, skip_bad=skip_bad, drain_tail=drain_tail, sink=sink,
                     quantum=quantum, tail_peek=tail_peek, tail_ready=tail_ready)
    try:
        yield from parser.records()
    except RDBError as e:
        info.bytes_read = reader.tell()
        if e.key is None and parser.key is not None:
            e.key = parser.key
        if e.rdb_type is None:
            e.rdb_type = parser.rdb_type
        raise
    except (IndexError, ValueError) as e:  # a short read inside a primitive
        info.bytes_read = reader.tell()
        if reader.eof:
            raise TruncatedError("unexpected end of input", reader.tell(), key=parser.key,
                                 rdb_type=parser.rdb_type) from e
        raise CorruptError(f"malformed data ({e})", reader.tell(), key=parser.key,
                           rdb_type=parser.rdb_type) from e
