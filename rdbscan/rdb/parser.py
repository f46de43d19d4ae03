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
from . import blob_stream
from . import constants as C
from .array_values import ArrayValues
from .backend import LZFStream, lzf_whole
from .collection_values import CollectionValues
from .errors import CorruptError, NotRDBError, RDBError, TruncatedError, UnsupportedError
from .hash_ttl_values import FieldTTLValues
from .long_names import LongName
from .module_values import ModuleValues
from .modules import module_type_name
from .reader import I32, I64, U64, LZFError, Reader
from .records import KeyRecord
from .stream_values import StreamValues
from .template_values import TemplateValues
from .values import COUNT_MAX, LONG_MAX


def embedded(table: bytes, klen: int, vlen: int, ttl: bool) -> str:
    """A string's encoding by kv.embed_table (the compiled record loop reads it the same way)."""
    if (
        klen < EMBED_KEYS
        and vlen < EMBED_VALUES
        and table[(ttl * EMBED_KEYS + klen) * EMBED_VALUES + vlen]
    ):
        return "embstr"
    return "raw"


_DB_MAX = (1 << 31) - 1
TRAILING_HEAD = 64
MAX_SKIPPED_KEPT = 100
# What a dump holds beyond its keys is counted in full but kept only up to these bounds (a
# 7-20 MB file of repeated records reached 0.6-1.5 GB); DumpInfo.cut counts what was left out
# by kind, and the load says so (dumps.cut, a warning; docs/hostile-inputs.md).
MAX_KEPT_AUX = 1_000  # distinct aux field names
MAX_AUX_VALUE = 4_096  # characters of an aux field's value
# Bytes kept of strings that are not keys or values (aux fields, function sources, stream
# consumer names): the rest is read past, never held (docs/hostile-inputs.md).
HEAD_KEEP = 4 * MAX_AUX_VALUE
MAX_KEPT_FUNCTIONS = 1_000  # function libraries named
MAX_KEPT_MODULE_AUX = 1_000  # module aux records named
MAX_KEPT_SLOT_INFO = C.CLUSTER_SLOTS  # slot-info records (a real dump has one per slot)
MAX_KEPT_DBS = C.CLUSTER_SLOTS  # databases with RESIZEDB sizes


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
        self.position = 0  # bytes parsed so far (progress, compiled rows)
        self.trailing_bytes: int | None = None
        self.trailing_head = b""  # first bytes after the RDB (AOF tail, EOF mark)
        self.skipped_keys = 0  # keys left out by skip_bad
        self.skipped: list[str] = []  # the first few of them, described
        # Keys whose value reads but that a Redis server refuses to load (keys.invalid).
        self.invalid_keys = 0
        self.invalid: list[str] = []  # the first few of them, described
        # Counted but not kept (the MAX_KEPT_* bounds): {kind: how many were left out}.
        self.cut: dict[str, int] = {}
        # A version newer than rdbscan knows (read on: forward compatibility), else None:
        # the newest version of the dump's magic that rdbscan knows.
        self.newer_than: int | None = None
        # Redis 8.10 hash templates: {id: field count} (bounded), and what all of them hold.
        self.templates: dict[int, tuple[int, int]] = {}  # {id: (field count, longest name)}
        self.template_count = 0
        self.template_fields = 0
        self.template_name_lens: dict[int, int] = {}
        self.replication_commands = 0  # Valkey 9.2 opcode 242 (UPDATE): commands skipped
        self.key_meta_records = 0  # Redis RDB 13+ opcode 243 (KEY_META): module key metadata
        self.slot_info_records = 0  # every slot-info record (slot_info keeps a sample)
        self.slot_info_keys = 0  # the sum of their key counts
        self._version_key: tuple | None = None  # version_tuple's memo
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
            self._version_key, self._version = key, C.server_version(*key) or (7, 0)
        return self._version


class _Parser(
    CollectionValues, FieldTTLValues, StreamValues, ModuleValues, TemplateValues, ArrayValues
):
    def __init__(
        self,
        reader: Reader,
        info: DumpInfo,
        skip_bad: bool = False,
        drain_tail: bool = True,
        sink=None,
        quantum: int = 8,
        tail_peek: int = TRAILING_HEAD,
        tail_ready=None,
    ):
        self.r = reader
        self.sink = sink
        self.quantum = quantum  # the allocator's, for the servers whose embstr depends on it
        self.info = info
        self.key: bytes | None = None
        self.rdb_type: int | None = None
        self.skip_bad = skip_bad
        self.drain_tail = drain_tail
        self.tail_peek = tail_peek
        self.tail_ready = tail_ready
        self.bad: RDBError | None = None  # skip_bad: what is wrong with the current value

    # -- errors --------------------------------------------------------------------------

    # -- header --------------------------------------------------------------------------
    def header(self) -> None:
        r, info = self.r, self.info
        r.fill(9)
        head = r.buf[:9]
        if len(head) < 9 and (b"REDIS".startswith(head[:5]) or b"VALKEY".startswith(head[:6])):
            what = "the input is empty" if not head else f"the input has only {len(head)} bytes"
            raise TruncatedError(
                f"unexpected end of input: {what}, fewer than the 9 bytes of an RDB header", 0
            )
        if head[:5] == b"REDIS" and head[5:9].isdigit():
            info.magic = head[:9].decode()
            version = int(head[5:9])
        elif head[:6] == b"VALKEY" and head[6:9].isdigit():
            info.magic = head[:9].decode()
            info.valkey_magic = True
            version = int(head[6:9])
        else:
            shown = head[:9].decode("ascii", "backslashreplace")
            raise NotRDBError(
                f"not an RDB file: expected magic 'REDIS' + 4 digits or "
                f"'VALKEY' + 3 digits, found {shown!r}",
                0,
            )
        info.rdb_version = version
        if info.valkey_magic:
            newest = max(C.VALKEY_RDB_VERSIONS)
            if version < C.VALKEY_RDB_VERSION_MIN:
                raise CorruptError(
                    f"Valkey RDB version {version}: the VALKEY magic begins with version "
                    f"{C.VALKEY_RDB_VERSION_MIN} (Valkey 9.0); older Valkey writes REDIS0011",
                    0,
                )
        else:
            newest = C.RDB_VERSION_MAX
            if version < 1:
                raise CorruptError("RDB version 0: versions begin at 1", 0)
        if version > newest:
            # Newer than rdbscan: read on; the first record it does not know stops the read
            # as a limit of the tool, not damage (UnsupportedError; docs/rdb-format.md 1.4).
            info.newer_than = newest
        r.pos = 9

    # -- the record loop -----------------------------------------------------------------
    def records(self) -> Iterator[KeyRecord | None]:
        r, info = self.r, self.info
        self.header()
        valkey = info.valkey_magic
        version = info.rdb_version or 0
        db = 0
        expire = idle = freq = None
        start = None
        string_encoding = self.embstr_limit()
        embed = None  # Redis 8.6 / Valkey 8.1+: embstr by key, value and TTL (kv.py)
        handlers = self.handlers()
        sink = self.sink
        # a one-node quicklist 2 is a listpack-encoded list (Redis 7.2+); the server version
        # changes with aux fields only
        listpack_lists = info.version_tuple() >= (7, 2)
        long_name = LongName()  # a key name longer than KEY_KEEP, as it streams past
        scan_max = min(r.max_item, blob_stream.WHOLE_MAX)  # longer LZF blobs: streamed
        while True:
            if not info.keys:
                embed = self.embed_table()  # aux fields (the server version) precede the keys
            if (
                sink is not None
                and start is None
                and expire is None
                and idle is None
                and freq is None
            ):
                # The batch reads what it can itself (the compiled one: strings and
                # single-blob values, straight into its columns; the pure one: nothing).
                r.pos, taken = sink.scan(
                    r.buf,
                    r.pos,
                    r.base,
                    db,
                    string_encoding,
                    scan_max,
                    listpack_lists,
                    embed or None,
                )
                if taken:
                    info.keys += taken
                    info.position = r.base + r.pos
                    yield None
            off = r.base + r.pos
            if r.pos >= len(r.buf):
                if not r.fill(1):
                    raise TruncatedError(
                        "unexpected end of input: expected a record type or "
                        "opcode (the file has no EOF marker)",
                        off,
                    )
            t = r.buf[r.pos]
            r.pos += 1
            if t == C.RDB_OPCODE_HASH_TEMPLATE and start is None:
                # Redis 8.10 HASH_TEMPLATE / Valkey 9.2 UPDATE (decided by magic and version).
                if not valkey and version >= 15:
                    self.hash_template(off)
                    continue
                if valkey and version >= 81:
                    self.skip_update_command(off)
                    continue
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
                    raise self.unknown_record(t, off, version, valkey)
                self.rdb_type = t
                self.key = None
                buf, p = r.buf, r.pos
                if p < len(buf) and buf[p] < 0x40 and p + 1 + buf[p] <= len(buf):
                    # Fast path: a short raw key entirely in the buffer.
                    key = buf[p + 1 : p + 1 + buf[p]]
                    r.pos = p + 1 + buf[p]
                else:
                    try:
                        key = r.string("key name", long=long_name)
                    except LZFError as e:
                        e.rdb_type = t
                        self.recover(e)
                        key = b""
                rec = KeyRecord()
                if long_name.length:  # longer than KEY_KEEP: read as it streamed past
                    key = long_name.head
                    rec.long_key = (long_name.length, long_name.digest(), long_name.slot())
                    long_name = LongName()
                self.key = key
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
                        rec.encoding = embedded(
                            embed, rec.key_length, rec.length, expire is not None
                        )
                else:
                    rec.type = C.TYPE_NAMES[t]
                    h(rec)  # type: ignore[misc]  # every type id but strings has a handler here
                rec.end = r.base + r.pos
                if r.refused is not None:
                    # It reads, but a Redis server would refuse it: flag it (keys.invalid).
                    kind, message, offset = r.refused
                    r.refused = None
                    if self.bad is None:
                        rec.invalid = kind
                        info.invalid_keys += 1
                        if len(info.invalid) < MAX_SKIPPED_KEPT:
                            info.invalid.append(
                                CorruptError(message, offset, key=key, rdb_type=t).describe()
                            )
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
                    raise CorruptError(
                        f"database number {db} is out of range (Redis counts "
                        f"databases in a signed 32-bit int)",
                        off,
                    )
            elif t == C.RDB_OPCODE_RESIZEDB:
                keys = r.length("RESIZEDB db size")
                expires = r.length("RESIZEDB expires size")
                if max(keys, expires) > COUNT_MAX:
                    raise CorruptError(f"RESIZEDB claims {max(keys, expires)} keys", off)
                if db in info.resizedb or info.keep("databases", len(info.resizedb), MAX_KEPT_DBS):
                    info.resizedb[db] = (keys, expires)
            elif t == C.RDB_OPCODE_AUX:
                self.aux(off)
                listpack_lists = info.version_tuple() >= (7, 2)
            elif t == C.RDB_OPCODE_IDLE:
                start = off if start is None else start
                idle = r.length("LRU idle time")
                if idle > LONG_MAX:
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
                code, _ = r.string_head("function library", HEAD_KEEP)
                if info.keep("functions", len(info.functions), MAX_KEPT_FUNCTIONS):
                    info.functions.append(_library_name(code))
            elif t == C.RDB_OPCODE_FUNCTION_PRE_GA:
                fname, _ = r.string_head("function name", HEAD_KEEP)
                r.string_head("function engine", 0)
                if r.length("function description flag"):
                    r.string_head("function description", 0)
                r.skip_string("function code")
                if info.keep("functions", len(info.functions), MAX_KEPT_FUNCTIONS):
                    info.functions.append(fname.decode("utf-8", "backslashreplace"))
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
                    info.key_meta_records += 1
                    self.key_meta()
                else:
                    raise CorruptError(
                        f"opcode 243 (KEY_META) in an RDB version {version} file", off
                    )
            elif t == C.RDB_OPCODE_EOF:
                self.trailer()
                return
            else:  # pragma: no cover - every byte >= 0xF3 is handled above
                raise CorruptError(f"invalid opcode {t}", off)

    # -- opcodes -------------------------------------------------------------------------
    def aux(self, off: int) -> None:
        r, info = self.r, self.info
        name, name_len = r.string_head("aux field name", HEAD_KEEP)
        value, value_len = r.string_head("aux field value", HEAD_KEEP)
        k = name.decode("utf-8", "backslashreplace")
        v = value.decode("utf-8", "backslashreplace")
        if name_len > HEAD_KEEP:  # no server writes one: counted, not kept
            info.cut["aux"] = info.cut.get("aux", 0) + 1
            return
        if k == "slot-info":
            # Valkey 8 cluster mode: "<slot>,<keys>,<expires>" before each slot's keys; Valkey 9
            # adds ",<keys with volatile items>" (hash-field TTLs).  Valkey's rdbLoad reads the
            # first four with sscanf and ignores what follows (valkey src/rdb.c, "slot-info").
            try:
                nums = [int(x) for x in v.split(",")]
            except ValueError:
                nums = []
            if len(nums) < 3:
                raise self.corrupt(
                    f"aux slot-info value {v!r} is not 'slot,keys,expires[,keys with field TTLs]'",
                    off,
                )
            slot, keys, expires = nums[:3]
            self.check_slot_info(slot, keys, expires, off)
            if len(nums) > 3:
                if not 0 <= nums[3] <= COUNT_MAX:
                    raise self.corrupt(f"slot info claims {nums[3]} keys with field TTLs", off)
                info.slot_volatile_items[slot] = nums[3]  # one per slot: bounded
            self.add_slot_info(slot, keys, expires)
            info.slot_info_source = "aux-slot-info"
        elif k == "lua":
            info.aux["lua"] = str(int(info.aux.get("lua", "0")) + 1)
        elif k in info.aux or info.keep("aux", len(info.aux), MAX_KEPT_AUX):
            if len(v) > MAX_AUX_VALUE or value_len > HEAD_KEEP:
                info.cut["aux_value"] = info.cut.get("aux_value", 0) + 1
                v = v[:MAX_AUX_VALUE]
            info.aux[k] = v

    def add_slot_info(self, slot: int, keys: int, expires: int) -> None:
        info = self.info
        info.slot_info_records += 1
        info.slot_info_keys += keys
        if info.keep("slot_info", len(info.slot_info), MAX_KEPT_SLOT_INFO):
            info.slot_info.append((slot, keys, expires))

    def check_slot_info(
        self, slot: int, keys: int, expires: int, offset: int | None = None
    ) -> None:
        if not 0 <= slot < C.CLUSTER_SLOTS:
            raise self.corrupt(
                f"slot info for slot {slot}, outside 0..{C.CLUSTER_SLOTS - 1}", offset
            )
        if not (0 <= keys <= COUNT_MAX and 0 <= expires <= COUNT_MAX):
            raise self.corrupt(f"slot info claims {keys} keys and {expires} expires", offset)

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
        if (info.rdb_version or 0) >= 5:
            stored = r.unpack(U64, "CRC64 checksum")
            info.checksum_stored = stored
            info.checksum_computed = computed
            if stored == 0:
                info.checksum = "disabled"
            elif not r.crc_on:  # verify_crc=False: the bytes' checksum was never computed
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
        if (
            not self.drain_tail
            and r.size is None
            and not r.eof
            and len(r.buf) - r.pos <= self.tail_peek
            and self.tail_ready
            and self.tail_ready()
        ):
            r.fill(self.tail_peek + 1)  # does not wait: the input has ended or more is there
        info.trailing_head = r.buf[r.pos : r.pos + self.tail_peek]
        if r.size is not None:
            info.trailing_bytes = r.size - r.tell()
        elif self.drain_tail:
            info.trailing_bytes = r.drain()
        else:  # a live stream, not waited for: what arrived, None if more follows the peek
            seen = len(r.buf) - r.pos
            info.trailing_bytes = None if seen > self.tail_peek and not r.eof else seen
        info.complete = True

    # -- values --------------------------------------------------------------------------

    def embed_table(self) -> bytes:
        """kv.embed_table of a server that decides embstr by key length, value length and TTL
        (Redis 8.6, Valkey 8.1+), else b''."""
        layout = kv_layout(self.info.server, self.info.version_tuple())
        return embed_table(layout, self.quantum) if layout else b""

    def unknown_record(self, t: int, off: int, version: int, valkey: bool) -> RDBError:
        """The error for a type or opcode rdbscan cannot read: a limit of rdbscan (the dump is
        newer than it, or holds a type whose layout is not public), or damage (an id no server
        of the dump's version writes)."""
        info = self.info
        label = f"type {t}" if t != C.RDB_OPCODE_HASH_TEMPLATE else "opcode 242"
        if t == C.RDB_TYPE_MODULE_PRE_GA:
            return UnsupportedError(
                "value of type 6 (module, Redis 4.0 release-candidate format) "
                "cannot be skipped without its module; rdbscan cannot read "
                "past it",
                off,
                rdb_type=t,
            )
        if info.newer_than is not None:
            key = None
            if t < C.RDB_OPCODE_HASH_TEMPLATE:  # a type byte: its key name follows
                try:
                    key, _ = self.r.string_head("key name", 1024)
                except RDBError:
                    key = None
            return UnsupportedError(
                f"{label} is not one rdbscan knows: the dump's RDB version {version} is "
                f"newer than the {info.newer_than} rdbscan reads, so the read stops here "
                f"(the file is not damaged; a newer rdbscan reads on)",
                off,
                key=key,
                rdb_type=t,
            )
        if t == C.RDB_TYPE_GCRA and not valkey and version >= 14:
            return UnsupportedError(
                "type 33 (GCRA, a rate limiter of Redis builds with ENABLE_GCRA) has no "
                "published layout: rdbscan cannot read past it (the file is not damaged)",
                off,
                rdb_type=t,
            )
        first = C.TYPE_MIN_VERSION.get(t)
        if first is not None and not valkey and version < first:
            return CorruptError(
                f"{label} ({C.RDB_TYPE_LABELS[t]}) in an RDB version {version} file: Redis "
                f"writes it from RDB version {first}",
                off,
            )
        if t == C.RDB_OPCODE_HASH_TEMPLATE:
            return CorruptError(
                f"opcode 242 in an RDB version {version} file (Redis writes hash templates "
                f"from RDB version 15, Valkey replicated commands from VALKEY081)",
                off,
            )
        return CorruptError(f"invalid object type or opcode {t}", off)

    def handlers(self) -> dict:
        valkey = self.info.valkey_magic
        version = self.info.rdb_version or 0
        extra: dict = {}
        if valkey and version >= 81:
            extra[C.VALKEY_RDB_TYPE_PATH_HASH] = self.v_path_hash
        elif not valkey:
            if version >= 14:
                extra[C.RDB_TYPE_STREAM_LISTPACKS_5] = self.v_stream
                extra[C.RDB_TYPE_ARRAY] = self.v_array
            if version >= 15:
                for t in range(C.RDB_TYPE_HASH_TMPL_LP, C.RDB_TYPE_HASH_TMPL_ARRAY_REF + 1):
                    extra[t] = self.v_hash_template
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
            **extra,
        }


def _library_name(code: bytes) -> str:
    """'#!lua name=mylib ...' -> 'mylib' (the FUNCTION2 payload is the library source)."""
    first = code.split(b"\n", 1)[0].decode("utf-8", "backslashreplace")
    m = re.search(r"name=(\S+)", first)
    return m.group(1) if m else first[:64]


def parse(
    stream,
    info: DumpInfo,
    *,
    size: int | None = None,
    verify_crc: bool = True,
    initial: bytes = b"",
    skip_bad: bool = False,
    drain_tail: bool = True,
    tail_peek: int = TRAILING_HEAD,
    tail_ready=None,
    sink=None,
    quantum: int = 8,
) -> Iterator[KeyRecord | None]:
    """Parse an RDB byte stream, yielding one KeyRecord per key and filling `info`.

    `sink` (a batch of key rows, rows.RowBuilder.sink) is offered the records first: the keys
    its `scan` takes (the compiled batch's: strings and single-blob values; the pure-Python
    one takes none) are not yielded as KeyRecords, and None is yielded after each run of them
    so the caller can take a full batch.

    Raises an RDBError subclass on damaged or unsupported input; the records yielded
    before the error stay valid.  With `skip_bad`, a value that is damaged inside but whose
    extent is known (a blob that does not decode) is left out and counted in
    `info.skipped_keys` instead.  With `drain_tail` and an unknown size, the bytes after the
    RDB are read and counted (`info.trailing_bytes`)."""
    reader = Reader(
        stream,
        size=size,
        crc=verify_crc,
        initial=initial,
        lzf_decoder=LZFStream,
        lzf_whole=lzf_whole,
    )
    parser = _Parser(
        reader,
        info,
        skip_bad=skip_bad,
        drain_tail=drain_tail,
        sink=sink,
        quantum=quantum,
        tail_peek=tail_peek,
        tail_ready=tail_ready,
    )
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
            raise TruncatedError(
                "unexpected end of input", reader.tell(), key=parser.key, rdb_type=parser.rdb_type
            ) from e
        raise CorruptError(
            f"malformed data ({e})", reader.tell(), key=parser.key, rdb_type=parser.rdb_type
        ) from e
