"""Format corners no fixture dump covers, built byte by byte with tests/rdbwriter.py."""

from __future__ import annotations

import io
import struct

import pytest
import rdbwriter as W

from rdbscan.rdb.errors import CorruptError, NotRDBError, TruncatedError, UnsupportedError
from rdbscan.rdb.parser import DumpInfo, module_type_name, parse
from rdbscan.rdb.records import FieldTTLs

CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"


def run(data: bytes, sized: bool = True):
    info = DumpInfo()
    recs = list(parse(io.BytesIO(data), info, size=len(data) if sized else None))
    return recs, info


def module_id(name: str, encver: int) -> int:
    x = 0
    for ch in name:
        x = (x << 6) | CHARSET.index(ch)
    return (x << 10) | encver


def test_64bit_lengths_empty_and_binary_keys():
    body = (
        W.key(0, b"", W.string(b""))
        + bytes([0])
        + W.string(b"\xff\xfe bin\x00", force64=True)
        + W.string(b"x" * 70, True)
        + bytes([2])
        + W.string(b"s")
        + W.length(3, force64=True)
        + W.string(b"a")
        + W.string(b"bb")
        + W.int_string(-1234)
    )
    recs, info = run(W.rdb(body, version=9))
    assert [(r.key, r.type, r.encoding, r.length, r.max_elem) for r in recs] == [
        (b"", "string", "embstr", 0, 0),
        (b"\xff\xfe bin\x00", "string", "raw", 70, 70),
        (b"s", "set", "hashtable", 3, 5),
    ]
    assert info.checksum == "ok"


def test_listpack_count_65535_is_counted_by_walking():
    entries = []
    for i in range(70):
        entries += [f"f{i}", f"value-{i}"]
    lp = W.listpack(entries, count=65535)
    recs, _ = run(W.rdb(W.key(16, "h", W.string(lp)), version=10))
    assert (recs[0].type, recs[0].encoding, recs[0].length, recs[0].max_elem) == (
        "hash",
        "listpack",
        70,
        8,
    )
    assert recs[0].blob_bytes == len(lp)


def test_ziplist_long_strings_and_wide_integers():
    """rdbwriter's ziplist entries as ziplist.c writes them: a string of 16384 bytes or more
    takes the 5-byte length (0x80, big-endian), integers the int24 and int32 encodings."""
    strings = W.ziplist([b"a", b"x" * 16384, b"y" * 20000])
    assert strings[10 + 3 + 1] == 0x80  # the second entry's encoding byte (after its prevlen)
    wide = W.ziplist([8388607, -(1 << 31)])
    assert (wide[11], wide[11 + 4 + 1]) == (0xF0, 0xD0)
    body = W.key(10, "strings", W.string(strings)) + W.key(10, "wide", W.string(wide))
    recs, _ = run(W.rdb(body, version=9))
    assert [(r.key, r.encoding, r.length, r.max_elem, r.blob_bytes) for r in recs] == [
        (b"strings", "ziplist", 3, 20000, len(strings)),
        (b"wide", "ziplist", 2, 11, len(wide)),
    ]


def test_lzf_key_and_lzf_blob():
    lp = W.listpack(["member-with-a-long-name", 3, "m2", -5000])
    body = bytes([17]) + W.lzf_string(b"zset:" + b"k" * 40) + W.lzf_string(lp)
    recs, _ = run(W.rdb(body, version=10))
    assert recs[0].key == b"zset:" + b"k" * 40
    assert (recs[0].type, recs[0].length, recs[0].max_elem) == ("zset", 2, 23)


def test_newer_versions_are_read_on_and_impossible_ones_refused():
    for version, valkey, known in ((16, False, 15), (82, True, 81)):
        recs, info = run(W.rdb(W.key(0, "k", W.string("v")), version=version, valkey=valkey))
        assert (len(recs), info.newer_than, info.checksum) == (1, known, "ok")
    with pytest.raises(CorruptError, match="the VALKEY magic begins with version 80"):
        run(W.rdb(b"", version=79, valkey=True))
    with pytest.raises(CorruptError, match="RDB version 0: versions begin at 1"):
        run(W.rdb(b"", version=0))
    with pytest.raises(NotRDBError, match="not an RDB file"):
        run(b"hello world, not a dump")
    recs, info = run(W.rdb(W.key(0, "k", W.string("v")), version=80, valkey=True))
    assert info.magic == "VALKEY080" and info.server == "valkey" and len(recs) == 1


def test_old_versions_have_no_checksum_and_second_expiry():
    body = b"\xfd" + struct.pack("<i", 2_000_000_000) + W.key(0, "k", W.string("v"))
    recs, info = run(W.rdb(body, version=4))
    assert info.checksum == "absent"
    assert recs[0].expire_ms == 2_000_000_000_000


def test_type_6_module_is_refused():
    body = W.key(0, "a", W.string("1")) + W.key(6, "m", W.length(123, force64=True) + b"??")
    info = DumpInfo()
    got = []
    with pytest.raises(UnsupportedError, match="type 6") as e:
        for r in parse(io.BytesIO(W.rdb(body, version=8)), info):
            got.append(r.key)
    assert got == [b"a"] and e.value.offset == 9 + 1 + 2 + 2


def test_module_values_and_module_aux_are_skipped():
    mid = module_id("ReJSON-RL", 3)
    assert module_type_name(mid) == ("ReJSON-RL", 3)
    value = (
        W.length(mid)
        + W.length(2)
        + W.length(7)
        + W.length(5)
        + W.string("{}")
        + W.length(4)
        + struct.pack("<d", 1.5)
        + W.length(3)
        + struct.pack("<f", 2.5)
        + W.length(0)
    )
    aux = (
        b"\xf7"
        + W.length(mid)
        + W.length(2)
        + W.length(1)
        + W.length(5)
        + W.string("x")
        + W.length(0)
    )
    body = aux + W.key(7, "json", value) + W.key(0, "after", W.string("ok"))
    recs, info = run(W.rdb(body, version=9))
    assert [(r.key, r.type, r.encoding) for r in recs] == [
        (b"json", "module", "ReJSON-RL"),
        (b"after", "string", "embstr"),
    ]
    assert recs[0].serialized_bytes == 1 + 5 + len(value)
    assert info.module_aux == ["ReJSON-RL"]


def test_unknown_module_opcode_is_corrupt():
    value = W.length(module_id("MBbloom--", 1)) + W.length(9)
    with pytest.raises(CorruptError, match="unknown module opcode 9"):
        run(W.rdb(W.key(7, "b", value), version=9))


def test_key_meta_rdb13_and_valkey_slot_import():
    meta = (
        b"\xf3"
        + W.length(1)
        + struct.pack("<I", 0x12345678)
        + W.length(2)
        + W.length(42)
        + W.length(0)
    )
    body = b"\xfc" + struct.pack("<q", 4_000_000_000_000) + meta + W.key(0, "k", W.string("v"))
    recs, _ = run(W.rdb(body, version=13))
    assert recs[0].expire_ms == 4_000_000_000_000 and recs[0].key == b"k"
    assert recs[0].offset == 9 and recs[0].serialized_bytes == len(body)
    slot_import = (
        b"\xf3"
        + W.string("j" * 40)
        + W.length(2)
        + W.length(0)
        + W.length(99)
        + W.length(100)
        + W.length(200)
    )
    recs, _ = run(W.rdb(slot_import + W.key(0, "k", W.string("v")), version=80, valkey=True))
    assert [r.key for r in recs] == [b"k"]


def test_hash_field_ttl_types():
    # Valkey HASH_2 (type 22 under VALKEY magic): field, value, i64 expiry (-1 none).
    v2 = (
        W.length(2)
        + W.string("a")
        + W.string("1")
        + struct.pack("<q", -1)
        + W.string("bb")
        + W.string("22")
        + struct.pack("<q", 5_000)
    )
    recs, _ = run(W.rdb(W.key(22, "h2", v2), version=80, valkey=True))
    assert (recs[0].length, recs[0].encoding, recs[0].max_elem) == (2, "hashtable", 2)
    assert recs[0].field_ttls == FieldTTLs(1, 5000)
    # Redis 7.4-rc type 22: LEN absolute ttl (0 none), field, value.
    pre = (
        W.length(2)
        + W.length(0)
        + W.string("a")
        + W.string("1")
        + W.length(7000)
        + W.string("b")
        + W.string("2")
    )
    recs, _ = run(W.rdb(W.key(22, "h", pre), version=12))
    assert recs[0].field_ttls.min_field_expire_ms == 7000 and recs[0].length == 2
    # Type 24: min expire then relative ttls (+1 offset).
    md = (
        struct.pack("<q", 10_000)
        + W.length(2)
        + W.length(1)
        + W.string("x")
        + W.string("1")
        + W.length(0)
        + W.string("y")
        + W.string("2")
    )
    recs, _ = run(W.rdb(W.key(24, "h", md), version=12))
    assert recs[0].field_ttls == FieldTTLs(1, 10_000, {1: 1})
    # Types 23 (pre-GA) and 25: listpack triplets, 0 = no ttl.
    lp = W.listpack(["f1", "v1", 9000, "f2", "v22", 0])
    recs, _ = run(
        W.rdb(
            W.key(23, "a", W.string(lp)) + W.key(25, "b", struct.pack("<q", 9000) + W.string(lp)),
            version=12,
        )
    )
    for r in recs:
        assert (r.encoding, r.length, r.max_elem) == ("listpackex", 2, 3)
        assert r.field_ttls == FieldTTLs(1, 9000)


def _stream_value(rdb_type: int) -> bytes:
    master = [2, 0, 2, "temp", "hum", 0]
    e1 = [2, 0, 0, 20, 40, 6]  # same fields as the master
    e2 = [0, 1, 0, 1, "longer-field", "v", 6]
    lp = W.listpack(master + e1 + e2)
    out = W.length(1) + W.string(struct.pack(">QQ", 1000, 0)) + W.string(lp)
    out += W.length(2) + W.length(1001) + W.length(0)
    if rdb_type >= 19:
        out += W.length(1000) + W.length(0) + W.length(0) + W.length(0) + W.length(2)
    out += W.length(1) + W.string("g1") + W.length(1000) + W.length(0)
    if rdb_type >= 19:
        out += W.length(1)
    out += W.length(1) + struct.pack(">QQ", 1000, 0) + struct.pack("<q", 123) + W.length(1)
    out += W.length(1) + W.string("alice") + struct.pack("<q", 5)
    if rdb_type >= 21:
        out += struct.pack("<q", 6)
    out += W.length(1) + struct.pack(">QQ", 1000, 0)
    if rdb_type >= 26:
        out += (
            W.length(100)
            + W.length(10)
            + W.length(1)
            + W.string("p1")
            + W.length(1)
            + W.string("iid")
            + W.length(1000)
            + W.length(0)
            + W.length(1)
            + W.length(0)
        )
    return out


@pytest.mark.parametrize("rdb_type,version", [(15, 9), (19, 10), (21, 11), (26, 13)])
def test_stream_versions(rdb_type, version):
    body = W.key(rdb_type, "s", _stream_value(rdb_type)) + W.key(0, "next", W.string("1"))
    recs, info = run(W.rdb(body, version=version))
    s = recs[0]
    assert (s.type, s.length, s.max_elem) == ("stream", 2, 12)
    assert s.stream.last_id == "1001-0" and s.stream.pending == 1
    assert s.stream.groups[0].consumers[0].name == b"alice"
    assert recs[1].key == b"next" and info.checksum == "ok"


def test_functions_pre_ga_and_function2():
    body = (
        b"\xf6"
        + W.string("myfunc")
        + W.string("LUA")
        + W.length(1)
        + W.string("desc")
        + W.string("return 1")
        + b"\xf5"
        + W.string("#!lua name=lib2\nredis.register...")
    )
    _, info = run(W.rdb(body, version=10))
    assert info.functions == ["myfunc", "lib2"]


def test_quicklist2_plain_and_packed_nodes():
    value = (
        W.length(3)
        + W.length(1)
        + W.string(b"P" * 9000)
        + W.length(2)
        + W.string(W.listpack(["a", "bcd", 77]))
        + W.length(2)
        + W.string(W.listpack([]))
    )
    recs, _ = run(W.rdb(W.key(18, "l", value), version=12, aux={"redis-ver": "7.4.1"}))
    r = recs[0]
    assert (r.length, r.max_elem, r.encoding) == (4, 9000, "quicklist")
    assert r.nodes[9000] == 1


def test_bad_quicklist_container_is_corrupt():
    value = W.length(1) + W.length(3) + W.string("x")
    with pytest.raises(CorruptError, match="container 3"):
        run(W.rdb(W.key(18, "l", value), version=10))


def test_hostile_lengths_fail_before_allocating():
    huge_value = W.rdb(W.key(0, "k", b"\x81" + struct.pack(">Q", 1 << 60) + b"abc"), version=9)
    with pytest.raises(CorruptError, match="impossible"):
        run(huge_value)
    with pytest.raises(TruncatedError):  # size unknown: skipped, never held, ends at EOF
        run(huge_value, sized=False)
    huge_key = W.rdb(bytes([0]) + b"\x81" + struct.pack(">Q", 1 << 60) + b"abc", version=9)
    with pytest.raises(CorruptError, match="exceeds"):  # must be held: the hard cap applies
        run(huge_key, sized=False)
    many = W.rdb(W.key(2, "s", W.length(1 << 50)), version=9)
    with pytest.raises(CorruptError, match="claims"):
        run(many)
    lzf = W.rdb(W.key(0, "s", b"\xc3" + W.length(10) + W.length(1 << 40) + b"x" * 10), version=9)
    with pytest.raises(CorruptError):
        run(lzf)


@pytest.mark.parametrize(
    "record,message",
    [
        (b"\xfe" + W.length(1 << 31), "database number 2147483648 is out of range"),
        (
            b"\xf8" + W.length(1 << 63) + W.key(0, "k", W.string("v")),
            "LRU idle time 9223372036854775808 s is out of range",
        ),
        (b"\xfb" + W.length(1 << 41) + W.length(0), "RESIZEDB claims 2199023255552 keys"),
        (
            b"\xf4" + W.length(16384) + W.length(1) + W.length(0),
            "slot info for slot 16384, outside 0..16383",
        ),
        (
            b"\xfa" + W.string("slot-info") + W.string("5,%d,0" % (1 << 41)),
            "slot info claims 2199023255552 keys and 0 expires",
        ),
    ],
)
def test_out_of_range_numbers_are_corrupt(record, message):
    """Numbers no server writes (a damaged length) end the parse with a CorruptError at the
    record, not a failure later where a table column cannot hold them."""
    data = W.rdb(W.key(0, "first", W.string("x")) + record, version=11)
    with pytest.raises(CorruptError, match=message) as e:
        run(data)
    assert e.value.offset == 9 + len(W.key(0, "first", W.string("x")))


def test_field_expiry_beyond_64_bits_is_corrupt():
    value = (
        struct.pack("<q", 1 << 62) + W.length(1) + W.length(1 << 63) + W.string("f") + W.string("v")
    )
    data = W.rdb(W.key(24, "h", value), version=12)
    with pytest.raises(
        CorruptError,
        match=r"hash field expiry 13835058055282163711 ms is out "
        r"of range",
    ) as e:
        run(data)
    assert e.value.key == b"h"


def test_truncated_inside_a_value_names_the_key():
    data = W.rdb(W.key(0, "a", W.string("1")) + W.key(0, "big", W.string(b"z" * 5000)), version=9)[
        :-600
    ]
    with pytest.raises(TruncatedError) as e:
        run(data)
    assert e.value.key == b"big" and e.value.rdb_type == 0
    assert e.value.offset == 9 + 5 + 1 + 4 + 2  # where the 5000 value bytes start
    assert "key 'big'" in e.value.describe()


def test_checksum_mismatch_and_disabled():
    good = W.rdb(W.key(0, "k", W.string("v")), version=9)
    bad = good[:-8] + bytes(8 - 1) + b"\x01"
    assert run(bad)[1].checksum == "mismatch"
    assert (
        run(W.rdb(W.key(0, "k", W.string("v")), version=9, checksum=False))[1].checksum
        == "disabled"
    )


def test_string_encodings():
    body = b"".join(
        W.key(0, f"k{i}", W.string(v))
        for i, v in enumerate(
            [
                b"12345678901234567890",  # beyond int64: not int
                b"1234567890123456789",  # int64
                b"-9223372036854775808",  # LONG_MIN: int
                b"007",
                b"+5",
                b"-0",
                b"3.14",
                b"x" * 44,
                b"x" * 45,
            ]
        )
    )
    body += W.key(0, "i", W.int_string(-70000))
    recs, _ = run(W.rdb(body, version=11, aux={"redis-ver": "7.2.4"}))
    assert [r.encoding for r in recs] == [
        "embstr",
        "int",
        "int",
        "embstr",
        "embstr",
        "embstr",
        "embstr",
        "embstr",
        "raw",
        "int",
    ]
    assert recs[-1].length == 6
