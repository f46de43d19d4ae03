"""Memory model: what `MEMORY USAGE key SAMPLES 0` would report for a key, from what the parser
measured (rdb-format.md section 8).  First model: Redis 4.0-7.4 formulas with jemalloc size
classes; other profiles reuse the nearest one.  Its accuracy is tracked by its own issue.
"""
from __future__ import annotations

from functools import lru_cache

DICT_ENTRY = 24
ROBJ = 16
QUICKLIST = 40
QUICKLIST_NODE = 32
SKIPLIST_NODE_AVG = 45.84  # E[J(24 + 16 L)] with P(L) = 0.75 * 0.25^(L-1)


def _jemalloc_table(limit: int = 1 << 16) -> list[int]:
    table = [0] * (limit + 1)
    for n in range(limit + 1):
        table[n] = _jemalloc_calc(n)
    return table


def _jemalloc_calc(n: int) -> int:
    if n <= 8:
        return 8
    if n <= 64:
        return (n + 7) & ~7
    g = (n - 1).bit_length() - 1
    step = 1 << (g - 2)
    return (n + step - 1) & ~(step - 1)


_J = _jemalloc_table()
_J_LIMIT = len(_J) - 1


def jemalloc(n: int) -> int:
    """Usable size jemalloc (8-byte quantum, as bundled with Redis) returns for n bytes."""
    return _J[n] if n <= _J_LIMIT else _jemalloc_calc(n)


def sds_header(n: int) -> int:
    if n < 32:
        return 1 if n else 3
    if n < 256:
        return 3
    if n < 65536:
        return 5
    if n < 1 << 32:
        return 9
    return 17


@lru_cache(maxsize=4096)
def sds_alloc(n: int) -> int:
    return jemalloc(sds_header(n) + n + 1)


def _next_pow2(n: int) -> int:
    b = 4
    while b < n:
        b <<= 1
    return b


class Profile:
    """Struct sizes and rounding rules of one server generation."""

    def __init__(self, name: str, *, dict_struct: int, round_blobs: bool, stream_struct: int,
                 cg_struct: int, consumer_struct: int, key_extra: int = 0):
        self.name = name
        self.dict_struct = dict_struct
        self.round_blobs = round_blobs
        self.stream_struct = stream_struct
        self.cg_struct = cg_struct
        self.consumer_struct = consumer_struct
        self.key_extra = key_extra


PROFILES = {
    "4.0": Profile("4.0", dict_struct=96, round_blobs=False, stream_struct=0, cg_struct=32,
                   consumer_struct=24),
    "6.2": Profile("6.2", dict_struct=96, round_blobs=False, stream_struct=0, cg_struct=32,
                   consumer_struct=24),
    "7.0": Profile("7.0", dict_struct=56, round_blobs=True, stream_struct=80, cg_struct=40,
                   consumer_struct=24),
    "7.2": Profile("7.2", dict_struct=56, round_blobs=True, stream_struct=80, cg_struct=40,
                   consumer_struct=32),
}


def profile_for(version: tuple[int, int]) -> Profile:
    if version < (6, 2):
        return PROFILES["4.0"]
    if version < (7, 0):
        return PROFILES["6.2"]
    if version < (7, 2):
        return PROFILES["7.0"]
    return PROFILES["7.2"]


def select_profile(info, target: str | None = None) -> Profile:
    """The profile for a dump: `target` (e.g. '7.0', 'valkey-8.0') when given, else the
    writing server's version from the dump's aux fields."""
    if target:
        parts = target.split("-")[-1].split(".")
        return profile_for((int(parts[0]), int(parts[1]) if len(parts) > 1 else 0))
    return profile_for(info.version_tuple())


def _rax(elements: int) -> int:
    nodes = max(1, int(2.5 * elements)) if elements else 1
    return 16 * elements + 244 * nodes


def estimate(rec, prof: Profile) -> int:
    """Estimated MEMORY USAGE of one key."""
    key_part = sds_alloc(len(rec.key)) + DICT_ENTRY + prof.key_extra
    enc = rec.encoding
    rb = prof.round_blobs
    if rec.type == "string":
        n = rec.length
        if enc == "int":
            return key_part + ROBJ
        if enc == "embstr":
            return key_part + jemalloc(ROBJ + sds_header(n) + n + 1)
        return key_part + ROBJ + sds_alloc(n)
    if rec.blob and enc in ("listpack", "ziplist", "intset", "zipmap", "listpackex"):
        value = ROBJ + (jemalloc(rec.blob) if rb else rec.blob)
        if enc == "listpackex":
            value += 32
        return key_part + value
    if enc == "quicklist":
        nodes = rec.nodes or {}
        size = ROBJ + QUICKLIST
        for nb, cnt in nodes.items():
            size += cnt * (QUICKLIST_NODE + (jemalloc(nb) if rb else nb))
        return key_part + size
    if enc == "linkedlist":
        size = ROBJ + 48
        for ln, cnt in (rec.elems or {}).items():
            size += cnt * (24 + ROBJ + sds_alloc(ln))
        return key_part + size
    if enc == "hashtable":
        buckets = 8 * _next_pow2(rec.length) if rec.length else 0
        size = ROBJ + prof.dict_struct + buckets
        for ln, cnt in (rec.elems or {}).items():
            size += cnt * (DICT_ENTRY + sds_alloc(ln))
        for ln, cnt in ((rec.extra or {}).get("ttl_field_sizes") or {}).items():
            size += cnt * (DICT_ENTRY + jemalloc(sds_header(ln) + ln + 1 + 18))
        for ln, cnt in (rec.vals or {}).items():
            size += cnt * sds_alloc(ln)
        return key_part + size
    if enc == "skiplist":
        buckets = 8 * _next_pow2(rec.length) if rec.length else 0
        size = ROBJ + 16 + 32 + prof.dict_struct + buckets + 640
        for ln, cnt in (rec.elems or {}).items():
            size += cnt * (sds_alloc(ln) + DICT_ENTRY + SKIPLIST_NODE_AVG)
        return key_part + int(size)
    if rec.type == "stream":
        ex = rec.extra or {}
        size = ROBJ + prof.stream_struct
        for nb, cnt in (rec.nodes or {}).items():
            size += cnt * (jemalloc(nb) if rb else nb)
        size += _rax(ex.get("listpacks", 0))
        for g in ex.get("groups", ()):
            size += prof.cg_struct + _rax(g["pending"]) + 24 * g["pending"]
            for c in g["consumers"]:
                size += prof.consumer_struct + len(c["name"]) + _rax(c["pending"])
        return key_part + size
    # Modules and anything unmodelled: the serialized size is the best guess we have.
    return key_part + ROBJ + rec.serialized_bytes
