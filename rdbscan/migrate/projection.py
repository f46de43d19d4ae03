"""What each key costs on another server: the encoding the target picks when it loads the
value (rdb.c rdbLoadObject, per server line: docs/migrate.md "Encodings on load") and the
target's memory profile (model/memory.py, model/kv.py) applied to it.

A `Projector` sits in the loader's path (db/rows.RowBuilder): every record the Python path
reads is projected from its KeyRecord, every row the compiled record loop wrote from the
batch's columns (strings and single-blob values: their figures are a handful of integers,
and dumps repeat them, so each distinct shape is estimated once per batch).  Its rows go to
table `key_projections` batch by batch: nothing per key is kept between batches.
"""

from __future__ import annotations

import struct
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..model.estimate import estimate
from ..model.kv import string_encoding
from ..rdb import constants as C
from ..rdb.blobs import LP_HEADER_AND_END, lp_string_entry_bytes
from . import servers as S
from .servers import Server

ZIPLIST_HEADER_AND_END = 11  # zlbytes, zltail, zllen, end mark
# A ziplist entry and the listpack entry it becomes have the same size for the short strings
# and small integers most entries are (prevlen + header against header + back-length), so a
# converted blob is the ziplist less its header difference.
ZIPLIST_TO_LISTPACK = ZIPLIST_HEADER_AND_END - LP_HEADER_AND_END

KEY_PROJECTION_ROWS_SCHEMA = pa.schema(
    [
        ("dump_id", pa.int32()),
        ("file_offset", pa.int64()),
        ("target_id", pa.uint8()),
        ("encoding_id", pa.uint8()),
        ("memory_bytes", pa.int64()),
    ]
)


class Shape:
    """The figures of a compiled row (a string or a single-blob value) the estimate needs,
    shaped like a KeyRecord."""

    __slots__ = (
        "blob_bytes",
        "elems",
        "encoding",
        "expire_ms",
        "field_ttls",
        "int_members",
        "key_length",
        "length",
        "listpack_bytes",
        "max_elem",
        "module",
        "nodes",
        "rdb_type",
        "stream",
        "type",
        "vals",
    )

    def __init__(self, type_name, encoding, rdb_type, key_length, length, blob, ttl, longest=0):
        self.type = type_name
        self.encoding = encoding
        self.rdb_type = rdb_type
        self.key_length = key_length
        self.length = length
        self.blob_bytes = blob
        self.expire_ms = 1 if ttl else None
        self.elems = self.vals = self.field_ttls = self.stream = self.module = None
        self.int_members = self.listpack_bytes = None
        self.max_elem = longest
        self.nodes = {blob: 1} if encoding == "quicklist" else None


def _lp_bytes(hists: list[dict[int, int] | None], extra_entries: int = 0) -> int:
    """A listpack holding strings of these length histograms (and `extra_entries` small
    integers, 2 bytes each: zset scores)."""
    size = LP_HEADER_AND_END + 2 * extra_entries
    for h in hists:
        for ln, cnt in (h or {}).items():
            size += cnt * lp_string_entry_bytes(ln)
    return size


def _intset_bytes(n: int, longest: int) -> int:
    """An intset of n members whose longest text is `longest` characters."""
    width = 2 if longest <= 4 else (4 if longest <= 9 else 8)
    return 8 + width * n


class _String:
    """A string in another encoding: what the estimate reads of it (cheaper than a copy)."""

    __slots__ = ("encoding", "expire_ms", "key_length", "length", "module", "type")

    def __init__(self, rec, encoding: str):
        self.type = "string"
        self.encoding = encoding
        self.length = rec.length
        self.key_length = rec.key_length
        self.expire_ms = rec.expire_ms
        self.module = None


class _Twin:
    """A record in another encoding: the figures on_load changed, every other one read from the
    record itself (cheaper than a copy of its slots, on a path taken per converted key)."""

    def __init__(self, rec, figures: dict[str, Any]):
        self.__dict__.update(figures)
        self._rec = rec

    def __getattr__(self, name: str) -> Any:  # what on_load left as it was
        if name.startswith("__"):  # copy.copy's and pickle's probes: none of the record's
            raise AttributeError(name)
        return getattr(self.__dict__["_rec"], name)

    def __copy__(self) -> _Twin:  # memory.new_value_cost copies what it estimates
        twin = object.__new__(_Twin)
        twin.__dict__.update(self.__dict__)
        return twin


def _twin(rec, encoding: str, **figures):
    figures["encoding"] = encoding
    return _Twin(rec, figures)


def _list_nodes(entries_bytes: int) -> dict[int, int]:
    """Quicklist nodes of 8 KiB listpacks holding this many bytes of entries."""
    per = S.LIST_NODE_BYTES - LP_HEADER_AND_END
    full, rest = divmod(max(entries_bytes, 0), per)
    nodes: dict[int, int] = {}
    if full:
        nodes[S.LIST_NODE_BYTES] = full
    if rest or not full:
        nodes[rest + LP_HEADER_AND_END] = nodes.get(rest + LP_HEADER_AND_END, 0) + 1
    return nodes


def on_load(rec, server: Server):
    """The record as the target holds it after loading it: `rec` itself when the target keeps
    the writer's encoding, else a copy with the target's encoding and sizes."""
    typ, enc = rec.type, rec.encoding
    lp = server.listpack
    if typ == "string":
        if enc == "int":
            return rec
        n = rec.length
        if server.profile.kv:
            want = string_encoding(rec.key_length, n, rec.expire_ms is not None, server.profile)
        else:
            want = "embstr" if n <= server.embstr_limit else "raw"
        return rec if want == enc else _String(rec, want)
    if typ == "stream":  # Redis 5.0's OBJECT ENCODING has no name for a stream
        want = "unknown" if server.family == "redis" and server.version < (6, 0) else "stream"
        return rec if want == enc else _twin(rec, want)
    blob = rec.blob_bytes
    if enc in ("ziplist", "zipmap"):
        return _from_ziplist(rec, server, typ, enc, blob, lp)
    if typ == "list" or enc == "linkedlist":
        return _list_on_load(rec, server, typ, enc, blob, lp)
    return _collection_on_load(rec, server, typ, enc, blob, lp)


def _from_ziplist(rec, server: Server, typ: str, enc: str, blob: int, lp: bool):
    """A ziplist or zipmap as the target holds it: a list becomes a listpack or a quicklist
    node, a zipmap is converted entry by entry, a hash or zset ziplist becomes a listpack
    (4 bytes shorter) on a server with listpacks."""
    if typ == "list":
        if not server.quicklist:
            return rec
        size = blob - ZIPLIST_TO_LISTPACK if lp else blob
        if server.listpack_lists and size <= S.LIST_NODE_BYTES:
            return _twin(rec, "listpack", blob_bytes=size)
        return _twin(rec, "quicklist", nodes={size: 1}, blob_bytes=0)
    if enc == "zipmap":  # converted entry by entry (rdbLoadObject RDB_TYPE_HASH_ZIPMAP)
        size = blob - 2 + 2 * rec.length  # about: zipmap lengths are 1 byte, + 1 free byte
        return _twin(rec, "listpack" if lp else "ziplist", blob_bytes=size)
    return _twin(rec, "listpack", blob_bytes=blob - ZIPLIST_TO_LISTPACK) if lp else rec


def _list_on_load(rec, server: Server, typ: str, enc: str, blob: int, lp: bool):
    """A quicklist, linkedlist or listpack list as the target holds it: one small node
    becomes a listpack where the target has listpack lists, a quicklist's ziplist nodes
    become listpack nodes, a linkedlist becomes quicklist nodes."""
    if enc == "quicklist" and typ == "list":
        nodes = rec.nodes or {}
        ziplist_nodes = rec.rdb_type == C.RDB_TYPE_LIST_QUICKLIST and lp
        if ziplist_nodes:
            nodes = {nb - ZIPLIST_TO_LISTPACK: c for nb, c in nodes.items()}
        if server.listpack_lists and sum(nodes.values()) == 1:
            (nb,) = nodes
            if nb <= S.LIST_NODE_BYTES:
                return _twin(rec, "listpack", blob_bytes=nb, nodes=None)
        if not server.quicklist:
            return rec
        return _twin(rec, "quicklist", nodes=nodes) if ziplist_nodes else rec
    if enc == "linkedlist":
        entries = _lp_bytes([rec.elems]) - LP_HEADER_AND_END
        if server.quicklist:
            nodes = _list_nodes(entries)
            if server.listpack_lists and sum(nodes.values()) == 1:
                return _twin(rec, "listpack", blob_bytes=next(iter(nodes)), elems=None)
            if not lp:
                nodes = {nb + ZIPLIST_TO_LISTPACK: c for nb, c in nodes.items()}
            return _twin(rec, "quicklist", nodes=nodes, elems=None)
        return rec
    if enc == "listpack" and typ == "list" and not server.listpack_lists:
        nb = blob if lp else blob + ZIPLIST_TO_LISTPACK
        return _twin(rec, "quicklist", nodes={nb: 1}, blob_bytes=0)
    return rec


def _collection_on_load(rec, server: Server, typ: str, enc: str, blob: int, lp: bool):
    """A set, sorted set or hash as the target holds it: the target's small encodings
    (intset, listpack or ziplist, listpackex) where the entries fit, its large ones else."""
    if enc == "listpack" and typ in ("hash", "zset") and not lp:  # a copy onto a pre-7.0 server
        return _twin(rec, "ziplist", blob_bytes=blob + ZIPLIST_TO_LISTPACK)
    if enc == "hashtable" and typ == "set":
        n, longest = rec.length, rec.max_elem
        if rec.int_members == n and n <= S.SET_INTSET_ENTRIES:
            return _twin(rec, "intset", blob_bytes=_intset_bytes(n, longest), elems=None)
        if server.listpack_sets and n <= S.SET_LP_ENTRIES and longest <= S.SET_LP_VALUE:
            return _twin(rec, "listpack", blob_bytes=_lp_bytes([rec.elems]), elems=None)
        return rec
    if enc == "listpack" and typ == "set" and not server.listpack_sets:
        return _twin(rec, "hashtable", elems={max(rec.max_elem, 1): rec.length})
    if enc in ("skiplist", "btree") and typ == "zset":
        if rec.length <= S.ZSET_ENTRIES and rec.max_elem <= S.ZSET_VALUE:
            size = _lp_bytes([rec.elems], rec.length)
            if not lp:
                size += ZIPLIST_TO_LISTPACK
            return _twin(rec, "listpack" if lp else "ziplist", blob_bytes=size, elems=None)
        if server.btree_zsets and enc == "skiplist":
            return _twin(rec, "btree")
        if not server.btree_zsets and enc == "btree":
            return _twin(rec, "skiplist")
        return rec
    if enc == "hashtable" and typ == "hash":
        if rec.length <= S.HASH_ENTRIES and rec.max_elem <= S.HASH_VALUE:
            if rec.field_ttls is not None and rec.field_ttls.fields_with_ttl:
                if server.field_ttls != "redis":
                    return rec  # Valkey 9 keeps hashes with field TTLs in a hashtable
                size = _lp_bytes([rec.elems, rec.vals], rec.length)
                return _twin(rec, "listpackex", blob_bytes=size, elems=None, vals=None)
            size = _lp_bytes([rec.elems, rec.vals])
            if not lp:
                size += ZIPLIST_TO_LISTPACK
            return _twin(rec, "listpack" if lp else "ziplist", blob_bytes=size)
        return rec
    if enc == "listpackex" and server.field_ttls != "redis":
        return rec  # refused by the rules (foreign types); estimated as written
    return rec


def project(rec, server: Server) -> tuple[str, int]:
    """(encoding on the target, MEMORY USAGE there) of one record."""
    twin = on_load(rec, server)
    enc = twin.encoding
    if twin.type == "module":
        enc = "module"
    return enc, estimate(twin, server.profile)


def encoding_code(enc: str) -> int:
    """encoding_id of a projected encoding (the view key_projections names it)."""
    return C.ENCODING_IDS.get(enc, C.ENCODING_IDS["unknown"])


SHAPE_CACHE = 200_000  # value shapes whose projections are remembered across batches

# The compiled rows whose estimate on any target is a key part, from the key length and TTL
# alone, plus a value part that does not depend on them: the collections of one blob (or one
# quicklist node).  estimate() adds key_cost(key length) (or the kv object holding the key and
# its expiry) to the value's own cost, and on_load picks their encoding from the value alone.
# Strings are not (a kv server embeds a short value with its key), nor anything else.
BLOB_TYPES = ("list", "set", "zset", "hash")
BLOB_ENCODINGS = ("listpack", "ziplist", "intset", "zipmap", "listpackex", "quicklist")
# The value figures beyond the blob's size that on_load reads for a blob encoding: a zipmap's
# length (its entries grow by 2 bytes as listpack entries), a listpack set's length and longest
# member (a server before 7.2 makes it a hashtable).  The others are projected by size alone.
VALUE_FIGURES = {("hash", "zipmap"): (True, False), ("set", "listpack"): (True, True)}
# The value of the key part's reference (any value would do: it cancels out).
REFERENCE_VALUE = (1, 64, 1)  # length, blob bytes, longest element

# What a compiled row is, for its projection (_row_kinds)
WHOLE, BLOB, BLOB_LENGTH, BLOB_LENGTH_LONGEST = 0, 1, 2, 3


def _row_kinds(type_names: list, encoding_names: list) -> pa.Array:
    """[type code * len(encoding_names) + encoding code] -> WHOLE (projected by its whole
    shape) or BLOB* (a key part plus a value part, Projector.add_compiled) with the value
    figures the value part reads."""
    kinds = []
    for tn in type_names:
        for en in encoding_names:
            kind = WHOLE
            if tn in BLOB_TYPES and en in BLOB_ENCODINGS:
                length, longest = VALUE_FIGURES.get((tn, en), (False, False))
                kind = BLOB_LENGTH_LONGEST if longest else BLOB_LENGTH if length else BLOB
            kinds.append(kind)
    return pa.array(kinds, pa.uint8())


def _group_ids(columns: dict[str, Any]) -> tuple[pa.Array, dict[str, list]]:
    """(each row's group, {column: its value per group}) of rows grouped by all `columns`
    (one hash pass; the rows' order is kept)."""
    n = len(next(iter(columns.values())))
    table = pa.table({**columns, "_row": pa.array(range(n), pa.int32())})
    groups = table.group_by(list(columns), use_threads=False).aggregate([("_row", "list")])
    rows = groups["_row_list"].combine_chunks()
    # the rows listed group by group; sorted back into row order, the group of each row
    ids = pc.take(pc.list_parent_indices(rows), pc.sort_indices(pc.list_flatten(rows)))
    return ids, groups.select(list(columns)).to_pydict()


def _projected_rows(cols: dict[str, Any]) -> dict[str, pa.Array] | None:
    """The rows of a compiled batch that the projector reads (blob_bytes not -1), as one
    array per figure (t type, e encoding, r rdb type, k key length, l length, b blob bytes,
    m longest element, x has a TTL), over the batch's buffers without a copy until the
    filter; None when there are none."""
    n = cols["n"]
    if not n or "blob_bytes" not in cols:
        return None
    buf = pa.py_buffer

    def column(kind: pa.DataType, name: str) -> pa.Array:
        return pa.Array.from_buffers(kind, n, [None, buf(cols[name])])

    offsets = pa.Array.from_buffers(pa.int32(), n + 1, [None, buf(cols["key_offsets"])])
    exp_data, exp_valid = cols["expire_at_ms"]
    ttl = pa.Array.from_buffers(pa.int64(), n, [buf(exp_valid), buf(exp_data)]).is_valid()
    table = pa.table(
        {
            "file_offset": column(pa.int64(), "file_offset"),
            "t": column(pa.uint16(), "type"),
            "e": column(pa.uint16(), "encoding"),
            "r": column(pa.uint8(), "rdb_type"),
            "k": pc.subtract(offsets[1:], offsets[:-1]),
            "l": column(pa.int64(), "length"),
            "b": column(pa.int64(), "blob_bytes"),
            "m": column(pa.int64(), "max_elem_bytes"),
            "x": ttl,
        }
    )
    table = table.filter(pc.not_equal(table["b"], -1))
    if not table.num_rows:
        return None
    return {name: table[name].combine_chunks() for name in table.column_names}


class Projector:
    """Rows of table key_projections for one dump and several targets, batch by batch."""

    def __init__(self, dump_id: int, servers: list[Server]):
        self.dump_id = dump_id
        self.servers = servers
        self.names = [s.name for s in servers]
        # {value shape: ((encoding code, memory) per target)} and {key shape: (memory per
        # target)}: dumps repeat their shapes (_value_part, _key_part)
        self.cache: dict[tuple, tuple] = {}
        self.key_cache: dict[tuple, tuple] = {}
        self.targets_written = False
        self.reset()

    def reset(self) -> None:
        self.db: list[int] = []
        self.offset: list[int] = []
        self.enc: list[list[int]] = [[] for _ in self.servers]
        self.mem: list[list[int]] = [[] for _ in self.servers]
        self.compiled: list[pa.Table] = []

    def add_record(self, rec) -> None:
        """A record the Python path read (every record when the compiled core is absent)."""
        self.db.append(rec.db)
        self.offset.append(rec.offset)
        for i, server in enumerate(self.servers):
            enc, mem = project(rec, server)
            self.enc[i].append(encoding_code(enc))
            self.mem[i].append(mem)

    def add_compiled(self, cols: dict[str, Any], type_names: list, encoding_names: list) -> None:
        """The rows the compiled record loop wrote into a batch (KeyColumns.take()): those
        whose blob_bytes is not -1.  A row's projection is its value part (each distinct value
        shape projected once on every target, and remembered for the next batches) plus, for
        the collections of one blob, its key part (each distinct type, encoding, key length
        and TTL once): project() of a shape, computed per distinct shape, never per row.  The
        steps are per batch (Arrow compute over the whole batch), none per row."""
        c = _projected_rows(cols)
        if c is None:
            return
        code = pc.add(
            pc.multiply(c["t"].cast(pa.int32()), len(encoding_names)), c["e"].cast(pa.int32())
        )
        kind = pc.take(_row_kinds(type_names, encoding_names), code)
        whole = pc.equal(kind, WHOLE)
        blob_rows = pc.invert(whole)
        if len(self.cache) >= SHAPE_CACHE or len(self.key_cache) >= SHAPE_CACHE:
            self.cache.clear()
            self.key_cache.clear()
        per_row = self._value_parts(c, kind, whole, type_names, encoding_names)
        key_rows = None
        if pc.any(blob_rows).as_py():
            key_rows = self._key_parts(c, blob_rows, type_names, encoding_names)
        columns = {"file_offset": c["file_offset"]}
        for i in range(len(self.servers)):
            columns[f"enc{i}"] = pc.list_element(per_row, 2 * i).cast(pa.uint8())
            mem = pc.list_element(per_row, 2 * i + 1)
            if key_rows is not None:
                mem = pc.add(mem, pc.list_element(key_rows, i))
            columns[f"mem{i}"] = mem
        self.compiled.append(pa.table(columns))

    def _value_parts(self, c: dict, kind, whole, type_names: list, encoding_names: list):
        """Per row of the batch, (encoding, memory) on each target of its value shape: every
        figure of a whole row; of a blob row the figures its value part reads (the others 0),
        with key length 0 and no TTL.  Each shape is projected once (self.cache)."""
        zero = pa.scalar(0, pa.int64())
        value_ids, values = _group_ids(
            {
                "t": c["t"],
                "e": c["e"],
                "r": c["r"],
                "k": pc.if_else(whole, c["k"], pa.scalar(0, pa.int32())),
                "l": pc.if_else(pc.or_(whole, pc.greater_equal(kind, BLOB_LENGTH)), c["l"], zero),
                "b": c["b"],
                "m": pc.if_else(pc.or_(whole, pc.equal(kind, BLOB_LENGTH_LONGEST)), c["m"], zero),
                "x": pc.and_(whole, c["x"]),
            }
        )
        servers = self.servers
        cache = self.cache
        get = cache.get

        def value_part(shape_key: tuple) -> tuple:
            st, se, sr, sk, sl, sb, sm, sx = shape_key
            shape = Shape(type_names[st], encoding_names[se], sr, sk, sl, sb, sx, sm)
            got = cache[shape_key] = tuple(
                v
                for en, me in (project(shape, s) for s in servers)
                for v in (encoding_code(en), me)
            )
            return got

        names = ("t", "e", "r", "k", "l", "b", "m", "x")
        flat = [v for sk in zip(*(values[f] for f in names)) for v in (get(sk) or value_part(sk))]
        # per value shape: (encoding, memory) of each target, then per row through its shape
        per_value = pa.FixedSizeListArray.from_arrays(pa.array(flat, pa.int64()), 2 * len(servers))
        return pc.take(per_value, value_ids)

    def _key_parts(self, c: dict, blob_rows, type_names: list, encoding_names: list):
        """Per row of the batch, the memory of the key part of a blob row on each target: its
        projection with the reference value less that value's projection under key length 0
        and no TTL (of a whole row: 0).  Each key shape is projected once (self.key_cache)."""
        key_ids, keys = _group_ids(
            {
                "t": pc.if_else(blob_rows, c["t"], pa.scalar(0, pa.uint16())),
                "e": pc.if_else(blob_rows, c["e"], pa.scalar(0, pa.uint16())),
                "r": pc.if_else(blob_rows, c["r"], pa.scalar(0, pa.uint8())),
                "k": pc.if_else(blob_rows, c["k"], pa.scalar(-1, pa.int32())),
                "x": pc.and_(blob_rows, c["x"]),
            }
        )
        servers = self.servers
        key_cache = self.key_cache
        kget = key_cache.get
        ref_l, ref_b, ref_m = REFERENCE_VALUE

        def key_part(shape_key: tuple) -> tuple:
            st, se, sr, sk, sx = shape_key
            if sk < 0:
                return (0,) * len(servers)
            tn, en = type_names[st], encoding_names[se]
            with_key = Shape(tn, en, sr, sk, ref_l, ref_b, sx, ref_m)
            without = Shape(tn, en, sr, 0, ref_l, ref_b, False, ref_m)
            got = key_cache[shape_key] = tuple(
                project(with_key, s)[1] - project(without, s)[1] for s in servers
            )
            return got

        kflat = [
            v
            for sk in zip(*(keys[f] for f in ("t", "e", "r", "k", "x")))
            for v in (kget(sk) or key_part(sk))
        ]
        per_key = pa.FixedSizeListArray.from_arrays(pa.array(kflat, pa.int64()), len(servers))
        return pc.take(per_key, key_ids)

    def take(self) -> dict[str, pa.Table]:
        """The batch's rows of key_projection_rows (one per key and target), then empty; the
        first batch also gives the dump's projection_targets rows."""
        out: dict[str, pa.Table] = {}
        if not self.targets_written:
            self.targets_written = True
            out["projection_targets"] = pa.table(
                {
                    "dump_id": pa.array([self.dump_id] * len(self.servers), pa.int32()),
                    "target_id": pa.array(range(len(self.servers)), pa.uint8()),
                    "target": pa.array(self.names, pa.string()),
                    "profile": pa.array([s.profile.name for s in self.servers], pa.string()),
                }
            )
        parts: list[pa.Table] = []
        for i in range(len(self.servers)):
            columns = []
            if self.db:
                columns.append(
                    [
                        pa.array(self.offset, pa.int64()),
                        pa.array(self.enc[i], pa.uint8()),
                        pa.array(self.mem[i], pa.int64()),
                    ]
                )
            for t in self.compiled:
                columns.append([t["file_offset"], t[f"enc{i}"], t[f"mem{i}"]])
            for offset, codes, mem in columns:
                m = len(offset)
                parts.append(
                    pa.table(
                        [
                            _fill(pa.int32(), "<i", self.dump_id, m),
                            offset,
                            _fill(pa.uint8(), "<B", i, m),
                            codes,
                            mem,
                        ],
                        schema=KEY_PROJECTION_ROWS_SCHEMA,
                    )
                )
        self.reset()
        if parts:
            out["key_projection_rows"] = pa.concat_tables(parts)
        return out


def _fill(kind: pa.DataType, fmt: str, value: int, m: int) -> pa.Array:
    """m copies of one integer, without a Python object per row."""
    return pa.Array.from_buffers(kind, m, [None, pa.py_buffer(struct.pack(fmt, value) * m)])
