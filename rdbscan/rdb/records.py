"""What the parser knows of one key: plain typed data, no behaviour.

`KeyRecord` holds what every key has; the figures only some kinds of value have are typed
records of their own (`FieldTTLs`, `StreamInfo`, `ModuleInfo`), None on the other keys.  The
parser fills them (rdbscan/rdb/), the memory model and the row builder read them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class FieldTTLs:
    """A hash whose fields carry their own TTLs (docs/rdb-format.md section 4.2)."""

    fields_with_ttl: int
    min_field_expire_ms: int | None
    # hashtable encodings: {field length: count} of the fields that have a TTL (they cost more)
    ttl_field_sizes: dict[int, int] | None = None


@dataclass(slots=True)
class ConsumerInfo:
    name: bytes
    seen_ms: int
    active_ms: int | None
    pending: int
    pending_ids: list[bytes] | None  # None when there are too many to keep


@dataclass(slots=True)
class GroupInfo:
    name: bytes
    last_delivered_id: str
    entries_read: int | None
    pending: int
    pending_ids: list[bytes] | None  # None when there are too many to keep
    consumers: list[ConsumerInfo]  # the first ones (MAX_KEPT_CONSUMERS per stream)
    consumer_count: int = 0  # all of them
    nacked: int | None = None  # Redis 8.8 (type 27): ids in the group's NACK zone


@dataclass(slots=True)
class StreamInfo:
    """A stream's metadata (docs/rdb-format.md section 5.7)."""

    listpacks: int
    node_ids: list[bytes] | None  # master ids of the nodes; None when too many to keep
    last_id: str
    first_id: str | None  # type 19+
    max_deleted_id: str | None  # type 19+
    entries_added: int | None  # type 19+
    groups: list[GroupInfo]
    consumers: int
    pending: int
    tail_lp_bytes: int | None  # the last node's listpack, preallocated on a live server
    lp_unfilled: dict[int, int]  # {listpack bytes: count} of nodes closed before full
    group_count: int = 0  # every group (`groups` keeps the first MAX_KEPT_GROUPS)
    nacked: int | None = None  # Redis 8.8 (type 27): NACKed ids of every group


@dataclass(slots=True)
class ModuleInfo:
    """A module value (docs/rdb-format.md section 6)."""

    name: str  # the module type's 9-character name
    encver: int
    items: int  # module opcode items in the value
    fields: dict | None = None  # what rdbscan/rdb/modules.py read, for the types it reads


class KeyRecord:
    """One key: where it is in the file, its type and encoding, and what the memory model needs
    (a histogram of element lengths for values that allocate per element, the blob size of
    compact values)."""

    __slots__ = (
        "array_last",
        "blob_bytes",
        "db",
        "elems",
        "encoding",
        "end",
        "expire_ms",
        "field_ttls",
        "freq",
        "idle",
        "int_members",
        "invalid",
        "key",
        "listpack_bytes",
        "long_key",
        "length",
        "max_elem",
        "module",
        "nodes",
        "offset",
        "rdb_type",
        "stream",
        "type",
        "vals",
    )

    db: int
    key: bytes
    rdb_type: int
    type: str
    encoding: str
    length: int
    max_elem: int
    offset: int  # file offset of the key's first opcode
    end: int  # file offset after its value
    expire_ms: int | None
    idle: int | None
    freq: int | None
    blob_bytes: int  # bytes of the value's single compact blob, 0 when it has none
    elems: dict[int, int] | None  # {element text length: count}
    vals: dict[int, int] | None  # hashtable hashes: {value length: count}
    nodes: (
        dict[int, int] | None
    )  # quicklists: {node bytes: count}; streams: {listpack bytes: count}
    int_members: int | None  # hashtable sets: members stored as integers
    # why a Redis server would refuse to load the value though it reads (a
    # constants.INVALID_KINDS name), None when it would not
    invalid: str | None
    listpack_bytes: int | None  # quicklists of 2+ nodes: their entries as one listpack
    # a name longer than long_names.KEY_KEEP, read as it streamed past: (its length, key_digest,
    # cluster slot); `key` then holds its first KEY_KEEP bytes
    long_key: tuple[int, int, int] | None
    field_ttls: FieldTTLs | None
    stream: StreamInfo | None
    module: ModuleInfo | None
    array_last: int | None  # Redis 8.8 arrays: the highest index (ARLEN - 1)

    def __init__(self) -> None:
        self.array_last = None
        self.elems = self.vals = self.nodes = None
        self.blob_bytes = 0
        self.int_members = None
        self.invalid = None
        self.listpack_bytes = None
        self.long_key = None
        self.field_ttls = None
        self.stream = None
        self.module = None

    @property
    def key_length(self) -> int:
        """The key name's length (of a long name, the whole name's, not the prefix kept)."""
        return len(self.key) if self.long_key is None else self.long_key[0]

    @property
    def serialized_bytes(self) -> int:
        return self.end - self.offset

    def __repr__(self) -> str:
        return (
            f"KeyRecord(db={self.db}, key={self.key!r}, type={self.type}, "
            f"encoding={self.encoding}, length={self.length}, max_elem={self.max_elem})"
        )
