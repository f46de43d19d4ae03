"""What the parser knows of one key: plain data, no behaviour."""
from __future__ import annotations


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
