"""Element samples: the first elements of chosen collection keys, read again from the dump at
their records' offsets (keys.file_offset), for `rdbscan schema --relations` (docs/schema.md,
"Relationships").  The load never keeps element values; this second, bounded read does, for a
few small keys per family only.

Members of sets, sorted sets and lists, values of hashes, in the encodings Redis 7.0+ and
Valkey write (hashtable and skiplist records, listpacks, quicklists of listpacks); ziplist,
zipmap and intset records (older servers, integer sets) are not sampled.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from . import constants as C
from .blobs import listpack_entries
from .reader import Reader
from .source import open_source

# Opcodes that may precede a key's type byte: EXPIRETIME_MS, EXPIRETIME, IDLE, FREQ.
_EXPIRE_MS, _EXPIRE_S, _IDLE, _FREQ = 0xFC, 0xFD, 0xF8, 0xF9


def _text(v) -> bytes:
    return v if isinstance(v, bytes) else str(v).encode()


def _elements(r: Reader, per_key: int) -> list[bytes] | None:
    """The first `per_key` members (hashes: values) of the record at the reader's position;
    None for a type or encoding not sampled."""
    t = r.u8("type")
    while t in (_EXPIRE_MS, _EXPIRE_S, _IDLE, _FREQ):
        if t == _EXPIRE_MS:
            r.skip(8, "expiry")
        elif t == _EXPIRE_S:
            r.skip(4, "expiry")
        elif t == _IDLE:
            r.length("idle")
        else:
            r.skip(1, "freq")
        t = r.u8("type")
    r.skip_string("key")
    if t in (C.RDB_TYPE_SET, C.RDB_TYPE_LIST):
        n = r.length("element count")
        return [r.string("element") for _ in range(min(n, per_key))]
    if t in (C.RDB_TYPE_ZSET, C.RDB_TYPE_ZSET_2):
        n = r.length("member count")
        out = []
        for _ in range(min(n, per_key)):
            out.append(r.string("member"))
            if t == C.RDB_TYPE_ZSET_2:
                r.skip(8, "score")
            else:
                sl = r.u8("score length")
                if sl < 253:
                    r.skip(sl, "score")
        return out
    if t == C.RDB_TYPE_HASH:
        n = r.length("field count")
        out = []
        for _ in range(min(n, per_key)):
            r.skip_string("field")
            out.append(r.string("value"))
        return out
    if t in (C.RDB_TYPE_SET_LISTPACK, C.RDB_TYPE_ZSET_LISTPACK, C.RDB_TYPE_HASH_LISTPACK):
        values = listpack_entries(r.string("listpack"))
        if t == C.RDB_TYPE_ZSET_LISTPACK:
            values = values[0::2]  # member, score
        elif t == C.RDB_TYPE_HASH_LISTPACK:
            values = values[1::2]  # field, value
        return [_text(v) for v in values[:per_key]]
    if t == C.RDB_TYPE_LIST_QUICKLIST_2:
        nodes = r.length("node count")
        out = []
        for _ in range(nodes):
            if len(out) >= per_key:
                break
            container = r.length("node container")
            blob = r.string("node")
            out += [blob] if container == 1 else [_text(v) for v in listpack_entries(blob)]
        return out[:per_key]
    return None


def sample_elements(
    path: str, offsets: Iterable[int], per_key: int
) -> Iterator[tuple[int, list[bytes] | None]]:
    """(offset, elements) for each record offset (keys.file_offset) of the dump at `path`,
    in ascending order: one forward pass over the file, holding one record's elements at a
    time."""
    src = open_source(path)
    try:
        r = Reader(src.stream, size=src.size, crc=False, initial=src.initial)
        for offset in sorted(set(offsets)):
            if offset < r.tell():
                continue  # inside the record read before (not a record start)
            r.skip(offset - r.tell(), "data before the record")
            yield offset, _elements(r, per_key)
    finally:
        src.close()
