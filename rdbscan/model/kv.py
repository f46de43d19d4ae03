"""Memory model of the servers that keep the key inside the value's object: Redis 8.6 (kvobj)
and Valkey 8.1 / 9.x (robj with embedded key and expire), and how those servers decide a
string's encoding.  Read from their object.c, hashtable.c, t_hash.c, t_zset.c; checked
against the corpus (docs/memory-model.md).

- Redis 8.6: MEMORY USAGE = the object's allocation (optional 8-byte metadata slots before
  it: the expiry; a 16-byte robj; one byte for the key's sds header size; the key sds; for
  an embedded string the value sds) + what the type's own allocations sum to.  The main dict
  has no dictEntry (the key is found through the object).
- Valkey 8.1: the same object (robj, optional expiry, key), no dictEntry (the keyspace is a
  `hashtable` of objects), but MEMORY USAGE counts `sizeof(robj)` = 16 and not the object's
  allocation, except for an embedded string (the whole allocation).
- Valkey 9: the whole allocation is counted; an embedded value reuses the robj's pointer
  (8 bytes less) and values up to 128 bytes of object are embedded.

Sets, hashes and zsets of Valkey 8.1+ are `hashtable`s: a 72-byte struct and 64-byte buckets of
7 entries (a full bucket chains a child bucket), no entry allocations.
"""

from __future__ import annotations

import functools
import math

from .memory import (
    LISTPACKEX,
    NEW_ENCODINGS,
    QUICKLIST,
    ROBJ,
    Profile,
    new_value_cost,
    sds_header,
    stream_cost,
)

HT_STRUCT = 72  # sizeof(hashtable) (hashtable.c), before its metadata
HT_BUCKET = 64  # 1 + 7 hash bytes + 7 pointers
HT_PER_BUCKET = 7
ZSET_STRUCT = 16  # zset: {hashtable *ht; zskiplist *zsl}
ZSKIPLIST = 32  # header, tail, length, level
ZSL_HEADER = 24 + 32 * 16  # zslCreateNode(ZSKIPLIST_MAXLEVEL = 32)
KEY_EXPIRE_THRESHOLD = 128  # keys this long always get an expiry slot


def key_sds(klen: int) -> int:
    """Bytes of the embedded key: the header-size byte, the sds header, the key, its NUL."""
    return 1 + sds_header(klen) + klen + 1


def object_bytes(klen: int, ttl: bool, prof: Profile, value: int = 0) -> int:
    """Requested size of the object allocation holding the key (and `value` embedded bytes)."""
    exp = 8 if ttl or klen >= KEY_EXPIRE_THRESHOLD else 0
    head = ROBJ - 8 if prof.kv == "valkey-9" and value else ROBJ
    return head + exp + key_sds(klen) + value


# -- encodings --------------------------------------------------------------------------------


def string_embedded(klen: int, vlen: int, ttl: bool, kv: str, quantum: int) -> bool:
    """Whether the writing server kept a string value of vlen bytes inside the key's object
    (OBJECT ENCODING embstr) rather than in its own sds (raw); the value was set first and a
    TTL added afterwards (SET, then EXPIRE; SET EX goes the same way)."""
    if kv == "redis-8.6":
        # kvobjSet: embed when robj + key + 3 + value + 4 fit a 64-byte cache line (the
        # expiry metadata is left out of the sum); the TTL re-embeds the same way.
        return vlen <= 44 and 16 + klen + 3 + 4 + vlen <= 64
    if kv in ("redis-8.2", "valkey-8.1"):
        # Redis 8.2 kvobjSet / Valkey 8.1 createStringObjectWithKeyAndExpire:
        # robj + key + 3 + [8 expire] + 4 + value <= 64.  Cluster mode changes nothing
        # (measured on Redis 8.2.3: the same encodings standalone and in cluster mode).
        if vlen > 44 or 16 + klen + 3 + 4 + vlen > 64:
            return False
        if not ttl:
            return True
        # The first allocation kept room for an expiry when its size class had 8 spare
        # bytes; otherwise EXPIRE re-creates the object with the expiry counted.
        need = 16 + key_sds(klen) + 4 + vlen
        from .memory import jemalloc_class

        if jemalloc_class(need, quantum) >= need + 8:
            return True
        return 16 + klen + 3 + 8 + 4 + vlen <= 64
    if kv == "valkey-9":
        # shouldEmbedStringObject: robj without its pointer + key + [8] + sds8 value <= 128.
        def fits(key: bool, exp: bool) -> bool:
            size = 8 + (sds_header(klen) + klen + 1 + 1 if key else 0) + (8 if exp else 0)
            return size + 3 + vlen + 1 <= 128

        if vlen > 255 or not fits(False, False) or not fits(True, False):
            return False
        if not ttl:
            return True
        need = 8 + key_sds(klen) + max(8, 4 + vlen)
        from .memory import jemalloc_class

        if jemalloc_class(need, quantum) >= need + 8:
            return True
        return fits(True, True)
    raise ValueError(kv)


EMBED_KEYS = EMBED_VALUES = 128  # _speedups.pyx reads the table with the same sizes


def kv_layout(server: str | None, version: tuple[int, int]) -> str | None:
    """The kv layout of a server version (memory.profile_for picks the same), else None."""
    if server == "valkey":
        if version >= (255, 0):
            return None  # unstable of 2024: still the 8.0 layout
        return "valkey-9" if version >= (9, 0) else "valkey-8.1" if version >= (8, 1) else None
    return "redis-8.6" if version >= (8, 6) else "redis-8.2" if version >= (8, 2) else None


@functools.cache
def embed_table(kv: str, quantum: int) -> bytes:
    """string_embedded() for every key length < EMBED_KEYS and value length < EMBED_VALUES,
    without and with a TTL: byte [(ttl * EMBED_KEYS + klen) * EMBED_VALUES + vlen] is 1 when
    embedded (parser.embedded and the compiled record loop read it; longer keys or values are
    never embedded: 16 + key + 3 + 4 + value exceeds 128 bytes)."""
    out = bytearray(2 * EMBED_KEYS * EMBED_VALUES)
    for ttl in (0, 1):
        for k in range(EMBED_KEYS):
            for v in range(EMBED_VALUES):
                if string_embedded(k, v, bool(ttl), kv, quantum):
                    out[(ttl * EMBED_KEYS + k) * EMBED_VALUES + v] = 1
    return bytes(out)


def string_encoding(klen: int, vlen: int, ttl: bool, prof: Profile) -> str:
    return "embstr" if string_embedded(klen, vlen, ttl, prof.kv or "", prof.quantum) else "raw"


# -- hashtables (Valkey 8.1+) -----------------------------------------------------------------


@functools.lru_cache(maxsize=4096)
def _children_per_bucket(load_milli: int) -> float:
    """Expected child buckets per bucket when entries fall into buckets as a Poisson process of
    mean load (entries per bucket): a bucket of k > 7 entries keeps 6 and chains the rest in
    children of 6 (the last of 7)."""
    lam = load_milli / 1000
    if lam <= 0:
        return 0.0
    total = 0.0
    p = math.exp(-lam)
    for k in range(1, 200):
        p *= lam / k
        if k > HT_PER_BUCKET:
            total += p * math.ceil((k - HT_PER_BUCKET) / (HT_PER_BUCKET - 1))
        if k > lam and p < 1e-12:
            break
    return total


def ht_buckets(n: int) -> int:
    """Top-level buckets of a hashtable grown to n entries (expands past a 100 % fill)."""
    b = 1
    while HT_PER_BUCKET * b < n:
        b <<= 1
    return b


def hashtable_bytes(n: int, prof: Profile, meta: int = 0, steps: int = 1) -> float:
    """hashtableMemUsage(): struct + metadata + 64 bytes per bucket, child buckets included.
    A table that doubled at 7 x old buckets + 1 entries keeps the old table until as many
    rehash steps (`steps` per added entry) have moved its buckets."""
    b = ht_buckets(n)
    children = b * _children_per_bucket(round(1000 * n / b)) if n else 0.0
    old = b >> 1
    if old >= 8 and (n - HT_PER_BUCKET * old - 1) * steps < old:
        b += old
    struct = HT_STRUCT + 8 if prof.kv == "valkey-9" else HT_STRUCT  # 9.x: safe iterators
    return struct + meta + HT_BUCKET * (b + children)


# -- the estimate -----------------------------------------------------------------------------


def _pairs(a: dict, b: dict, n: int):
    """(length a, length b, expected count) of the pairs of two histograms of n elements each
    whose pairing is unknown (hash fields and values): as if independent.  In length order:
    the float sums must not depend on the order the histograms were filled in (the compiled
    and the Python element loops fill them differently)."""
    if len(a) * len(b) > 4096:
        ma = sum(k * c for k, c in a.items()) / n
        mb = sum(k * c for k, c in b.items()) / n
        yield round(ma), round(mb), n
        return
    for la, ca in sorted(a.items()):
        for lb, cb in sorted(b.items()):
            yield la, lb, ca * cb / n


def hash_entry(flen: int, vlen: int, prof: Profile) -> int:
    """A Valkey 8.1+ hash entry: field and value in one allocation up to 128 bytes, else the
    field with a value pointer and the value's own sds (t_hash.c hashTypeCreateEntry)."""
    fsize = sds_header(flen) + flen + 1
    vsize = 3 + vlen + 1
    if fsize + vsize <= 128:
        return prof.j(fsize + vsize)
    fsize = max(3, sds_header(flen)) + flen + 1
    return prof.j(8 + fsize) + prof.sds(vlen)


def _skiplist_node(prof: Profile, valkey9: bool, ln: int) -> float:
    if not valkey9:
        return prof.skiplist_node + prof.sds(ln)
    # Valkey 9: score, backward, the levels, then the member's sds (one allocation).
    return sum(
        0.75 * 0.25 ** (lv - 1) * prof.j(16 + 16 * lv + 1 + sds_header(ln) + ln + 1)
        for lv in range(1, 33)
    )


def value_bytes(rec, prof: Profile) -> float:
    """The value's own allocations, the object excluded."""
    if rec.encoding in NEW_ENCODINGS:
        return new_value_cost(rec, prof, value_bytes)
    if prof.kv == "redis-8.2":
        # 8.2: the key moved into the object; the values are measured as in 8.0, except the
        # zset nodes (member inside the node, as in 8.6) and a 24-byte listpackEx.
        from .memory import value_cost

        if rec.encoding == "skiplist":
            return _redis86_dict(rec, prof)
        return value_cost(rec, prof) - ROBJ - (8 if rec.encoding == "listpackex" else 0)
    enc = rec.encoding
    typ = rec.type
    J = prof.j
    redis = prof.kv == "redis-8.6"
    blob = rec.blob_bytes
    if blob and enc in ("listpack", "ziplist", "intset", "listpackex"):
        size = blob if redis else J(blob)
        if enc == "listpackex":
            size += LISTPACKEX - 8 if redis else LISTPACKEX
        return size
    if enc == "quicklist" and redis:
        # quicklist.c tracks alloc_size: the struct, each node, each listpack at its length.
        size = J(QUICKLIST + 8)
        for nb, cnt in rec.nodes.items():
            size += cnt * (J(prof.quicklist_node) + nb)
        return size
    if enc == "quicklist":
        size = QUICKLIST
        for nb, cnt in rec.nodes.items():
            size += cnt * (prof.quicklist_node + J(nb))
        return size
    if typ == "stream":
        return _redis86_stream(rec, prof) if redis else stream_cost(rec, prof) - ROBJ
    n = rec.length
    if enc == "hashtable" and not redis:
        if typ == "set":
            members = sum(cnt * prof.sds(ln) for ln, cnt in rec.elems.items())  # exact ints
            return members + hashtable_bytes(n, prof)
        size = hashtable_bytes(n, prof, 8 if prof.kv == "valkey-9" else 0)  # field TTL set
        elems = dict(rec.elems)
        ttl_sizes = rec.field_ttls.ttl_field_sizes if rec.field_ttls is not None else None
        for ln, cnt in (ttl_sizes or {}).items():
            elems[ln] = elems.get(ln, 0) + cnt
        for fl, vl, cnt in _pairs(elems, rec.vals, n):
            size += cnt * hash_entry(fl, vl, prof)
        return size
    if enc == "skiplist" and not redis:
        valkey9 = prof.kv == "valkey-9"
        if valkey9:  # the header node inside the zskiplist, counted unrounded
            size = ZSET_STRUCT + 16 + 32 * 16 + hashtable_bytes(n, prof)
        else:
            size = ZSET_STRUCT + ZSKIPLIST + hashtable_bytes(n, prof) + J(ZSL_HEADER)
        for ln, cnt in sorted(rec.elems.items()):
            size += cnt * _skiplist_node(prof, valkey9, ln)
        return size
    if redis and enc in ("hashtable", "skiplist"):
        return _redis86_dict(rec, prof)
    if typ in ("list", "set", "zset", "hash") and not blob:
        return 0
    from .memory import value_cost  # modules: their own estimate (modules.py), as before

    return value_cost(rec, prof) - ROBJ


DICT86 = 56  # sizeof(dict)
DICT_ENTRY86 = 24  # dictMemUsage() counts a full dictEntry per element
EXPIRE_META = 16  # a hash field's ExpireMeta


def _sds_alloc86(n: int, prof: Profile) -> int:
    """sdsAllocSize() of a new sds: type 5 (< 32 bytes) records no capacity (exact size)."""
    return 1 + n + 1 if n < 32 else prof.sds(n)


def _redis86_dict(rec, prof: Profile) -> float:
    """Redis 8.6 sets, hashes and zsets in a dict: dict struct + dictMemUsage() + the
    allocation sizes the type tracks (t_set.c, t_hash.c, t_zset.c)."""
    from .memory import dict_slots

    n = rec.length
    slots = dict_slots(n, prof.rehash.get(rec.type))
    size = DICT86 + DICT_ENTRY86 * n + 8 * slots
    J = prof.j
    if rec.type == "set":
        for ln, cnt in rec.elems.items():
            size += cnt * _sds_alloc86(ln, prof)
        return size
    if rec.type == "zset":
        size += 16 + J(40) + J(16 + 32 * 16)  # zset, zskiplist, header node
        for ln, cnt in sorted(rec.elems.items()):
            hdr = sds_header(ln) + ln + 1
            size += cnt * sum(
                0.75 * 0.25 ** (lv - 1) * J(16 + 16 * lv + hdr) for lv in range(1, 33)
            )
        return size
    ttl = (rec.field_ttls.ttl_field_sizes if rec.field_ttls is not None else None) or {}
    for fl, vl, cnt in _pairs(rec.elems, rec.vals, n):
        size += cnt * _entry86(fl, vl, False, prof)
    return size + sum(cnt * (_entry86(fl, 8, True, prof)) for fl, cnt in ttl.items())


def _entry86(flen: int, vlen: int, expiry: bool, prof: Profile) -> int:
    """entryMemUsage() of a hash field (entry.c): field and value in one allocation up to 128
    bytes, else the field with a value pointer and the value's own sds."""
    fhdr = 3 if expiry and flen < 32 else sds_header(flen)
    exp = EXPIRE_META if expiry else 0
    fsize = fhdr + flen + 1
    if fsize + exp + 3 + vlen + 1 <= 128:
        return fsize + exp + 3 + vlen + 1  # zmalloc(), not the usable size
    fsize = max(3, fhdr) + flen + 1
    return fsize + 8 + exp + prof.sds(vlen)


def kv_estimate(rec, klen: int, ttl: bool, prof: Profile) -> int:
    """MEMORY USAGE of a key on a server that embeds the key in the object."""
    J = prof.j
    kv = prof.kv
    if rec.type == "string":
        enc = rec.encoding
        n = rec.length
        if enc == "embstr":
            if kv == "valkey-9":
                return J(object_bytes(klen, ttl, prof, max(8, 4 + n)))
            return J(object_bytes(klen, ttl, prof, 4 + n))
        head = ROBJ if kv == "valkey-8.1" else J(object_bytes(klen, ttl, prof))
        return head if enc == "int" else head + prof.sds(n)
    head = ROBJ if kv == "valkey-8.1" else J(object_bytes(klen, ttl, prof))
    return head + int(value_bytes(rec, prof))


STREAM86 = 160  # J(sizeof(stream)) with the 8.6 idempotency fields
RAX86 = 32  # rax struct
STREAM_CG86 = 48  # streamCG
STREAM_NACK86 = 48  # streamNACK: times, count, consumer, group-index node, PEL time list
CONSUMER86 = 32  # streamConsumer


def _id_rax(ids, count: int, prof: Profile) -> float:
    """A rax of 16-byte stream ids as Redis 8.6 tracks it: the struct and every node's
    usable size (rax.c raxNewNode / raxNodeRealloc)."""
    from .memory import rax_stats

    if ids is not None and len(ids) == count:
        return RAX86 + rax_stats(ids, prof.J)[1]
    return RAX86 + (prof.j(4) if not count else 16 * count + 24 * int(1.5 * count))


def _name_rax(names, prof: Profile) -> float:
    """A rax of short names (groups, consumers): about one compressed node and one leaf each."""
    J = prof.j
    if not names:
        return RAX86 + J(4)
    return RAX86 + sum(J(4 + len(n) + (-(4 + len(n)) & 7) + 8) + J(12) for n in names)


def _redis86_stream(rec, prof: Profile) -> float:
    """Redis 8.6 stream: `s->alloc_size`, which t_stream.c keeps: the struct, the rax of
    nodes, each listpack at its length (no preallocation counted), consumer groups."""
    st = rec.stream
    size = STREAM86 + _id_rax(st.node_ids if st else None, st.listpacks if st else 0, prof)
    size += sum(nb * cnt for nb, cnt in (rec.nodes or {}).items())
    groups = st.groups if st else []
    if groups:
        size += _name_rax([g.name for g in groups], prof)
        pending = 0
        for g in groups:
            pel = g.pending
            pending += pel
            size += STREAM_CG86 + _id_rax(g.pending_ids, pel, prof)
            size += STREAM_NACK86 * pel
            size += _name_rax([c.name for c in g.consumers], prof)
            for c in g.consumers:
                size += CONSUMER86 + prof.sds(len(c.name))
                size += _id_rax(c.pending_ids, c.pending, prof)
        if pending:  # the index of pending ids to their groups
            ids = [i for g in groups for i in (g.pending_ids or ())]
            size += _id_rax(
                sorted(set(ids)) if len(ids) == pending else None,
                len(set(ids)) if len(ids) == pending else pending,
                prof,
            )
    return size
