"""Memory model: what `MEMORY USAGE key SAMPLES 0` reports for a key on a given server, computed
from what the parser measured (docs/rdb-format.md section 8; the corpus of real dumps and the
servers' object.c win where they differ from the document).

One `Profile` per server generation (docs/rdb-format.md section 8.3 struct sizes, 8.4 formulas, 8.5 Redis 8 /
Valkey), chosen from the dump's aux fields (`redis-ver` / `valkey-ver`) or forced with
`--target`.  Every allocation is rounded to the allocator's size classes (docs/rdb-format.md section 8.2) through a
table precomputed per profile, so a key costs a handful of dict lookups: the parser already
reduced its elements to histograms {length: count}.

What is modelled is the *live* server that wrote the dump (that is what an SRE compares with),
not a server that has just loaded it.  The differences are systematic for streams (the tail
listpack, and nodes closed by the byte limit, keep their 4 KiB preallocation) and are documented
in docs/memory-model.md; the rest (sds slack from APPEND/SETRANGE/SETBIT, dicts caught mid-rehash)
cannot be seen in a dump and stays as error.

`memory_bytes` = `estimate(rec, profile)`; `memory_total_bytes` = `total(...)` adds what
MEMORY USAGE leaves out (docs/rdb-format.md section 8.6): the key's share of the main dict's bucket array and, for
keys with a TTL, the expires entry plus its share of the expires bucket array.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

from ..rdb.modules import value_bytes as module_value_bytes

# -- allocator size classes (docs/rdb-format.md section 8.2) ----------------------------------------------------

TABLE_LIMIT = 1 << 16  # sizes up to this come from a precomputed table


SMALL_MAX = 14336  # jemalloc's largest small size class (4 KiB pages)


def jemalloc_class(n: int, quantum: int = 8, pages: bool = False) -> int:
    """Usable size jemalloc returns for a request of n bytes.

    quantum 8: Redis >= 4.0 with its bundled jemalloc (`--with-lg-quantum=3`): 8, 16, 24, ...,
    64, then four classes per power of two (80, 96, 112, 128, 160, ...).
    quantum 16: jemalloc's own default (Redis 2.8/3.x bundles, and distribution packages that
    link the system libjemalloc, e.g. Debian/Ubuntu): 8, 16, 32, 48, 64, 80, ... 128, then the
    same four classes per power of two.
    pages: jemalloc 5.3.1 as Debian sid / experimental link it (Redis 8.6.3, Valkey 9.1.2
    packages): allocations above the small classes are whole 4 KiB pages (measured: a 70,000-
    byte string is 73,728 bytes there, 81,920 with 5.3.0)."""
    if pages and n > SMALL_MAX:
        return (n + 4095) & ~4095
    if n <= 8:
        return 8
    if n <= 64 or (quantum == 16 and n <= 128):
        return (n + quantum - 1) & ~(quantum - 1)
    g = (n - 1).bit_length() - 1
    step = 1 << (g - 2)
    return (n + step - 1) & ~(step - 1)


def sds_header(n: int, old: bool = False) -> int:
    """Header bytes of an sds string of length n (sds.h; 2.x/3.0: one 8-byte header)."""
    if old:
        return 8
    if n < 32:
        return 1
    if n < 256:
        return 3
    if n < 65536:
        return 5
    if n < 1 << 32:
        return 9
    return 17


def next_pow2(n: int, minimum: int = 4) -> int:
    """Bucket count of a dict holding n entries (dictExpand rounds up to a power of two)."""
    if n <= minimum:
        return minimum
    return 1 << (n - 1).bit_length()


_TABLES: dict[tuple[int, bool], list[int]] = {}
_SDS_TABLES: dict[tuple[int, bool, bool], list[int]] = {}


def _class_table(quantum: int, pages: bool = False) -> list[int]:
    """jemalloc_class(n) for every n up to TABLE_LIMIT.  Built a size class at a time: the
    classes are fixed points (jemalloc_class(c) == c) and the function never decreases, so
    every n from one class's successor up to the next class c rounds to c.  One int object per
    class (48 of them, not 65,537 ints: 1.8 MB), and a millisecond where a call per size took
    0.11 s of every command's start."""
    t = _TABLES.get((quantum, pages))
    if t is None:
        t = []
        n = 0
        while n <= TABLE_LIMIT:
            c = jemalloc_class(n, quantum, pages)
            t += [c] * (min(c, TABLE_LIMIT) - n + 1)
            n = c + 1
        _TABLES[(quantum, pages)] = t
    return t


def _sds_runs(old: bool):
    """(first n, end n, header bytes) of the runs of n up to TABLE_LIMIT whose sds header has
    one size (sds_header)."""
    bounds = [0, TABLE_LIMIT + 1] if old else [0, 32, 256, 65536, TABLE_LIMIT + 1]
    return [(lo, hi, sds_header(lo, old)) for lo, hi in zip(bounds, bounds[1:]) if lo < hi]


def _sds_table(quantum: int, old: bool, pages: bool = False) -> list[int]:
    """The allocation of an sds string of length n: the size class of header + n + 1, from
    the class table (slices of it, a run of one header size at a time)."""
    t = _SDS_TABLES.get((quantum, old, pages))
    if t is None:
        j = _class_table(quantum, pages)
        t = []
        for lo, hi, h in _sds_runs(old):
            top = max(lo, min(hi, TABLE_LIMIT - h))  # n + h + 1 within the class table below top
            t += j[lo + h + 1 : top + h + 1]
            t += [jemalloc_class(n + h + 1, quantum, pages) for n in range(top, hi)]
        _SDS_TABLES[(quantum, old, pages)] = t
    return t


def _sds_exact_table(old: bool) -> list[int]:
    t: list[int] = []
    for lo, hi, h in _sds_runs(old):
        t += range(lo + h + 1, hi + h + 1)
    return t


# -- radix trees (streams, docs/rdb-format.md section 8.4) -------------------------------------------------------

RAX_NODE_ESTIMATE = 4 + 8 * 30  # what streamRadixTreeMemoryUsage charges per node
STREAM_ID = 16
EXACT_RAX_IDS = 20_000  # above this many ids the node count is extrapolated


def _rax_node(chars: int, children: int) -> int:
    """Bytes of one rax node (rax.h): 4-byte header, the chars padded to a pointer, the child
    pointers."""
    return 4 + chars + (-(4 + chars) & 7) + 8 * children


def rax_stats(ids, J=None) -> tuple[int, int]:
    """(nodes, allocated bytes of the nodes) of a rax holding these distinct 16-byte keys
    (stream ids) whose values are pointers.  Allocated bytes need the size-class table J.

    The rax is a compressed trie: a root, one node per branching prefix, one leaf per key,
    plus one node for every edge out of a branching node longer than one byte (holding the
    rest of the edge; rax.c splits compressed nodes that way).  Computed with a stack over the
    longest common prefixes of neighbours in sorted order: no trie is built."""
    n = len(ids)
    leaf = 16  # header + padding + value pointer
    if n == 0:
        return 1, (J[4] if J else 0)
    if n == 1:
        return 2, (J[_rax_node(16, 1)] + J[leaf] if J else 0)
    if n > EXACT_RAX_IDS:
        nodes, alloc = rax_stats(ids[:EXACT_RAX_IDS], J)
        f = n / EXACT_RAX_IDS
        return max(2, round(nodes * f)), round(alloc * f)
    keys = sorted(int.from_bytes(k, "big") for k in ids)
    nodes = 1 + n  # root + leaves
    alloc = n * J[leaf] if J else 0
    stack: list[list[int]] = [[0]]  # open branching nodes: [depth, child depths...]
    last = n - 1
    for i in range(n):
        child = 16
        lcp = (128 - (keys[i] ^ keys[i + 1]).bit_length()) >> 3 if i < last else 0
        while stack[-1][0] > lcp:
            node = stack.pop()
            node.append(child)
            depth = node[0]
            nodes += 1
            if J:
                alloc += J[_rax_node(len(node) - 1, len(node) - 1)]
            for d in node[1:]:
                if d - depth > 1:
                    nodes += 1
                    if J:
                        alloc += J[_rax_node(d - depth - 1, 1)]
            child = depth
        if stack[-1][0] < lcp:
            stack.append([lcp, child])
        else:
            stack[-1].append(child)
    root = stack[0]
    if len(root) > 2:  # the root branches: long edges need their own node
        if J:
            alloc += J[_rax_node(len(root) - 1, len(root) - 1)]
        for d in root[1:]:
            if d > 1:
                nodes += 1
                if J:
                    alloc += J[_rax_node(d - 1, 1)]
    elif J:  # a compressed root holding the common prefix
        alloc += J[_rax_node(root[1], 1)]
    return nodes, alloc


def rax_nodes(ids) -> int:
    """Number of nodes of a rax holding these distinct 16-byte keys."""
    return rax_stats(ids)[0]


RAX_STRUCT = 32  # Valkey 8.1 rax header (head, numele, numnodes, alloc_size)


def rax_estimate(elements: int, nodes: int) -> int:
    return STREAM_ID * elements + RAX_NODE_ESTIMATE * nodes


REHASH_MIN = 1024  # smaller dicts often began pre-sized by a conversion: not modelled
NONEMPTY = 1 - 1 / 2.718281828459045


# -- profiles ---------------------------------------------------------------------------------


@dataclasses.dataclass(eq=False, repr=False)
class Profile:
    """Struct sizes and accounting rules of one server generation (docs/rdb-format.md sections
    8.3-8.5).  A record of named facts, so a dataclass that says what each field stands for where
    it is declared.  eq=False: a profile compares and hashes by identity, as a plain object
    does; repr=False keeps the short __repr__ below."""

    name: str
    _: dataclasses.KW_ONLY
    server: str = "redis"
    quantum: int = 8
    sds_old: bool = False
    round_blobs: bool = True  # 7.0+: zmalloc_size() of blobs, else their length
    embstr: str = "rounded"  # "rounded": J(20 + n); "exact": 18 + n (<= 6.2)
    dict_struct: int = 56
    key: str = "sds+entry"  # how the key itself is charged
    key_usage_quirk: bool = False  # 4.0: charges the argument "usage", not the key
    # 4.0.14: the key is charged as an sds of at least an 8-bit header (3 bytes), as the
    # command's argument is (embstr), not the 1-byte header of the keyspace's own short
    # keys: measured +2 bytes on every key under 32 bytes, none on longer ones (corpus).
    key_sds8: bool = False
    stream_struct: int = 80
    stream_prealloc: int = 4096  # 0: listpacks charged at their length
    stream_lp_alloc: bool = True
    cg_struct: int = 40
    consumer_struct: int = 32
    zsl_header: int = 640
    zset_extra: bool = True
    hfe: bool = False
    cluster_key_extra: int = 0
    set_entry: int = 24
    # 4.0/5.0: sdsAllocSize() is header + len + 1, not the allocation (sds.c before 6.0
    # recorded the requested size, not the usable one).
    sds_exact: bool = False
    # Valkey 8.0: a set member alone in its bucket is stored without a dict entry.
    set_bare_keys: bool = False
    # Incremental rehashing on the live server: {type: dict operations per added element}
    # (rehash steps happen only when the dict is used; see _rehash_extra).
    rehash: dict = dataclasses.field(default_factory=dict)
    # Valkey 8.1: raxAllocSize() (real node allocations) instead of the 16/element +
    # 244/node estimate of streamRadixTreeMemoryUsage().
    rax_alloc: bool = False
    # quicklist.h: 32 bytes until 6.2; `sz` became a size_t in 7.0 (40 bytes).
    quicklist_node: int = 40
    # The key lives inside the value's object (no dict entry, no key sds; kv.py):
    # "valkey-8.1" (MEMORY USAGE leaves the key out), "valkey-9", "redis-8.6".
    kv: str | None = None
    # The newest server version this profile was checked against (its sources and dumps
    # with MEMORY USAGE); a newer dump is estimated with it and the report says so.
    newest: tuple[int, int] | None = None
    # Derived from the server's sources where it differs from the profile before it, not
    # yet checked against a live server's MEMORY USAGE (none can be run here): the report
    # says so (describe).
    derived: bool = False
    description: str = ""
    large_pages: bool = dataclasses.field(default=False, init=False)  # `--target .../16p`
    cluster: bool = dataclasses.field(default=False, init=False)  # with_cluster's copies

    # The size tables are built on first use (65,537 entries each): a command that never
    # estimates memory with a profile does not pay for it.
    @functools.cached_property
    def J(self) -> list[int]:
        return _class_table(self.quantum, self.large_pages)

    @functools.cached_property
    def S(self) -> list[int]:
        return (
            _sds_exact_table(self.sds_old)
            if self.sds_exact
            else _sds_table(self.quantum, self.sds_old, self.large_pages)
        )

    @functools.cached_property
    def skiplist_node(self) -> float:
        """Expected skiplist node allocation: level L with probability 0.75 * 0.25^(L-1)."""
        return sum(0.75 * 0.25 ** (lv - 1) * self.J[24 + 16 * lv] for lv in range(1, 33))

    def j(self, n: int) -> int:
        return self.J[n] if n <= TABLE_LIMIT else jemalloc_class(n, self.quantum, self.large_pages)

    def sds(self, n: int) -> int:
        if n <= TABLE_LIMIT:
            return self.S[n]
        size = sds_header(n, self.sds_old) + n + 1
        return size if self.sds_exact else jemalloc_class(size, self.quantum, self.large_pages)

    def with_quantum(self, quantum: int, pages: bool = False) -> Profile:
        """A copy for an allocator with another quantum (`--target 8.6/16`: a distribution
        build linking the system jemalloc, which rounds small allocations to 16 bytes;
        `/16p`: jemalloc 5.3.1 as in Debian sid, large allocations in whole pages too)."""
        if quantum == self.quantum and pages == self.large_pages:
            return self
        import copy

        p = copy.copy(self)
        p.__dict__.pop("J", None)
        p.__dict__.pop("S", None)
        p.__dict__.pop("skiplist_node", None)
        p.quantum = quantum
        p.large_pages = pages
        p.name = f"{self.name.split('/')[0]}/{quantum}{'p' if pages else ''}"
        return p

    def with_cluster(self) -> Profile:
        """A copy for a cluster-mode server (per-key slot bookkeeping in the dict entry)."""
        if not self.cluster_key_extra:
            return self
        import copy

        p = copy.copy(self)
        p.cluster = True
        p.name = self.name + "+cluster"
        return p

    def __repr__(self):
        return f"Profile({self.name})"


# What Redis before 7.0 shares: no rounded blobs, exact embstr, the old dict and stream
# structs.
_OLD: dict[str, Any] = dict(
    round_blobs=False,
    embstr="exact",
    dict_struct=96,
    stream_struct=0,
    stream_prealloc=0,
    stream_lp_alloc=False,
    cg_struct=32,
    consumer_struct=24,
    quicklist_node=32,
)

# Live-server rehash state: {type: (rehash steps per added element, smallest size
# modelled)}.  <= 7.0 HSET looks the field up before adding it (2 steps), SADD adds
# directly (1), ZADD looks up first (2).  Up to 7.0 sets and zsets (and <= 6.2 hashes) grow
# from 4 buckets one add at a time; 7.0+ hashes and 7.2+ sets/zsets start pre-sized at
# their conversion from a compact encoding, so only large dicts are modelled there.
_RH_62 = {"hash": (2, 4), "set": (1, 4), "zset": (2, 4)}
_RH_70 = {"hash": (2, REHASH_MIN), "set": (1, 4), "zset": (2, 4)}
_RH_NEW = {"hash": (1, REHASH_MIN), "set": (1, REHASH_MIN), "zset": (2, REHASH_MIN)}


def _redis_before_7() -> dict[str, Profile]:
    """Redis 2.8-6.2: 16-byte quanta (2.8/3.2), sds charged at their length (4.0/5.0)."""
    return {
        "2.8": Profile(
            "2.8",
            quantum=16,
            sds_old=True,
            zsl_header=0,
            zset_extra=False,
            rehash=_RH_62,
            **_OLD,
            description="Redis 2.8 (jemalloc 3.6, 16-byte quantum; no MEMORY USAGE: "
            "the 4.0 formulas)",
        ),
        "3.2": Profile(
            "3.2",
            quantum=16,
            zsl_header=0,
            zset_extra=False,
            rehash=_RH_62,
            **_OLD,
            description="Redis 3.x (jemalloc 4.0, 16-byte quantum; no MEMORY USAGE: "
            "the 4.0 formulas)",
        ),
        "4.0": Profile(
            "4.0",
            sds_exact=True,
            key_sds8=True,
            zsl_header=0,
            zset_extra=False,
            rehash=_RH_62,
            **_OLD,
            description="Redis 4.0 (4.0.0-4.0.x early releases charged the "
            "argument 'usage' instead of the key; 4.0.14 does not)",
        ),
        "5.0": Profile(
            "5.0",
            sds_exact=True,
            zsl_header=1280,
            rehash=_RH_62,
            **_OLD,
            description="Redis 5.0 (sds charged at their length; 64-level skiplist header)",
        ),
        "6.0": Profile("6.0", rehash=_RH_62, **_OLD, description="Redis 6.0"),
        "6.2": Profile(
            "6.2",
            rehash=_RH_62,
            **{**_OLD, "stream_struct": 40, "stream_prealloc": 4096, "stream_lp_alloc": True},
            description="Redis 6.2 (stream tail listpacks preallocated)",
        ),
    }


def _redis() -> dict[str, Profile]:
    """Redis 7.0-8.10, and 7.0 as the distributions package it."""
    return {
        "7.0": Profile(
            "7.0",
            consumer_struct=24,
            cluster_key_extra=16,
            rehash=_RH_70,
            description="Redis 7.0 (upstream build, bundled jemalloc)",
        ),
        "7.2": Profile("7.2", cluster_key_extra=8, rehash=_RH_NEW, description="Redis 7.2"),
        "7.4": Profile("7.4", hfe=True, rehash=_RH_NEW, description="Redis 7.4"),
        # 8.0-m01 (7.9.224) was measured with large hashes mid-rehash; 8.0.2 never is (its
        # HSET pre-sizes the dict), so the milestone keeps its own profile under the name 8.0.
        "8.0-m": Profile(
            "8.0",
            hfe=True,
            rehash=_RH_NEW,
            description="Redis 8.0 milestone builds (7.9.x: 7.4 layout)",
        ),
        "8.0": Profile(
            "8.0",
            hfe=True,
            rehash={k: v for k, v in _RH_NEW.items() if k != "hash"},
            description="Redis 8.0 / 8.2 (7.4 layout; large hashes pre-sized)",
        ),
        # The key inside the value's object (kv.py).
        "8.2": Profile(
            "8.2",
            hfe=True,
            rehash=_RH_NEW,
            kv="redis-8.2",
            stream_struct=112,
            newest=(8, 2),
            description="Redis 8.2 / 8.4 (key and expiry inside the object; values "
            "measured as in 8.0)",
        ),
        "8.6": Profile(
            "8.6",
            hfe=True,
            rehash={**_RH_NEW, "zset": (1, REHASH_MIN)},
            newest=(8, 6),
            kv="redis-8.6",
            description="Redis 8.6 (key, expiry and short values inside the object)",
        ),
        # Redis 8.8 / 8.10: the 8.6 layout, plus sparse arrays (8.8) and hash templates (8.10),
        # whose costs come from the sources (sparsearray.h; the hash-template design), not
        # from a live server (docs/memory-model.md "Servers of late 2026").
        "8.8": Profile(
            "8.8",
            hfe=True,
            rehash={**_RH_NEW, "zset": (1, REHASH_MIN)},
            newest=(8, 8),
            kv="redis-8.6",
            derived=True,
            description="Redis 8.8 (the 8.6 layout; sparse arrays from sparsearray.h)",
        ),
        "8.10": Profile(
            "8.10",
            hfe=True,
            rehash={**_RH_NEW, "zset": (1, REHASH_MIN)},
            newest=(8, 10),
            kv="redis-8.6",
            derived=True,
            description="Redis 8.10 (the 8.8 layout; hashes that use a template hold their "
            "values only)",
        ),
        # Redis 7.0 as packaged by Debian 12 / Ubuntu 24.04 (7.0.15, system libjemalloc).
        "7.0-distro": Profile(
            "7.0-distro",
            quantum=16,
            consumer_struct=24,
            cluster_key_extra=16,
            rehash=_RH_70,
            description="Redis 7.0 linked with the system jemalloc "
            "(16-byte quantum; Debian 12 / Ubuntu 24.04 packages)",
        ),
    }


def _valkey() -> dict[str, Profile]:
    """Valkey 7.2-9.2."""
    return {
        "valkey-7.2": Profile(
            "valkey-7.2",
            server="valkey",
            cluster_key_extra=8,
            rehash=_RH_NEW,
            description="Valkey 7.2 (Redis 7.2 layout)",
        ),
        "valkey-8.0": Profile(
            "valkey-8.0",
            server="valkey",
            key="valkey-embedded",
            set_bare_keys=True,
            rehash=_RH_NEW,
            description="Valkey 8.0 (key embedded in the dict entry; set "
            "members alone in a bucket need no entry)",
        ),
        "valkey-8.1-dev": Profile(
            "valkey-8.1",
            server="valkey",
            key="valkey-embedded",
            set_bare_keys=True,
            rehash=_RH_NEW,
            rax_alloc=True,
            description="Valkey unstable of 2024 (255.255.255, 8.1 "
            "development): rax charged at its allocations",
        ),
        "valkey-9.2": Profile(
            "valkey-9.2",
            server="valkey",
            rax_alloc=True,
            hfe=True,
            kv="valkey-9",
            newest=(9, 2),
            derived=True,
            description="Valkey 9.2 (the 9.1 layout; sorted sets in a B+ tree)",
        ),
        "valkey-8.1": Profile(
            "valkey-8.1",
            server="valkey",
            rax_alloc=True,
            kv="valkey-8.1",
            newest=(8, 1),
            description="Valkey 8.1 (key inside the object, not counted by "
            "MEMORY USAGE; hashtables of 7-entry buckets)",
        ),
        "valkey-9.0": Profile(
            "valkey-9.0",
            server="valkey",
            rax_alloc=True,
            hfe=True,
            kv="valkey-9",
            newest=(9, 1),
            description="Valkey 9.0 / 9.1 (values up to 128 bytes of object embedded; field TTLs)",
        ),
    }


def _profiles() -> dict[str, Profile]:
    return {**_redis_before_7(), **_redis(), **_valkey()}


PROFILES = _profiles()
TARGETS = (
    "2.8",
    "3.2",
    "4.0",
    "5.0",
    "6.0",
    "6.2",
    "7.0",
    "7.2",
    "7.4",
    "8.0",
    "8.2",
    "8.6",
    "valkey-7.2",
    "valkey-8.0",
    "valkey-8.1",
    "valkey-9.0",
    "8.8",
    "8.10",
    "valkey-9.2",
)
_ALIASES = {
    "3.0": "3.2",
    "2.6": "2.8",
    "redis-7.0-distro": "7.0-distro",
    "valkey-8": "valkey-8.0",
    "valkey8": "valkey-8.0",
    "8": "8.0",
    "8.x": "8.0",
    "7.9": "8.0-m",
    "valkey-unstable": "valkey-8.1-dev",
    "valkey-9": "valkey-9.0",
    "valkey-9.1": "valkey-9.0",
}


def profile_for(server: str | None, version: tuple[int, int]) -> Profile:
    """The profile of a server family and (major, minor) version."""
    if server == "valkey":
        if version >= (255, 0):
            return PROFILES["valkey-8.1-dev"]
        if version >= (9, 2):
            return PROFILES["valkey-9.2"]
        if version >= (9, 0):
            return PROFILES["valkey-9.0"]
        if version >= (8, 1):
            return PROFILES["valkey-8.1"]
        if version >= (8, 0):
            return PROFILES["valkey-8.0"]
        return PROFILES["valkey-7.2"]
    if version < (3, 0):
        return PROFILES["2.8"]
    if version < (4, 0):
        return PROFILES["3.2"]
    if version < (5, 0):
        return PROFILES["4.0"]
    if version < (6, 0):
        return PROFILES["5.0"]
    if version < (6, 2):
        return PROFILES["6.0"]
    if version < (7, 0):
        return PROFILES["6.2"]
    if version < (7, 2):
        # Every 7.0 in the corpus (and most in the wild: it is what Debian 12 and Ubuntu 24.04
        # ship) links the system jemalloc; `--target 7.0` picks the upstream build.
        return PROFILES["7.0-distro"]
    if version < (7, 4):
        return PROFILES["7.2"]
    if version < (7, 9):
        return PROFILES["7.4"]
    if version < (8, 0):
        return PROFILES["8.0-m"]
    if version < (8, 2):
        return PROFILES["8.0"]
    if version < (8, 6):
        return PROFILES["8.2"]
    if version < (8, 8):
        return PROFILES["8.6"]
    if version < (8, 10):
        return PROFILES["8.8"]
    return PROFILES["8.10"]


ALLOCATORS = ("8", "16", "16p")  # `--target .../16`: the allocator's quantum (p: pages)
TARGET_ERROR = (
    "expected a version (8.1: the dump's own server), a server and version (redis-8.0, "
    "valkey-8.1; one of " + ", ".join(TARGETS) + ", 7.0-distro), an allocator (/8, /16, /16p) "
    "or both (8.1/16), optionally +cluster"
)
# Valkey's release lines (it forked Redis 7.2.4): a bare version names Valkey only on these.
VALKEY_LINES = ((7, 2), (8, 0), (8, 1), (9, 0), (9, 1), (9, 2))


def _split_allocator(t: str) -> tuple[str, str | None]:
    """('8.6', '16p') for '8.6/16p'; (t, None) without an allocator suffix."""
    base, sep, q = t.rpartition("/")
    return (base, q) if sep and q in ALLOCATORS else (t, None)


def _named_family(t: str) -> tuple[str | None, str]:
    """The server family a target names ('redis-8.0', 'valkey8.1') and the rest, normalised
    ('valkey-8.1' keeps its prefix, as PROFILES and _ALIASES spell it); (None, t) for a bare
    version ('8.1', '7.0-distro')."""
    for prefix in ("redis-", "redis"):
        if t.startswith(prefix) and t[len(prefix) :][:1].isdigit():
            rest = t[len(prefix) :]
            return "redis", _ALIASES.get("redis-" + rest, rest)
    if t.startswith("valkey"):
        t = t.replace("valkey", "valkey-").replace("--", "-") if not t.startswith("valkey-") else t
        return "valkey", t
    return None, t


def _family_profile(family: str, t: str) -> Profile | None:
    """The profile of server `family` that the version `t` names (no family prefix for redis,
    'valkey-' for valkey), or None if that server has no such version."""
    t = _ALIASES.get(t, t)
    if t in PROFILES and PROFILES[t].server == family:
        return PROFILES[t]
    m = re.fullmatch(r"(valkey-)?(\d+)(?:\.(\d+))?(?:\.\d+)*", t)
    if not m or (family == "valkey") != bool(m.group(1)):
        return None
    if m.group(3) is None and family == "redis":
        return None  # '7': which 7.x?
    major, minor = int(m.group(2)), int(m.group(3) or 0)
    if family == "redis" and major > 8 or family == "valkey" and major > 9:
        return None
    return profile_for(family, (major, minor))


def _bare_profile(t: str, family: str) -> Profile | None:
    """A version without a server ('8.1', '6.2', '7.0-distro'): the dump's own server's
    version when that server has it (Valkey: VALKEY_LINES), else the other server's."""
    t = _ALIASES.get(t, t)
    m = re.fullmatch(r"(\d+)\.(\d+)(?:\.\d+)*", t)
    valkey_has = m is not None and (int(m.group(1)), int(m.group(2))) in VALKEY_LINES
    order = ("valkey", "redis") if family == "valkey" else ("redis", "valkey")
    for fam in order:
        if fam == "valkey" and not valkey_has:
            continue
        prof = _family_profile(fam, "valkey-" + t if fam == "valkey" else t)
        if prof is not None:
            return prof
    return None


def parse_target(target: str, server: str | None = None) -> Profile:
    """The profile `--target` names for a dump written by `server` ('redis' or 'valkey'; None:
    redis).  'redis-8.0', 'valkey-8.1' name their server; a bare version ('8.1', '8.1/16')
    is the dump's own server's.  Raises ValueError for a spelling that names no profile (an
    allocator alone, '/16', keeps the dump's profile: select_profile)."""
    t = target.strip().lower()
    base, q = _split_allocator(t)
    if q is not None and _split_allocator(base)[1] is None:
        return parse_target(base, server).with_quantum(int(q.rstrip("p")), q.endswith("p"))
    family, rest = _named_family(t)
    prof = (
        _bare_profile(rest, "valkey" if server == "valkey" else "redis")
        if family is None
        else _family_profile(family, rest)
    )
    if prof is None:
        raise ValueError(f"unknown memory target {target!r}: {TARGET_ERROR}")
    return prof


def is_cluster(info) -> bool:
    """Cluster mode, where the dump shows it: slot records (Redis 7.4+ opcode 244, Valkey 8
    aux slot-info).  Redis 7.0/7.2 cluster dumps carry no marker (db 0 only is a hint, not
    proof), so they are estimated as standalone unless the target says '+cluster'."""
    return bool(getattr(info, "slot_info", None))


def split_target(target: str) -> tuple[str, bool]:
    """('7.0', True) for '7.0+cluster'."""
    t = target.strip()
    for suffix in ("+cluster", ":cluster"):
        if t.lower().endswith(suffix):
            return t[: -len(suffix)], True
    return t, False


def keeps_own_profile(target: str | None) -> bool:
    """A target that names only an allocator ('/16', '/16p+cluster'): the dump's own profile."""
    if not target:
        return True
    base = split_target(target)[0].strip().lower()
    return base == "" or _split_allocator(base)[0] == ""


def target_quantum(target: str | None) -> int:
    """The allocator quantum a `--target` names (`8.6/16`, `/16`: 16), else 8 (official builds)."""
    if target:
        q = _split_allocator(split_target(target)[0].strip().lower())[1]
        if q is not None:
            return int(q.rstrip("p"))
    return 8


def dump_server(info) -> str:
    """The server family that wrote a dump: 'valkey' or 'redis' (also when the dump does not
    say: Redis before 4.0 wrote no redis-ver)."""
    return "valkey" if getattr(info, "server", None) == "valkey" else "redis"


def describe(prof: Profile, info, target: str | None = None) -> str:
    """The report's one line on the memory model: the profile, whether it is exact for the
    dump's server (or another server's, by --target), and the allocator rounding assumed."""
    server = dump_server(info)
    label = prof.name.split("/")[0].split("+")[0]
    if not label.startswith("valkey"):
        label = "redis " + label
    else:
        label = label.replace("-", " ", 1)
    line = f"memory model: {label} profile"
    version = info.version_tuple() if hasattr(info, "version_tuple") else None
    full = getattr(info, "server_version", None) or (
        ".".join(map(str, version[:2])) if version else None
    )
    if target:
        line += f" (--target {target}"
        if prof.server != server:
            line += f": a {prof.server} profile for a {server}{' ' + full if full else ''} dump"
        line += ")"
    own = keeps_own_profile(target)
    if own and prof.newest and version and version[:2] > prof.newest and version < (255, 0):
        line += f" for {server} {full} (no exact profile)"
    if prof.derived:
        line += " (derived from the server's sources; not yet checked against a live server)"
    rounding = f"{prof.quantum}-byte allocator quantum"
    if prof.large_pages:
        rounding += ", large allocations in whole pages"
    if prof.quantum == 8 and not target:
        rounding += " (official builds; --target /16 for distribution packages)"
    return f"{line}, {rounding}"


def validate_target(target: str | None) -> None:
    """Raise ValueError (one line, with the accepted forms) if `--target` names no profile for
    a dump of either server; called once, before any dump is read."""
    if target is None:
        return
    base = split_target(target)[0]
    if not target.strip():
        raise ValueError(f"unknown memory target {target!r}: {TARGET_ERROR}")
    if keeps_own_profile(target):
        if base.strip() and _split_allocator(base.strip().lower())[1] is None:
            raise ValueError(f"unknown memory target {target!r}: {TARGET_ERROR}")
        return
    errors = []
    for server in ("redis", "valkey"):
        try:
            parse_target(base, server)
        except ValueError as e:
            errors.append(e)
    if len(errors) == 2:
        raise errors[0]


def select_profile(info, target: str | None = None) -> Profile:
    """The profile for a dump: `target` when given ('7.0', '6.2', 'valkey-8.0', '8.1/16' (the
    dump's own server's 8.1), '/16' (the dump's own profile, 16-byte quantum), '7.2+cluster'),
    else the writing server's version from the dump's aux fields.  Raises ValueError for an
    unknown target."""
    cluster = None
    own = profile_for(getattr(info, "server", None), info.version_tuple())
    if target:
        t, forced = split_target(target)
        cluster = True if forced else None
        t = t.strip().lower()
        if keeps_own_profile(target):
            q = _split_allocator(t)[1]
            prof = own if q is None else own.with_quantum(int(q.rstrip("p")), q.endswith("p"))
        else:
            prof = parse_target(t, dump_server(info))
    else:
        prof = own
    if cluster is None:
        cluster = is_cluster(info)
    return prof.with_cluster() if cluster else prof


# -- the estimate -----------------------------------------------------------------------------

DICT_ENTRY = 24
ROBJ = 16
QUICKLIST = 40
LINKEDLIST = 48  # list struct (<= 3.0 linkedlist encoding)
LIST_NODE = 24
STREAM_NACK = 24
LISTPACKEX = 32  # 7.4 listpackEx header (docs/rdb-format.md section 8.3)
HFIELD_TTL_META = 2 + 16  # mstr flags + ExpireMeta of a hash field with a TTL (7.4)


def dict_slots(n: int, rehash: tuple[int, int] | None) -> int:
    """Bucket slots MEMORY USAGE counts for a dict of n entries built by adding one entry at a
    time on a live server.  The last doubling (from s to 2s slots) happened at entry s + 1;
    each later add performs rehash[0] rehash steps, each moving one non-empty bucket of the
    old table (about (1 - 1/e) * s of them).  While that is unfinished both tables exist
    (3s slots).  Modelled for n > rehash[1] only; None disables it."""
    b = next_pow2(n)
    if rehash and n > rehash[1]:
        s = b >> 1
        if (n - s - 1) * rehash[0] < NONEMPTY * s:
            return b + s
    return b


def chained_entries(n: int, buckets: int) -> float:
    """Expected entries that need a dict entry allocation when members alone in their bucket
    are stored bare (Valkey 8.0 sets): n minus the expected number of non-empty buckets."""
    if not n:
        return 0.0
    return n - buckets * (1 - (1 - 1 / buckets) ** n)


def key_cost(key_len: int, prof: Profile) -> int:
    """What MEMORY USAGE adds for the key itself (its name and the keyspace entry)."""
    if prof.key == "valkey-embedded":
        # Valkey 8: the key sds (at least an 8-bit header) lives inside the dict entry:
        # value ptr + next ptr + header-size byte + sds header + key + NUL.
        hdr = max(3, sds_header(key_len))
        cost = prof.j(17 + hdr + key_len + 1)
    elif prof.key_usage_quirk:
        cost = prof.sds(5) + DICT_ENTRY  # 4.0 measured the argument "usage"
    elif prof.key_sds8:
        cost = max(3, sds_header(key_len)) + key_len + 1 + DICT_ENTRY  # 4.0.14 (sds_exact)
    else:
        cost = prof.sds(key_len) + DICT_ENTRY
    if prof.cluster:
        cost += prof.cluster_key_extra
    return cost


def value_cost(rec, prof: Profile) -> float:
    enc = rec.encoding
    typ = rec.type
    J = prof.j
    if enc in NEW_ENCODINGS:
        return ROBJ + new_value_cost(rec, prof)
    if typ == "string":
        n = rec.length
        if enc == "int":
            return ROBJ
        if enc == "embstr":
            if prof.embstr == "exact":
                return ROBJ + n + 2  # <= 6.2: sizeof(robj) + sdsAllocSize(), unrounded
            return J(ROBJ + 3 + n + 1)
        return ROBJ + prof.sds(n)
    blob = rec.blob_bytes
    if blob and enc in ("listpack", "ziplist", "intset", "zipmap", "listpackex"):
        size = ROBJ + (J(blob) if prof.round_blobs else blob)
        if enc == "listpackex":
            size += LISTPACKEX
        return size
    if enc == "quicklist":
        size = ROBJ + QUICKLIST
        node = prof.quicklist_node
        if prof.round_blobs:
            for nb, cnt in rec.nodes.items():
                size += cnt * (node + J(nb))
        else:
            for nb, cnt in rec.nodes.items():
                size += cnt * (node + nb)
        return size
    if enc == "hashtable":
        n = rec.length
        slots = dict_slots(n, prof.rehash.get(typ))
        size = ROBJ + prof.dict_struct + 8 * slots
        sds = prof.sds
        if typ == "set":
            if prof.set_bare_keys:
                for ln, cnt in rec.elems.items():
                    size += cnt * sds(ln)
                return size + 16 * chained_entries(n, next_pow2(n))
            entry = prof.set_entry
            for ln, cnt in rec.elems.items():
                size += cnt * (entry + sds(ln))
            return size
        for ln, cnt in rec.elems.items():
            size += cnt * (DICT_ENTRY + sds(ln))
        for ln, cnt in rec.vals.items():
            size += cnt * sds(ln)
        ttl = rec.field_ttls
        if ttl is not None and ttl.ttl_field_sizes:
            for ln, cnt in ttl.ttl_field_sizes.items():
                size += cnt * (DICT_ENTRY + J(sds_header(ln) + ln + 1 + HFIELD_TTL_META))
        return size
    if enc == "skiplist":
        n = rec.length
        slots = dict_slots(n, prof.rehash.get(typ))
        size = ROBJ + 16 + 32 + prof.dict_struct + 8 * slots + prof.zsl_header
        if not prof.zset_extra:
            size = ROBJ + 16 + 8 * slots
        sds = prof.sds
        per = DICT_ENTRY + prof.skiplist_node
        for ln, cnt in rec.elems.items():
            size += cnt * (per + sds(ln))
        return size
    if typ == "stream":
        return stream_cost(rec, prof)
    if enc == "linkedlist":
        size = ROBJ + LINKEDLIST
        for ln, cnt in rec.elems.items():
            size += cnt * (LIST_NODE + ROBJ + prof.sds(ln))
        return size
    if typ in ("list", "set", "zset", "hash") and not blob:
        return ROBJ  # empty compact value
    # Modules: the module's own mem_usage where rdbscan reads its values (rdbscan/rdb/modules.py),
    # else the serialized size, a lower bound.
    mod = rec.module
    if mod is not None:
        return ROBJ + module_value_bytes(mod, rec.serialized_bytes, J)[0]
    return ROBJ + rec.serialized_bytes


# -- the servers of late 2026 (docs/memory-model.md "Servers of late 2026") ----------------------

AR_HEADER = 80  # sizeof(redisArray): six 8-byte counters, four 4-byte ones, two pointers
AR_SLICE = 32  # sizeof(arSlice): encoding, count and the dense/sparse layout union
AR_SPARSE_KMAX = 10  # a slice of more elements than this is dense (AR_SPARSE_KMAX_DEFAULT)
AR_DENSE_MIN = 8  # AR_SLICE_MIN_ALLOC: the smallest dense window
AR_STRING_HEADER = 8  # an arString: its length, then the bytes (no terminator assumed)


def array_cost(rec, prof: Profile) -> float:
    """A Redis 8.8 sparse array (sparsearray.h): header, flat directory of slice pointers,
    slices (sparse: offsets and values; dense: a power-of-two window of values), and the
    strings of over 7 bytes (integers over 62 bits too) that do not fit a tagged word."""
    J = prof.j
    size: float = J(AR_HEADER)
    slices = rec.nodes or {}
    if slices:
        size += J(8 * next_pow2(max(slices) + 1, 1))
    for count, low, high in slices.values():
        if count > AR_SPARSE_KMAX:
            window = next_pow2(high - low + 1, AR_DENSE_MIN)
            size += J(AR_SLICE + 8 * window)
        else:
            cap = next_pow2(count, 1)
            size += J(AR_SLICE + 2 * cap + (-2 * cap) % 8 + 8 * cap)
    for ln, cnt in (rec.elems or {}).items():
        size += cnt * J(AR_STRING_HEADER + ln)
    return size


TEMPLATE_STRUCT = 32  # a template: id, field count, refcount, the names array (design doc)


def template_hash_cost(rec, prof: Profile) -> float:
    """A Redis 8.10 hash that uses a template: its values only (MEMORY USAGE leaves the shared
    names out): the values' listpack, or an array of value pointers and their sds."""
    J = prof.j
    if rec.encoding == "template-listpack":
        return J(rec.blob_bytes)
    size: float = J(8 + 8 * rec.length)  # the template pointer, then one pointer per value
    for ln, cnt in (rec.vals or {}).items():
        size += cnt * prof.sds(ln)
    return size


def template_registry_cost(info, prof: Profile) -> float:
    """The memory of a dump's hash templates, counted once (used_memory_hash_templates): per
    template its struct and names array, per field name its sds."""
    J = prof.j
    size: float = info.template_count * J(TEMPLATE_STRUCT)
    size += 8 * info.template_fields  # the names arrays' pointers
    for ln, cnt in info.template_name_lens.items():
        size += cnt * prof.sds(ln)
    return size


BTREE_SAVING = 24  # bytes per element a Valkey 9.2 B+ tree saves on the 9.1 skiplist (#4359)
NEW_ENCODINGS = ("array", "template-listpack", "template-array", "btree", "pathhash")


def new_value_cost(rec, prof: Profile, base=None) -> float:
    """The value's own allocations for the encodings of the servers of late 2026; `base` is the
    model's value_bytes for the encodings these derive from (a B+ tree from the skiplist, a
    path hash from a hashtable hash)."""
    enc = rec.encoding
    if enc == "array":
        return array_cost(rec, prof)
    if enc.startswith("template-"):
        return template_hash_cost(rec, prof)
    import copy

    twin = copy.copy(rec)
    twin.encoding = "skiplist" if enc == "btree" else "hashtable"
    cost = base(twin, prof) if base is not None else value_cost(twin, prof) - ROBJ
    if enc == "btree":
        cost -= BTREE_SAVING * rec.length
    return cost


def rax_cost(ids, count: int, prof: Profile) -> float:
    """What MEMORY USAGE charges for a rax of `count` stream ids (`ids` when the parser kept
    them, else None: then the node count is estimated as 2.5 per element, like rdbtools)."""
    known = ids is not None and len(ids) == count
    if prof.rax_alloc:
        if known:
            return RAX_STRUCT + rax_stats(ids, prof.J)[1]
        return RAX_STRUCT + (prof.J[4] if not count else 16 * count + 24 * int(1.5 * count))
    nodes = rax_stats(ids)[0] if known else (max(1, int(2.5 * count)) if count else 1)
    return rax_estimate(count, nodes)


def stream_cost(rec, prof: Profile) -> float:
    """Stream: struct + rax of nodes + listpacks + consumer groups (object.c, docs/rdb-format.md section 8.4)."""
    st = rec.stream
    J = prof.j
    size: float = ROBJ + prof.stream_struct
    if st is None:  # a stream record always has its StreamInfo
        return size
    size += rax_cost(st.node_ids, st.listpacks, prof)
    lps = rec.nodes or {}
    pre = prof.stream_prealloc
    if not prof.stream_lp_alloc and not pre:
        size += sum(nb * cnt for nb, cnt in lps.items())
    else:
        tail = st.tail_lp_bytes
        for nb, cnt in lps.items():
            size += cnt * (J(nb) if prof.stream_lp_alloc else nb)
        if pre:
            # Live server: the tail listpack, and nodes closed by the byte limit before
            # reaching stream-node-max-entries, keep their preallocated 4 KiB (t_stream.c).
            for nb, cnt in st.lp_unfilled.items():
                if nb < pre:
                    size += cnt * (J(pre) - (J(nb) if prof.stream_lp_alloc else nb))
            if tail is not None and tail < pre:
                size += J(pre) - (J(tail) if prof.stream_lp_alloc else tail)
    for g in st.groups:
        pel = g.pending
        size += prof.cg_struct + rax_cost(g.pending_ids, pel, prof) + STREAM_NACK * pel
        for c in g.consumers:
            size += prof.consumer_struct + len(c.name) + rax_cost(c.pending_ids, c.pending, prof)
    return size


# -- capacity planning column (docs/rdb-format.md section 8.6) ---------------------------------------------------

EXPIRES_ENTRY = 24


def bucket_shares(resizedb: dict, db: int) -> tuple[float, float]:
    """Per-key share of db's main and expires bucket arrays, from RESIZEDB."""
    keys, expires = resizedb.get(db, (0, 0))
    main = 8 * next_pow2(keys) / keys if keys else 0.0
    exp = 8 * next_pow2(expires) / expires if expires else 0.0
    return main, exp


def total(mem: int, has_ttl: bool, shares: tuple[float, float]) -> int:
    """memory_total_bytes: MEMORY USAGE + main bucket share (+ expires entry and bucket share).
    The compiled record loop (_batch.KeyColumns._estimate) makes the same float additions
    and rounding; tests/test_speedups.py compares the two."""
    t = mem + shares[0]
    if has_ttl:
        t += EXPIRES_ENTRY + shares[1]
    return int(round(t))
