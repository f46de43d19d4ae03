"""Lists, sets, sorted sets and hashes: hashtable-encoded elements, single blobs and quicklists
(docs/rdb-format.md sections 4 and 5.1-5.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import constants as C
from .backend import (
    listpack_scan,
    listpack_stream_scan,
    skip_elements,
    ziplist_scan,
    ziplist_stream_scan,
)
from .blob_stream import intset_stream_scan, zipmap_stream_scan
from .blobs import LP_HEADER_AND_END, intset_scan, lp_string_entry_bytes, zipmap_scan
from .elements import LAYOUT_PAIR, LAYOUT_STR, LAYOUT_ZSET_BINARY, LAYOUT_ZSET_TEXT
from .errors import BlobError, BlobRefused
from .reader import LZFError
from .values import ValueReader

if TYPE_CHECKING:
    from .records import KeyRecord

# The walker of a blob longer than blob_stream.WHOLE_MAX, by the walker of a whole one.
_STREAMED = {
    listpack_scan: listpack_stream_scan,
    ziplist_scan: ziplist_stream_scan,
    intset_scan: intset_stream_scan,
    zipmap_scan: zipmap_stream_scan,
}


class CollectionValues(ValueReader):
    """Lists, sets, sorted sets and hashes."""

    def bulk_skip(self, i: int, n: int, mx: int, layout: int, hist_a: dict, hist_b) -> tuple:
        """Skip elements i.. of n lying wholly in the buffer at once (backend.skip_elements, the
        twin of the per-element skip_string loops below); returns (next i, longest)."""
        r = self.r
        r.pos, done, m, ints = skip_elements(r.buf, r.pos, n - i, layout, hist_a, hist_b)
        r.ints_skipped += ints
        return i + done, (m if m > mx else mx)

    def refusable(self, start: int, walk, blob, *args) -> tuple:
        """walk(blob, *args) of the blob at file offset `start` (bytes, or a BlobSource walked
        by walk's streamed twin); a blob Redis would refuse though it reads (BlobRefused) is
        flagged (refuse) and its figures kept."""
        try:
            if isinstance(blob, bytes):
                return walk(blob, *args)
            try:
                return blob.walk(_STREAMED[walk], *args)
            except LZFError as e:  # found while streaming: as blob_source() would have
                e.key, e.rdb_type = self.key, self.rdb_type
                blob.length = 0
                self.recover(e)
                raise BlobError("LZF data does not decompress") from None
        except BlobRefused as e:
            t = self.rdb_type
            self.refuse(
                e.kind, f"{C.RDB_TYPE_LABELS[t] if t is not None else 'value'} blob: {e}", start
            )
            return e.result

    def v_list_or_set(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("element count")
        if n == 0:
            self.refuse("empty", f"{C.TYPE_NAMES[rec.rdb_type]} of no elements")
        self.check_count(n, "collection")
        hist: dict[int, int] = {}
        mx = 0
        skip = r.skip_string
        get = hist.get
        ints_before = r.ints_skipped
        i = 0
        while i < n:
            # Every element wholly in the buffer at once; the lines below take the one the
            # bulk skip stopped at (LZF, or the buffer needs a refill).
            i, mx = self.bulk_skip(i, n, mx, LAYOUT_STR, hist, None)
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
            rec.int_members = r.ints_skipped - ints_before

    def v_zset(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("zset member count")
        if n == 0:
            self.refuse("empty", f"{C.TYPE_NAMES[rec.rdb_type]} of no elements")
        self.check_count(n, "zset", 2)
        hist: dict[int, int] = {}
        mx = 0
        skip = r.skip_string
        get = hist.get
        binary = rec.rdb_type == C.RDB_TYPE_ZSET_2
        layout = LAYOUT_ZSET_BINARY if binary else LAYOUT_ZSET_TEXT
        i = 0
        while i < n:
            i, mx = self.bulk_skip(i, n, mx, layout, hist, None)  # as in v_list_or_set
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
        # Valkey 9.2 keeps sorted sets in a B+ tree (OBJECT ENCODING btree; same RDB types).
        info = self.info
        btree = info.server == "valkey" and (9, 2) <= info.version_tuple() < (255, 0)
        rec.encoding = "btree" if btree else "skiplist"

    def v_hash(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("hash field count")
        if n == 0:
            self.refuse("empty", f"{C.TYPE_NAMES[rec.rdb_type]} of no elements")
        self.check_count(n, "hash", 2)
        fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        mx = 0
        skip = r.skip_string
        fget, vget = fields.get, vals.get
        i = 0
        while i < n:
            i, mx = self.bulk_skip(i, n, mx, LAYOUT_PAIR, fields, vals)  # as in v_list_or_set
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

    def v_blob(self, rec: KeyRecord) -> None:
        """Types whose value is one blob string: ziplists, listpacks, intsets, zipmaps."""
        t = rec.rdb_type
        start = self.r.tell()
        blob = self.blob_source("encoded value")
        try:
            if t in (C.RDB_TYPE_HASH_LISTPACK, C.RDB_TYPE_ZSET_LISTPACK, C.RDB_TYPE_SET_LISTPACK):
                count, mx = self.refusable(
                    start, listpack_scan, blob, t == C.RDB_TYPE_ZSET_LISTPACK
                )
                if t != C.RDB_TYPE_SET_LISTPACK:
                    if count & 1:
                        raise BlobError(f"{count} entries do not make pairs")
                    count //= 2
            elif t == C.RDB_TYPE_SET_INTSET:
                count, mx = self.refusable(start, intset_scan, blob)
            elif t == C.RDB_TYPE_HASH_ZIPMAP:
                count, mx = self.refusable(start, zipmap_scan, blob)
            else:
                count, mx = self.refusable(start, ziplist_scan, blob, t == C.RDB_TYPE_ZSET_ZIPLIST)
                if t != C.RDB_TYPE_LIST_ZIPLIST:
                    if count & 1:
                        raise BlobError(f"{count} entries do not make pairs")
                    count //= 2
            if count == 0 and t != C.RDB_TYPE_HASH_ZIPMAP:
                self.refuse("empty", f"{C.RDB_TYPE_LABELS[t]} blob holds no elements", start)
        except BlobError as e:
            self.recover(self.corrupt(f"{C.RDB_TYPE_LABELS[t]} blob: {e}", start))
            count = mx = 0
        rec.length = count
        rec.max_elem = mx
        rec.blob_bytes = len(blob)
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
        entries_bytes = 0  # listpack entries of every node, uncompressed (v2)
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
                raise self.corrupt(
                    f"quicklist node container {container} is neither 1 (plain) nor 2 (packed)"
                )
            start = r.tell()
            blob = self.blob_source("quicklist node")
            try:
                c, m = self.refusable(start, listpack_scan if v2 else ziplist_scan, blob)
            except BlobError as e:
                self.recover(self.corrupt(f"quicklist node: {e}", start))
                c = m = 0
            packed += 1
            nodes[len(blob)] = nodes.get(len(blob), 0) + 1
            entries_bytes += len(blob) - LP_HEADER_AND_END
            count += c
            if m > mx:
                mx = m
        if count == 0:  # no nodes, or empty ones only (Redis skips those, then refuses)
            self.refuse("empty", f"{C.TYPE_NAMES[rec.rdb_type]} of no elements")
        rec.length = count
        rec.max_elem = mx
        rec.nodes = nodes
        # Redis 7.2+ writes a listpack-encoded list as a one-node quicklist (docs/rdb-format.md section 4.2).
        if v2 and n == 1 and packed == 1 and self.info.version_tuple() >= (7, 2):
            rec.encoding = "listpack"
            rec.blob_bytes = next(iter(nodes))
        else:
            rec.encoding = "quicklist"
            if v2 and n >= 2:
                # The one listpack these nodes' entries would make (a rewrite of the list):
                # the compact-encoding check needs it uncompressed (nodes may be LZF-compressed).
                rec.listpack_bytes = entries_bytes + LP_HEADER_AND_END
