"""The memory model against MEMORY USAGE (fixture manifests) and against rdb-format.md section 8
(size classes, sds headers, the documented 7.2 examples)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import memory_accuracy as accuracy  # tests/memory_accuracy.py (bench/memory_accuracy.py)
import pytest
from common import FIXTURES, ROOT

from rdbscan.model import memory
from rdbscan.model.estimate import estimate
from rdbscan.model.memory import (
    PROFILES,
    TABLE_LIMIT,
    TARGETS,
    jemalloc_class,
    next_pow2,
    rax_nodes,
    sds_header,
    select_profile,
)

MEDIAN_MAX, P95_MAX, TOTAL_MAX = 0.01, 0.05, 0.02


# -- size classes and headers (section 8.2 / 8.3) --------------------------------------------

DOC_CLASSES = [
    8,
    16,
    24,
    32,
    40,
    48,
    56,
    64,
    80,
    96,
    112,
    128,
    160,
    192,
    224,
    256,
    320,
    384,
    448,
    512,
    640,
    768,
    896,
    1024,
    1280,
    4096,
    5120,
    6144,
    7168,
    8192,
    10240,
    12288,
    14336,
    16384,
    20480,
]


def test_jemalloc_classes_from_the_doc():
    for c in DOC_CLASSES:
        assert jemalloc_class(c) == c
    classes = sorted({jemalloc_class(n) for n in range(1, 20481)})
    assert [c for c in classes if c <= 1280] == [c for c in DOC_CLASSES if c <= 1280]
    assert [c for c in classes if 4096 <= c <= 20480] == [c for c in DOC_CLASSES if c >= 4096]
    assert jemalloc_class(0) == 8 and jemalloc_class(9) == 16 and jemalloc_class(65) == 80
    assert jemalloc_class(1025) == 1280 and jemalloc_class(4097) == 5120
    assert jemalloc_class(1 << 20) == 1 << 20 and jemalloc_class((1 << 20) + 1) == 1310720


def test_jemalloc_16_byte_quantum():
    # Redis 3.x / system jemalloc: 17-32 -> 32, 33-48 -> 48 (section 8.2)
    assert [jemalloc_class(n, 16) for n in (8, 9, 17, 32, 33, 48, 49, 65, 129)] == [
        8,
        16,
        32,
        32,
        48,
        48,
        64,
        80,
        160,
    ]


def test_precomputed_tables_match_the_rule():
    # every size of every table (built a size class or a header run at a time), and past them,
    # for each kind of table: quantum 8 or 16, sds headers old or not, sizes exact, whole pages
    kinds = {}
    for prof in PROFILES.values():
        for p in (prof, prof.with_quantum(16, pages=True)):
            kinds.setdefault((p.quantum, p.sds_old, p.sds_exact, p.large_pages), p)
    assert set(kinds) == {
        (8, False, False, False),
        (16, False, False, False),
        (16, True, False, False),
        (8, False, True, False),
        (16, False, False, True),
        (16, True, False, True),
        (16, False, True, True),
    }
    for (q, old, exact, pages), prof in kinds.items():
        for n in list(range(0, TABLE_LIMIT + 1)) + [70000, 1 << 24]:
            assert prof.j(n) == jemalloc_class(n, q, pages), (n, q, pages)
            size = sds_header(n, old) + n + 1
            assert prof.sds(n) == (size if exact else jemalloc_class(size, q, pages)), (n, q, old)


def test_sds_headers():
    assert [
        sds_header(n) for n in (0, 1, 31, 32, 255, 256, 65535, 65536, (1 << 32) - 1, 1 << 32)
    ] == [1, 1, 1, 3, 3, 5, 5, 9, 9, 17]
    assert sds_header(10, old=True) == 8


def test_next_pow2():
    assert [next_pow2(n) for n in (0, 1, 4, 5, 8, 9, 513, 3000)] == [4, 4, 4, 8, 8, 16, 1024, 4096]


class Rec:
    """A KeyRecord stand-in."""

    def __init__(self, key, type, encoding, length, **kw):
        self.key, self.type, self.encoding, self.length = key, type, encoding, length
        self.blob_bytes = kw.get("blob", 0)
        self.elems = kw.get("elems")
        self.vals = kw.get("vals")
        self.nodes = kw.get("nodes")
        self.field_ttls = kw.get("field_ttls")
        self.stream = kw.get("stream")
        self.module = None
        self.offset, self.end = 0, kw.get("serialized", 0)

    @property
    def serialized_bytes(self):
        return self.end - self.offset

    @property
    def key_length(self):
        return len(self.key)


def test_documented_72_examples():
    """redis.io MEMORY USAGE examples (section 8.1)."""
    p = PROFILES["7.2"]
    assert estimate(Rec(b"", "string", "embstr", 0), p) == 56
    assert estimate(Rec(b"foo", "string", "embstr", 3), p) == 56
    assert estimate(Rec(b"foo2", "string", "embstr", 5), p) == 64
    assert estimate(Rec(b"foo3", "string", "raw", 100), p) == 160


def test_valkey_80_key_is_embedded_in_the_entry():
    # counter:1 (10 bytes) holding an int: robj 16 + entry J(17 + 3 + 10 + 1) = 32
    assert estimate(Rec(b"counter:10", "string", "int", 2), PROFILES["valkey-8.0"]) == 48


def test_quicklist_node_is_40_bytes_since_70():
    """quicklist.h: `sz` became a size_t in 7.0 (node 32 -> 40 bytes); live MEMORY USAGE of a
    30 M-element list was exactly 8 x 53,685 nodes above the 32-byte figure."""
    nodes = {8192: 53_685}  # a size class: rounded or not, the same bytes
    lst = Rec(b"l", "list", "quicklist", 30_000_000, nodes=nodes)
    node_bytes = 53_685 * 8192
    for name, node in (("6.2", 32), ("7.0", 40), ("7.4", 40), ("8.0", 40), ("valkey-8.0", 40)):
        p = PROFILES[name]
        want = memory.key_cost(1, p) + 16 + 40 + 53_685 * node + node_bytes
        assert estimate(lst, p) == want, name


def test_allocator_quantum_from_the_target():
    """`--target 8.0/16`: the same layout with the system jemalloc's 16-byte quantum."""
    p = select_profile(Info("redis", (8, 0)), "8.0/16")
    assert (p.name, p.quantum) == ("8.0/16", 16)
    assert select_profile(Info("redis", (8, 0))).quantum == 8  # official builds
    assert select_profile(Info("redis", (7, 2)), "redis-8.0/8").name == "8.0"
    # a 20-byte value with a 10-byte key: embstr J(16 + 3 + 20 + 1) = 40 / 48
    s = Rec(b"k" * 10, "string", "embstr", 20)
    assert memory.value_cost(s, PROFILES["8.0"]) == 40
    assert memory.value_cost(s, p) == 48
    assert PROFILES["8.0"].quantum == 8 and PROFILES["8.0"].j(33) == 40  # copy is separate
    c = select_profile(Info("redis", (8, 0), [(0, 1, 0)]), "8.0/16")
    assert c.quantum == 16 and c.cluster is False  # 8.0 has no per-key cluster bytes
    with pytest.raises(ValueError, match="unknown memory target"):
        select_profile(Info("redis", (8, 0)), "8.0/12")


def test_key_inside_the_object_strings():
    """Redis 8.6 kvobj, Valkey 8.1 / 9 robj with embedded key (object.c of each)."""
    from rdbscan.model.kv import string_embedded

    r86, v81, v9 = PROFILES["8.6"], PROFILES["valkey-8.1"], PROFILES["valkey-9.0"]
    # redis 8.6: 16 + key + 3 + 4 + value <= 64
    assert string_embedded(20, 21, False, "redis-8.6", 8)
    assert not string_embedded(20, 22, False, "redis-8.6", 8)
    assert string_embedded(20, 21, True, "redis-8.6", 8)  # the TTL is not counted
    # valkey 8.1: the TTL's 8 bytes count unless the first allocation had room for them
    assert string_embedded(20, 21, False, "valkey-8.1", 8)
    assert not string_embedded(20, 21, True, "valkey-8.1", 8)  # 44 -> class 48: no room
    assert string_embedded(20, 13, True, "valkey-8.1", 8)
    assert string_embedded(20, 21, True, "valkey-8.1", 16) is False  # J16(64) = 64
    assert string_embedded(10, 20, True, "valkey-8.1", 16)  # 53 -> 64: room for 8
    # valkey 9: up to 128 bytes of object; values to ~100 bytes with a short key
    assert string_embedded(10, 100, False, "valkey-9", 8)
    assert not string_embedded(10, 110, False, "valkey-9", 8)
    # memory: (key 10 bytes, value 20 bytes)
    emb = Rec(b"k" * 10, "string", "embstr", 20)
    emb.expire_ms = None
    assert estimate(emb, r86) == 56  # J(16 + 1 + 1+10+1 + 3+20+1 = 53)
    assert estimate(emb, v81) == 56  # the same allocation, all counted
    assert estimate(emb, v9) == 48  # J(45): the value pointer reused
    num = Rec(b"counter:10", "string", "int", 2)
    num.expire_ms = None
    assert estimate(num, v81) == 16  # only sizeof(robj): the key not counted
    assert estimate(num, r86) == 32  # J(16 + 1 + 1+10+1)
    num.expire_ms = 1
    assert estimate(num, r86) == 40  # + the expiry slot


def test_redis82_embstr_counts_the_expiry():
    """Redis 8.2 kvobjSet counts the expiry's 8 bytes in the 64-byte sum (8.6 leaves them out),
    in cluster mode as standalone.  OBJECT ENCODING of Redis 8.2.3 (upstream build, 8-byte
    quantum; the same standalone and with cluster-enabled yes) for SET k v, then EXPIRE:"""
    from rdbscan.model.kv import string_embedded

    measured = {  # (key length, value length, TTL): OBJECT ENCODING
        (19, 22, False): "embstr",  # 16 + 19 + 3 + 4 + 22 = 64
        (19, 22, True): "raw",  # + 8 = 72 (8.6 keeps it embstr)
        (19, 14, True): "embstr",  # 16 + 19 + 3 + 8 + 4 + 14 = 64
        (19, 15, True): "raw",
        (18, 10, True): "embstr",
        (16, 28, False): "raw",  # 67
        (21, 20, True): "raw",
        (25, 20, False): "raw",
    }
    for (klen, vlen, ttl), enc in measured.items():
        got = string_embedded(klen, vlen, ttl, "redis-8.2", 8)
        assert ("embstr" if got else "raw") == enc, (klen, vlen, ttl)
    assert string_embedded(19, 22, True, "redis-8.6", 8)
    # 16-byte quantum: the first allocation J16(16 + 13 + 4 + 4 = 37) = 48 keeps 11 bytes
    # spare, room for the expiry: no re-creation
    assert string_embedded(10, 4, True, "redis-8.2", 16)
    # J16(16 + 13 + 4 + 30 = 63) = 64 keeps 1; re-created: 16 + 10 + 3 + 8 + 4 + 30 = 71 > 64
    assert string_embedded(10, 30, True, "redis-8.2", 16) is False


def test_key_inside_the_object_hashtables():
    """Valkey 8.1+ hashtable: 72-byte struct (80 in 9.x) and 64-byte buckets of 7."""
    from rdbscan.model.kv import hashtable_bytes, ht_buckets

    assert [ht_buckets(n) for n in (1, 7, 8, 14, 15, 129, 513, 3000)] == [
        1,
        1,
        2,
        2,
        4,
        32,
        128,
        512,
    ]
    v81 = PROFILES["valkey-8.1"]
    assert hashtable_bytes(7, v81) > 72 + 64  # a full bucket may chain
    assert hashtable_bytes(2000, v81) >= 72 + 64 * (256 + 512)  # still rehashing from 256


def test_profiles_for_todays_servers():
    assert select_profile(Info("redis", (8, 0))).name == "8.0"
    assert select_profile(Info("redis", (8, 2))).name == "8.2"
    assert select_profile(Info("redis", (8, 4))).name == "8.2"
    assert select_profile(Info("redis", (8, 6))).name == "8.6"
    assert select_profile(Info("valkey", (8, 1))).name == "valkey-8.1"
    assert select_profile(Info("valkey", (9, 1))).name == "valkey-9.0"
    p = select_profile(Info("redis", (8, 6)), "redis-8.6/16p")
    assert (p.name, p.quantum, p.large_pages) == ("8.6/16p", 16, True)
    assert p.j(70_009) == 73_728  # jemalloc 5.3.1 (sid)
    assert PROFILES["8.6"].with_quantum(16).j(70_009) == 81_920  # jemalloc 5.3.0
    assert memory.target_quantum("valkey-9.1/16") == 16
    assert memory.target_quantum("8.6") == 8 and memory.target_quantum(None) == 8


def test_memory_total_adds_buckets_and_expires():
    shares = memory.bucket_shares({0: (500, 96)}, 0)
    assert shares == (8 * 512 / 500, 8 * 128 / 96)
    assert memory.total(100, False, shares) == round(100 + 8 * 512 / 500)
    assert memory.total(100, True, shares) == round(100 + 8 * 512 / 500 + 24 + 8 * 128 / 96)
    assert memory.bucket_shares({}, 3) == (0.0, 0.0)


# -- rax node count ---------------------------------------------------------------------------


def _brute_rax(keys) -> int:
    trie: dict = {}
    for k in sorted(set(keys)):
        t = trie
        for b in k:
            t = t.setdefault(b, {})

    def count(t) -> int:
        if not t:
            return 1
        total = 1
        for c in t.values():
            length, cur = 1, c
            while len(cur) == 1:
                cur = next(iter(cur.values()))
                length += 1
            if len(t) >= 2 and length > 1:
                total += 1
            total += count(cur)
        return total

    return count(trie)


def test_rax_nodes_against_a_trie():
    rnd = random.Random(7)
    assert rax_nodes([]) == 1
    for _ in range(500):
        base = rnd.randrange(1 << 40)
        ids = set()
        n = rnd.randrange(1, 40)
        while len(ids) < n:
            ms = base + rnd.randrange(rnd.choice([4, 500, 1 << 20]))
            seq = rnd.choice([0, 1, 2, rnd.randrange(1 << 16)])
            ids.add(ms.to_bytes(8, "big") + seq.to_bytes(8, "big"))
        ids = list(ids)
        assert rax_nodes(ids) == _brute_rax(ids)


# -- profile selection ------------------------------------------------------------------------


class Info:
    def __init__(self, server, version, slot_info=()):
        self.server, self._v, self.slot_info = server, version, list(slot_info)

    def version_tuple(self):
        return self._v


@pytest.mark.parametrize("target", TARGETS)
def test_every_documented_target_is_accepted(target):
    assert select_profile(Info("redis", (7, 2)), target).name == target


@pytest.mark.parametrize("target", ["9.9", "foo", "valkey-x", "7"])
def test_unknown_target_is_a_clear_error(target):
    with pytest.raises(ValueError, match="unknown memory target"):
        select_profile(Info("redis", (7, 2)), target)


def test_profile_from_aux():
    assert select_profile(Info("redis", (7, 9))).name == "8.0"  # 8.0-m01 = 7.9.224
    assert select_profile(Info("valkey", (255, 255))).name == "valkey-8.1"
    assert select_profile(Info("valkey", (8, 0))).name == "valkey-8.0"
    assert select_profile(Info("redis", (6, 2))).name == "6.2"
    assert select_profile(Info("redis", (2, 8))).name == "2.8"
    assert select_profile(Info("redis", (7, 0))).name == "7.0-distro"
    assert select_profile(Info("redis", (7, 2), [(0, 1, 0)])).name == "7.2+cluster"
    assert select_profile(Info("redis", (7, 0)), "7.0+cluster").cluster
    assert not select_profile(Info("redis", (7, 4), [(0, 1, 0)])).cluster_key_extra


# -- accuracy against the fixtures' MEMORY USAGE ----------------------------------------------


def _bounded_dumps(root: Path) -> list[Path]:
    out = []
    for d in accuracy.find_dumps(root):
        label = d.relative_to(root).parts[0]
        if label == "live":  # a few dozen keys each, made for the parser (slot-info, module
            continue  # values); tests/test_modules.py checks module memory itself
        if label.startswith("redis-"):
            major = int(label.split("-")[1].split(".")[0])
            if major < 5:  # 4.0 measured the wrong argument; 2.8/3.2 have no MEMORY USAGE
                continue
        out.append(d)
    return out


FIXTURE_DUMPS = _bounded_dumps(FIXTURES)


def _check(d: Path):
    r = accuracy.evaluate(d)
    assert r is not None, f"{d}: no MEMORY USAGE to compare with"
    where = f"{d} ({r['profile'].name}, {r['n']} keys)"
    assert r["median"] <= MEDIAN_MAX, f"{where}: median error {r['median']:.2%}"
    assert r["p95"] <= P95_MAX, f"{where}: p95 error {r['p95']:.2%}"
    assert abs(r["total"]) <= TOTAL_MAX, f"{where}: total error {r['total']:+.2%}"
    assert r["enc_wrong"] == [], f"{where}: encodings differ from the manifest"
    return r


def test_fixture_set_is_complete():
    labels = {d.relative_to(FIXTURES).parts[0] for d in FIXTURE_DUMPS}
    assert {
        "redis-5.0.14",
        "redis-6.0.20",
        "redis-6.2.16",
        "redis-7.0.15",
        "redis-7.2.6",
        "redis-7.4.1",
        "redis-8.0-m01",
        "valkey-7.2.7",
        "valkey-8.0.1",
        "valkey-unstable-20241025",
        "redis-8.0.2",
        "redis-8.2.3",
        "redis-8.6.3",
        "valkey-8.1.1",
        "valkey-9.1.2",
    } <= labels
    assert sum(1 for d in FIXTURE_DUMPS if d.name == "cluster") == 5


@pytest.mark.parametrize("dump", FIXTURE_DUMPS, ids=lambda d: str(d.relative_to(FIXTURES)))
def test_memory_usage_bounds(dump):
    _check(dump)


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("RDBSCAN_CORPUS"), reason="set RDBSCAN_CORPUS")
def test_memory_usage_bounds_whole_corpus():
    root = Path(os.environ["RDBSCAN_CORPUS"])
    failures = []
    for d in _bounded_dumps(root):
        try:
            _check(d)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_cost_has_no_per_element_work():
    """The estimate walks histograms, not elements: a 10**6-element hash costs the same."""
    p = PROFILES["7.4"]
    big = Rec(b"h", "hash", "hashtable", 10**6, elems={8: 10**6}, vals={100: 10**6})
    assert estimate(big, p) > 10**8


# -- the report says which model it used ------------------------------------------------------


def _newer_dump(tmp_path, version: str) -> str:
    import rdbwriter as W

    body = W.key(0, b"k1", W.string(b"v" * 20)) + W.key(0, b"n", W.string(b"12"))
    path = tmp_path / "newer.rdb"
    path.write_bytes(W.rdb(body, version=13, aux={"redis-ver": version}))
    return str(path)


@pytest.mark.parametrize(
    "version,target,line",
    [
        (
            "8.12.0",
            None,
            "memory model: redis 8.10 profile for redis 8.12.0 (no exact profile) (derived "
            "from the server's sources; not yet checked against a live server), "
            "8-byte allocator quantum (official builds; --target /16 for "
            "distribution packages)",
        ),
        (
            "8.8.0",
            None,
            "memory model: redis 8.8 profile (derived from the server's sources; not yet "
            "checked against a live server), 8-byte allocator quantum (official builds; "
            "--target /16 for distribution packages)",
        ),
        (
            "8.6.3",
            None,
            "memory model: redis 8.6 profile, 8-byte allocator quantum (official "
            "builds; --target /16 for distribution packages)",
        ),
        (
            "8.6.3",
            "8.6/16",
            "memory model: redis 8.6 profile (--target 8.6/16), 16-byte allocator quantum",
        ),
        (
            "8.6.3",
            "redis-8.6/16p",
            "memory model: redis 8.6 profile (--target redis-8.6/16p), "
            "16-byte allocator quantum, large allocations in whole pages",
        ),
    ],
)
def test_dumps_table_and_report_name_the_model(tmp_path, version, target, line):
    import duckdb

    from rdbscan.db.load import load
    from rdbscan.reports import report as rpt
    from rdbscan.reports.engine.database import open_database

    db = str(tmp_path / "x.duckdb")
    load([_newer_dump(tmp_path, version)], db, target=target)
    con = duckdb.connect(db)
    profile, model = con.execute("SELECT memory_profile, memory_model FROM dumps").fetchone()
    mem = dict(con.execute("SELECT key, memory_bytes FROM keys").fetchall())
    con.close()
    assert model == line
    newest = {"8.12.0": "8.10", "8.8.0": "8.8"}.get(version, "8.6")
    assert profile == (target.removeprefix("redis-") if target else newest)
    # k1 (2 bytes) holding 20 bytes: embstr J(16 + 1 + 1+2+1 + 3+20+1 = 45); n: J(21)
    assert mem == ({"k1": 48, "n": 24} if not target else {"k1": 48, "n": 32})
    con = open_database(db)
    try:
        overview = rpt.build_report(con, rpt.ReportOptions(sections=("overview",)))["overview"]
    finally:
        con.close()
    assert overview["memory_model"] == line
    notes = [n for n in overview["notes"] if "memory model" in n.lower()]
    assert notes == ([line[0].upper() + line[1:] + "."] if "no exact" in line else [])


# -- --target forms: the dump's own server, an allocator alone, another server ------------------

SAMPLES = ROOT / "sample_dumps"
OWN = "8-byte allocator quantum (official builds; --target /16 for distribution packages)"


def _load_model(tmp_path, dump: Path, target):
    """(dumps.memory_profile, dumps.memory_model, {key: (memory_bytes, memory_total_bytes)})."""
    import duckdb

    from rdbscan.db.load import load

    db = str(tmp_path / f"t{abs(hash((str(dump), target)))}.duckdb")
    [res] = load([str(dump)], db, target=target)
    assert res.complete
    con = duckdb.connect(db)
    profile, model = con.execute("SELECT memory_profile, memory_model FROM dumps").fetchone()
    mem = {
        (d, bytes(k)): (m, t)
        for d, k, m, t in con.execute(
            "SELECT db, key_bytes, memory_bytes, memory_total_bytes FROM keys"
        ).fetchall()
    }
    con.close()
    return profile, model, mem


@pytest.mark.parametrize(
    "dump,target,profile,line",
    [
        ("valkey-8.0.1.rdb", None, "valkey-8.0", f"memory model: valkey 8.0 profile, {OWN}"),
        # a bare version: the dump's own server's (valkey 8.0 here, not redis 8.0)
        (
            "valkey-8.0.1.rdb",
            "8.0",
            "valkey-8.0",
            "memory model: valkey 8.0 profile (--target 8.0), 8-byte allocator quantum",
        ),
        (
            "valkey-8.0.1.rdb",
            "8.1/16",
            "valkey-8.1/16",
            "memory model: valkey 8.1 profile (--target 8.1/16), 16-byte allocator quantum",
        ),
        # the allocator alone: the dump's own profile
        (
            "valkey-8.0.1.rdb",
            "/16",
            "valkey-8.0/16",
            "memory model: valkey 8.0 profile (--target /16), 16-byte allocator quantum",
        ),
        (
            "valkey-8.0.1.rdb",
            "/16p",
            "valkey-8.0/16p",
            "memory model: valkey 8.0 profile (--target /16p), 16-byte allocator quantum, "
            "large allocations in whole pages",
        ),
        (
            "valkey-8.0.1.rdb",
            "/8",
            "valkey-8.0",
            "memory model: valkey 8.0 profile (--target /8), 8-byte allocator quantum",
        ),
        # another server's profile: allowed, and said
        (
            "valkey-8.0.1.rdb",
            "redis-8.0",
            "8.0",
            "memory model: redis 8.0 profile (--target redis-8.0: a redis profile for a "
            "valkey 8.0.1 dump), 8-byte allocator quantum",
        ),
        # no Valkey 6.2: a bare 6.2 can only be Redis's, and the line says so
        (
            "valkey-8.0.1.rdb",
            "6.2",
            "6.2",
            "memory model: redis 6.2 profile (--target 6.2: a redis profile for a "
            "valkey 8.0.1 dump), 8-byte allocator quantum",
        ),
        ("redis-7.4.1.rdb", None, "7.4", f"memory model: redis 7.4 profile, {OWN}"),
        (
            "redis-7.4.1.rdb",
            "8.1",
            "8.0",
            "memory model: redis 8.0 profile (--target 8.1), 8-byte allocator quantum",
        ),
        (
            "redis-7.4.1.rdb",
            "/16",
            "7.4/16",
            "memory model: redis 7.4 profile (--target /16), 16-byte allocator quantum",
        ),
        (
            "redis-7.4.1.rdb",
            "valkey-8.1/16",
            "valkey-8.1/16",
            "memory model: valkey 8.1 profile (--target valkey-8.1/16: a valkey profile for a "
            "redis 7.4.1 dump), 16-byte allocator quantum",
        ),
        (
            "redis-7.4.1.rdb",
            "9.1",
            "valkey-9.0",
            "memory model: valkey 9.0 profile (--target 9.1: a valkey profile for a redis "
            "7.4.1 dump), 8-byte allocator quantum",
        ),
        (
            "redis-6.2.16.rdb",
            "/16+cluster",
            "6.2/16",
            "memory model: redis 6.2 profile (--target /16+cluster), 16-byte allocator quantum",
        ),
        (
            "redis-7.4.1-cluster.rdb",
            "/16",
            "7.4/16",
            "memory model: redis 7.4 profile (--target /16), 16-byte allocator quantum",
        ),
    ],
)
def test_target_forms_on_the_sample_dumps(tmp_path, dump, target, profile, line):
    got_profile, model, _ = _load_model(tmp_path, SAMPLES / dump, target)
    assert (got_profile, model) == (profile, line)


def test_allocator_alone_is_the_own_profile_per_key(tmp_path):
    """`/16` on a Valkey 8.0 dump: the same figures, key by key, as `valkey-8.0/16`."""
    dump = SAMPLES / "valkey-8.0.1.rdb"
    _, _, alone = _load_model(tmp_path, dump, "/16")
    _, _, named = _load_model(tmp_path, dump, "valkey-8.0/16")
    _, _, own = _load_model(tmp_path, dump, None)
    assert alone == named and len(alone) == 562
    assert alone != own  # the quantum did change figures


def _median_error(mem, manifest: Path) -> float:
    import json
    import statistics

    from manifest_compare import manifest_key

    m = json.loads(manifest.read_text())
    return statistics.median(
        abs(mem[(e["db"], manifest_key(e))][0] - e["memory_usage"]) / e["memory_usage"]
        for e in m["keys"]
    )


def test_bare_version_is_the_dumps_own_server(tmp_path):
    """Valkey 8.1.1 (Debian's package, 16-byte quantum): `--target 8.1/16` is Valkey 8.1, key by
    key, and as close to MEMORY USAGE (median 0.00 %); Redis 8.0's profile, which the bare
    version used to pick, is 43.75 % off."""
    d = FIXTURES / "valkey-8.1.1" / "small"
    p_bare, line, bare = _load_model(tmp_path, d / "dump.rdb", "8.1/16")
    p_named, _, named = _load_model(tmp_path, d / "dump.rdb", "valkey-8.1/16")
    _, redis_line, redis = _load_model(tmp_path, d / "dump.rdb", "redis-8.0/16")
    assert p_bare == p_named == "valkey-8.1/16"
    assert bare == named and len(bare) == 562
    assert line == "memory model: valkey 8.1 profile (--target 8.1/16), 16-byte allocator quantum"
    assert redis_line == (
        "memory model: redis 8.0 profile (--target redis-8.0/16: a redis profile for a "
        "valkey 8.1.1 dump), 16-byte allocator quantum"
    )
    assert _median_error(bare, d / "manifest.json") == 0.0
    assert round(_median_error(redis, d / "manifest.json"), 4) == 0.4375


@pytest.mark.skipif(not os.environ.get("RDBSCAN_CORPUS"), reason="set RDBSCAN_CORPUS")
def test_bare_version_is_the_dumps_own_server_whole_corpus(tmp_path):
    """Every Valkey 8.1 dump of the corpus: `--target 8.1/16` = `--target valkey-8.1/16` per key
    (memory_bytes and memory_total_bytes), both at a median error of 0 against MEMORY USAGE."""
    root = Path(os.environ["RDBSCAN_CORPUS"]) / "valkey-8.1.1"
    manifests = sorted(root.glob("*/manifest.json")) + sorted(root.glob("variants/*/manifest.json"))
    assert len(manifests) >= 5
    for m in manifests:
        bare = _load_model(tmp_path, m.parent / "dump.rdb", "8.1/16")
        named = _load_model(tmp_path, m.parent / "dump.rdb", "valkey-8.1/16")
        assert bare[0] == named[0] and bare[0].startswith("valkey-8.1/16"), m
        assert bare[2] == named[2], m
        assert _median_error(bare[2], m) == 0.0, m


@pytest.mark.parametrize("command", ["load", "report", "schema", "diff"])
@pytest.mark.parametrize("target", ["8.0/12", "7", "9.9", "foo", "/", "8.1/16/16", " "])
def test_bad_target_is_a_usage_error_before_loading(tmp_path, command, target):
    """Checked once, by the option: exit 2 and one error line, no dump read (it used to be
    reported as a damaged dump by report, schema and diff)."""
    from click.testing import CliRunner

    from rdbscan.cli.main import main

    dump = str(SAMPLES / "redis-7.4.1.rdb")
    args = {
        "load": ["load", dump, "-o", str(tmp_path / "x.duckdb")],
        "report": ["report", dump],
        "schema": ["schema", dump],
        "diff": ["diff", dump, dump],
    }[command]
    res = CliRunner().invoke(main, [*args, "--target", target])
    assert res.exit_code == 2
    errors = [ln for ln in res.output.splitlines() if ln.startswith("Error:")]
    assert errors == [
        f"Error: Invalid value for '--target': unknown memory target {target!r}: "
        + memory.TARGET_ERROR
    ]
    assert "malformed" not in res.output and not (tmp_path / "x.duckdb").exists()
