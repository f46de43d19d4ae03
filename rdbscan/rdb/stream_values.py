"""Streams, types 15, 19, 21 and 26 (docs/rdb-format.md section 5.7)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import blob_stream
from . import constants as C
from .backend import listpack_stream_scan
from .blobs import listpack_entries
from .errors import BlobError, BlobRefused
from .reader import I64, LZFError, int_text_len
from .records import ConsumerInfo, GroupInfo, StreamInfo
from .values import COUNT_MAX, LONG_MAX, ValueReader

if TYPE_CHECKING:
    from .blob_source import BlobSource
    from .records import KeyRecord


# PEL / node id lists longer than this are counted but not kept (memory bound).
MAX_KEPT_IDS = 100_000
# Consumer groups and consumers of one stream kept in detail (counted in full: DumpInfo.cut,
# docs/hostile-inputs.md).
MAX_KEPT_GROUPS = 1_000
MAX_KEPT_CONSUMERS = 10_000
# Bytes kept of a group's or consumer's name (the rest read past: docs/hostile-inputs.md).
NAME_KEEP = 16_384


STREAM_ITEM_FLAG_DELETED = 1


STREAM_ITEM_FLAG_SAMEFIELDS = 2


STREAM_NODE_MAX_ENTRIES = 100  # default stream-node-max-entries (memory model)


def _id_text(ms: int, seq: int) -> str:
    return f"{ms}-{seq}"


def _stream_node_max(lp: bytes) -> tuple[int, int]:
    """(longest field or value among the live entries, entries ever added: live + deleted)
    of one stream node listpack.  Counts read from the listpack must be non-negative
    integers: a negative one would walk backwards (an endless loop on hostile input)."""
    v = listpack_entries(lp)
    if len(v) < 4:
        raise BlobError(f"stream node listpack has {len(v)} entries, fewer than its master entry")
    nf = v[2]
    if not isinstance(nf, int) or nf < 0 or 3 + nf >= len(v):
        raise BlobError(f"stream node master entry has an invalid field count {nf!r}")
    master = v[3 : 3 + nf]
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
            items = v[i : i + nf]
            i += nf
            if not flags & STREAM_ITEM_FLAG_DELETED:
                master_used = True
        else:
            k = v[i] if i < end else None
            if not isinstance(k, int) or k < 0:
                raise BlobError(f"stream entry has an invalid field count {k!r}")
            items = v[i + 1 : i + 1 + 2 * k]
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


class StreamValues(ValueReader):
    """Streams, types 15, 19, 21 and 26."""

    def _long_node(self, lp: BlobSource, start: int) -> tuple[int, int]:
        """(longest entry, length) of a node listpack longer than STREAM_NODE_WHOLE_MAX (one
        entry of megabytes: real, though rare), walked in pieces instead of decoded entry by
        entry and held: its longest listpack entry stands for its longest element, and its
        entries are not counted (the memory model takes the node as full).  Counted in
        DumpInfo.cut["stream_nodes"] (dumps.cut, docs/hostile-inputs.md)."""
        self.info.cut["stream_nodes"] = self.info.cut.get("stream_nodes", 0) + 1
        n = len(lp)
        try:
            return lp.walk(listpack_stream_scan)[1], n
        except BlobRefused as e:  # the whole node is not checked so either (listpack_entries)
            return e.result[1], n
        except LZFError as e:  # the reader is past the payload: as blob() recovers it
            e.key, e.rdb_type = self.key, self.rdb_type
            self.recover(e)
        except BlobError as e:
            self.recover(self.corrupt(f"stream listpack: {e}", start))
        return 0, 0

    def v_stream(self, rec: KeyRecord) -> None:
        """Streams, types 15/19/21/26/27 (docs/rdb-format.md section 5.7): the listpack nodes,
        the stream's ids and counters, its consumer groups, in the order rdbLoadObject reads
        them (Redis src/rdb.c)."""
        r = self.r
        t = rec.rdb_type
        n_lp = r.length("stream listpack count")
        self.check_count(n_lp, "stream", 3)
        lp_sizes, node_ids, mx, tail_lp, lp_unfilled = self._stream_nodes(n_lp)
        length = r.length("stream length")
        if length > COUNT_MAX:
            raise self.corrupt(f"stream length {length} is impossible")
        last_id = _id_text(r.length("stream last id"), r.length("stream last id"))
        first_id = max_deleted = None
        entries_added = None
        if t >= C.RDB_TYPE_STREAM_LISTPACKS_2:
            first_id = _id_text(r.length("stream first id"), r.length("stream first id"))
            max_deleted = _id_text(
                r.length("stream max deleted id"), r.length("stream max deleted id")
            )
            entries_added = r.length("stream entries added")
            if entries_added > LONG_MAX:
                raise self.corrupt(f"stream entries-added counter {entries_added} is out of range")
        n_groups = r.length("stream group count")
        self.check_count(n_groups, "stream groups", 4)
        groups, consumers_total, pending_total, nacked_total = self._stream_groups(t, n_groups)
        if t >= C.RDB_TYPE_STREAM_LISTPACKS_4:
            self.skip_stream_idmp()
        rec.length = length
        rec.max_elem = mx
        rec.nodes = lp_sizes
        rec.encoding = "stream"
        if self.info.version_tuple()[:2] == (5, 0) and self.info.server == "redis":
            rec.encoding = "unknown"  # Redis 5.0's OBJECT ENCODING did not name streams
        rec.stream = StreamInfo(
            n_lp,
            node_ids,
            last_id,
            first_id,
            max_deleted,
            entries_added,
            groups,
            consumers_total,
            pending_total,
            tail_lp,
            lp_unfilled,
            n_groups,
            nacked_total,
        )

    def _stream_nodes(
        self, n_lp: int
    ) -> tuple[dict[int, int], list[bytes] | None, int, int | None, dict[int, int]]:
        """The stream's rax of listpack nodes: {listpack size: nodes}, the node ids (None past
        MAX_KEPT_IDS), the longest element, the tail node's size and {size: nodes} of the nodes
        before the tail that never filled (the memory model charges their preallocation)."""
        r = self.r
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
                self.recover(
                    self.corrupt(f"stream node key is {len(node_key)} bytes, expected 16", start)
                )
            start = r.tell()
            lp = self.blob_source("stream listpack", blob_stream.STREAM_NODE_WHOLE_MAX)
            if isinstance(lp, bytes):
                lp_len = len(lp)
                try:
                    m, entries = _stream_node_max(lp)
                except (BlobError, IndexError, TypeError) as e:
                    self.recover(self.corrupt(f"stream listpack: {e or 'malformed entry'}", start))
                    m = entries = 0
            else:  # longer than blob_stream.STREAM_NODE_WHOLE_MAX: a message of megabytes
                m, lp_len = self._long_node(lp, start)
                entries = STREAM_NODE_MAX_ENTRIES
            if m > mx:
                mx = m
            lp_sizes[lp_len] = lp_sizes.get(lp_len, 0) + 1
            # Memory model: nodes that never reached stream-node-max-entries keep their
            # preallocation on a live server; the last one is the tail.
            if tail_lp is not None and tail_entries < STREAM_NODE_MAX_ENTRIES:
                lp_unfilled[tail_lp] = lp_unfilled.get(tail_lp, 0) + 1
            tail_lp, tail_entries = lp_len, entries
            if node_ids is not None:
                node_ids.append(node_key)
                if len(node_ids) > MAX_KEPT_IDS:
                    node_ids = None
        return lp_sizes, node_ids, mx, tail_lp, lp_unfilled

    def _stream_groups(self, t: int, n_groups: int) -> tuple[list[GroupInfo], int, int, int | None]:
        """The consumer groups: those kept (MAX_KEPT_GROUPS, DumpInfo.keep) and, over all of
        them, the consumers, the pending entries and (Redis 8.8, type 27) the NACKed ids."""
        r = self.r
        groups: list[GroupInfo] = []
        consumers_total = 0
        consumers_kept = 0
        pending_total = 0
        nacked_total: int | None = 0 if t >= C.RDB_TYPE_STREAM_LISTPACKS_5 else None
        info = self.info
        for _ in range(n_groups):
            name, _ = r.string_head("consumer group name", NAME_KEEP)
            delivered = _id_text(
                r.length("group last delivered id"), r.length("group last delivered id")
            )
            entries_read = None
            if t >= C.RDB_TYPE_STREAM_LISTPACKS_2:
                entries_read = r.length("group entries read")
                if entries_read >= 1 << 63:  # SCG_INVALID_ENTRIES_READ (-1) as unsigned
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
            consumers = self._group_consumers(t, n_cons, kept, consumers_kept)
            consumers_kept += len(consumers)
            nacked = None
            if nacked_total is not None:
                # Redis 8.8 NACK zone: LEN count, then count 16-byte stream ids (XNACK).
                nacked = r.length("group NACK count")
                self.check_count(nacked, "group NACK zone", 16)
                r.skip(16 * nacked, "group NACK ids")
                nacked_total += nacked
            consumers_total += n_cons
            pending_total += pel
            if kept:
                groups.append(
                    GroupInfo(
                        name, delivered, entries_read, pel, pel_ids, consumers, n_cons, nacked
                    )
                )
            else:  # counted in the stream's totals; its consumers are not kept either
                info.cut["stream_consumers"] = info.cut.get("stream_consumers", 0) + n_cons
        return groups, consumers_total, pending_total, nacked_total

    def _group_consumers(
        self, t: int, n_cons: int, kept: bool, consumers_kept: int
    ) -> list[ConsumerInfo]:
        """One group's consumers, read through; those kept (the group is, and fewer than
        MAX_KEPT_CONSUMERS of the stream's were kept before) are returned."""
        r = self.r
        info = self.info
        consumers: list[ConsumerInfo] = []
        for _ in range(n_cons):
            cname, _ = r.string_head("consumer name", NAME_KEEP)
            seen = r.unpack(I64, "consumer seen time")
            active = None
            if t >= C.RDB_TYPE_STREAM_LISTPACKS_3:
                active = r.unpack(I64, "consumer active time")
            cpel = r.length("consumer pending count")
            self.check_count(cpel, "consumer pending list", 16)
            kept_before = consumers_kept + len(consumers)
            keep_c = kept and info.keep("stream_consumers", kept_before, MAX_KEPT_CONSUMERS)
            cids: list[bytes] | None = [] if cpel <= MAX_KEPT_IDS and keep_c else None
            for _ in range(cpel):
                rid = r.read(16, "consumer pending id")
                if cids is not None:
                    cids.append(rid)
            if keep_c:
                consumers.append(ConsumerInfo(cname, seen, active, cpel, cids))
        return consumers

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
