"""The servers of late 2026 (issue 25): Redis 8.8 (RDB 14), 8.10 (RDB 15), Valkey 9.2
(VALKEY081), and dumps newer than rdbscan.  No server of these versions can run here, so every
record is written by tests/rdbwriter.py with the contents of redis/librdb's own fixtures
(test/dumps/stream_v14_xnack.json, array_v14_mixed_types.json, hash_template_v15.json,
hash_template_array_v15.json); docs/rdb-format.md says what each layout was checked against."""

from __future__ import annotations

import io
import os
import re
import struct
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W

import rdbscan
from rdbscan.errors import EXIT_DAMAGED, EXIT_OK, EXIT_PARTIAL
from rdbscan.rdb.errors import CorruptError, TruncatedError, UnsupportedError
from rdbscan.rdb.parser import DumpInfo, parse

SAMPLE = Path(__file__).parent.parent / "sample_dumps" / "redis-7.4.1.rdb"
BASE_MS = 1779170191996


def run(data: bytes):
    info = DumpInfo()
    recs = list(parse(io.BytesIO(data), info, size=len(data)))
    return recs, info


def rdbscan_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rdbscan", *map(str, args)], capture_output=True, text=True
    )


def load(tmp_path: Path, data: bytes, name: str = "dump.rdb"):
    path = tmp_path / name
    path.write_bytes(data)
    db = tmp_path / (name + ".duckdb")
    results = rdbscan.load([str(path)], str(db))
    return results[0], duckdb.connect(str(db), read_only=True)


# -- Redis 8.8: type 27 (NACK zone) and type 28 (arrays) ----------------------------------------


def _sid(ms: int, seq: int = 0) -> bytes:
    return struct.pack(">QQ", ms, seq)


def xnack_stream() -> bytes:
    """stream_v14_xnack: 4 entries, group mygroup with 4 pending ids (2 owned by consumer1),
    2 of them NACKed."""
    master = [4, 0, 1, "field1", 0]
    e1 = [2, 0, 0, "value1", 4]
    e2 = [0, 2, 0, 1, "field2", "value2", 6]
    e3 = [0, 4, 0, 1, "field3", "value3", 6]
    e4 = [0, 5, 0, 1, "field4", "value4", 6]
    lp = W.listpack(master + e1 + e2 + e3 + e4)
    out = W.length(1) + W.string(_sid(BASE_MS)) + W.string(lp)
    out += W.length(4) + W.length(BASE_MS + 5) + W.length(0)  # length, last id
    out += W.length(BASE_MS) + W.length(0) + W.length(0) + W.length(0) + W.length(4)
    out += W.length(1) + W.string("mygroup") + W.length(BASE_MS + 5) + W.length(0) + W.length(4)
    out += W.length(4)
    for d in (0, 2, 4, 5):
        out += _sid(BASE_MS + d) + struct.pack("<q", BASE_MS + 8) + W.length(1)
    out += W.length(1) + W.string("consumer1") + struct.pack("<qq", BASE_MS + 8, BASE_MS + 8)
    out += W.length(2) + _sid(BASE_MS) + _sid(BASE_MS + 5)
    out += W.length(2) + _sid(BASE_MS + 2) + _sid(BASE_MS + 4)  # the NACK zone
    out += W.length(0) + W.length(0) + W.length(0) + W.length(0) + W.length(0)  # IDMP
    return out


MIXED_ARRAY = [(0, "this_is_a_long_sds_string_value_long_enough"), (1, 42), (2, 1.5), (3, "abc")]


def redis88(body: bytes, version: int = 14) -> bytes:
    return W.rdb(body, version=version, aux={"redis-ver": "8.8.0", "redis-bits": "64"})


def test_stream_with_a_nack_zone(tmp_path):
    data = redis88(W.key(27, "mystream", xnack_stream()) + W.key(0, "after", W.string("x")))
    recs, info = run(data)
    s = recs[0]
    assert (s.type, s.encoding, s.length, s.max_elem) == ("stream", "stream", 4, 6)
    g = s.stream.groups[0]
    assert (g.name, g.pending, g.nacked, g.consumers[0].pending) == (b"mygroup", 4, 2, 2)
    assert s.stream.nacked == 2 and recs[1].key == b"after" and info.checksum == "ok"
    result, con = load(tmp_path, data)
    assert result.error is None
    assert con.execute("SELECT group_name, pending, nacked FROM stream_groups").fetchall() == [
        ("mygroup", 4, 2)
    ]


def test_array_of_every_element_kind(tmp_path):
    data = redis88(W.key(28, "arr", W.array_value(MIXED_ARRAY)))
    (rec,), _ = run(data)
    assert (rec.type, rec.encoding, rec.length, rec.max_elem, rec.array_last) == (
        "array",
        "array",
        4,
        43,
        3,
    )
    result, con = load(tmp_path, data)
    row = con.execute(
        "SELECT type, encoding, length, max_elem_bytes, memory_bytes, array_last_index FROM keys"
    ).fetchone()
    # Redis 8.8 profile (docs/memory-model.md): the object with its 3-byte key, 24; the array
    # header 80, a directory of one slice pointer 8, one sparse slice of 4 elements
    # J(32 + 8 + 32) = 80, the 43-byte string J(8 + 43) = 56.
    assert row == ("array", "array", 4, 43, 24 + 80 + 8 + 80 + 56, 3)
    model = con.execute("SELECT memory_model FROM dumps").fetchone()[0]
    assert "redis 8.8 profile" in model and "not yet checked against a live server" in model


def test_array_slices_dense_and_sparse():
    # 12 elements in slice 0 (dense: a window of 16), 1 far away (sparse), insert cursor set.
    elems = [(i, i) for i in range(12)] + [(5 * 4096 + 7, "x" * 9)]
    (rec,), _ = run(redis88(W.key(28, "a", W.array_value(elems, insert_idx=12))))
    assert rec.nodes == {0: (12, 0, 11), 5: (1, 7, 7)}
    assert rec.elems == {9: 1} and rec.array_last == 5 * 4096 + 7 and rec.length == 13


# -- Redis 8.10: opcode 242 and types 29-32 ------------------------------------------------------

PERSON = ["name", "age", "city"]  # template order: age, city, name
LETTERS = ["alpha", "beta", "gamma", "delta"]  # template order: beta, alpha, delta, gamma


def templated_dump() -> bytes:
    body = W.hash_template(0, PERSON) + W.hash_template(1, LETTERS)
    for i in range(1, 6):
        body += W.key(30, f"h{i}", W.template_lp_ref(0, [f"a{i}", f"c{i}", f"n{i}"]))
    for i in range(1, 4):
        body += W.key(32, f"k{i}", W.template_array_ref(1, [f"B{i}", f"A{i}", f"D{i}", f"G{i}"]))
    return W.rdb(body, version=15, aux={"redis-ver": "8.10.0", "redis-bits": "64"})


def test_hash_templates(tmp_path):
    recs, info = run(templated_dump())
    assert [(r.key, r.type, r.encoding, r.length) for r in recs] == [
        *[(f"h{i}".encode(), "hash", "template-listpack", 3) for i in range(1, 6)],
        *[(f"k{i}".encode(), "hash", "template-array", 4) for i in range(1, 4)],
    ]
    assert (info.template_count, info.template_fields) == (2, 7)
    assert info.template_name_lens == {3: 1, 4: 3, 5: 3}
    assert recs[0].max_elem == 4  # the longest name ("city", "name"); values are 2 bytes
    result, con = load(tmp_path, templated_dump())
    dump = con.execute(
        "SELECT hash_templates, hash_template_fields, hash_template_bytes, memory_model FROM dumps"
    ).fetchone()
    # 2 template structs J(32) + 7 name pointers + the names' sds (3, 4, 4, 4, 5, 5, 5 bytes,
    # each J(1 + n + 1) = 8: an sdshdr5): 64 + 56 + 7 * 8.
    assert dump[:3] == (2, 7, 64 + 56 + 7 * 8)
    assert "redis 8.10 profile" in dump[3]
    mem = dict(con.execute("SELECT key, memory_bytes FROM keys").fetchall())
    # h1: object J(16 + key 5) = 24 + the values' listpack J(6 + 1 + 3 * 3 + 1 = 17) = 24.
    assert mem["h1"] == 24 + 24
    # k1: object 24 + J(8 + 4 pointers) = 40 + 4 values of 2 bytes as sds (J(5) = 8 each).
    assert mem["k1"] == 24 + 40 + 4 * 8


def test_self_contained_template_hashes():
    body = (
        W.key(29, "s1", W.template_self(PERSON, ["a", "c", "n"], array=False))
        + W.key(29, "s2", W.template_self(PERSON, ["a", "c", "n"], array=False, raw_names=True))
        + W.key(31, "s3", W.template_self(LETTERS, ["b", "a", "d", "g"], array=True))
    )
    recs, info = run(W.rdb(body, version=15))
    assert [(r.encoding, r.length, r.max_elem) for r in recs] == [
        ("template-listpack", 3, 4),
        ("template-listpack", 3, 4),
        ("template-array", 4, 5),
    ]
    assert info.template_count == 0  # inline names are not the dump's registry


# -- Valkey 9.2: type 23, opcode 242 in a replication capture, btree sorted sets ---------------


def valkey92(body: bytes) -> bytes:
    return W.rdb(body, version=81, valkey=True, aux={"valkey-ver": "9.2.0", "redis-bits": "64"})


def zset2(members) -> bytes:
    out = W.length(len(members))
    for m, score in members:
        out += W.string(m) + struct.pack("<d", score)
    return out


def valkey92_body() -> bytes:
    paths = {"/users/1": {"name": "ann", "mail": "a@x"}, "/users/2": {"name": "bob"}}
    return (
        W.key(23, "ph", W.path_hash(paths))
        + b"\xf2"
        + W.resp_command("SET", "k", "v")
        + W.key(5, "z", zset2([("m%d" % i, float(i)) for i in range(200)]))
    )


def test_valkey_92_records(tmp_path):
    data = valkey92(valkey92_body())
    recs, info = run(data)
    ph, z = recs
    assert (ph.type, ph.encoding, ph.length, ph.max_elem) == ("hash", "pathhash", 3, 12)
    assert (z.type, z.encoding, z.length) == ("zset", "btree", 200)
    assert info.replication_commands == 1 and info.checksum == "ok"
    # The same records from a replication capture ($<len> framing, as a disk-based full sync
    # ships the file).
    result, con = load(tmp_path, b"$%d\r\n" % len(data) + data, "capture.bin")
    assert result.error is None and result.framing == "replication-length"
    rows = con.execute("SELECT key, type, encoding, memory_bytes FROM keys ORDER BY key").fetchall()
    assert [r[:3] for r in rows] == [("ph", "hash", "pathhash"), ("z", "zset", "btree")]
    # A B+ tree costs 24 bytes an element less than Valkey 9.1's skiplist (valkey#4359).
    skiplist = W.rdb(
        W.key(5, "z", zset2([("m%d" % i, float(i)) for i in range(200)])),
        version=80,
        valkey=True,
        aux={"valkey-ver": "9.2.0", "redis-bits": "64"},
    )
    _, con91 = load(tmp_path, skiplist, "skiplist.rdb")
    assert con91.execute("SELECT encoding FROM keys").fetchone()[0] == "btree"  # by version
    assert "valkey 9.2 profile" in con.execute("SELECT memory_model FROM dumps").fetchone()[0]


# -- version rules and forward compatibility ---------------------------------------------------


@pytest.mark.parametrize("magic", [b"REDIS0014", b"REDIS0015", b"VALKEY081"])
def test_relabelled_real_dump_reads_the_same(tmp_path, magic):
    original = SAMPLE.read_bytes()
    a, con_a = load(tmp_path, original, "orig.rdb")
    b, con_b = load(tmp_path, W.relabel(original, magic), "relabelled.rdb")
    assert b.error is None and b.newer_than is None and b.keys == a.keys == 584
    q = "SELECT key, type, encoding, length, max_elem_bytes FROM keys ORDER BY key"
    assert con_a.execute(q).fetchall() == con_b.execute(q).fetchall()


def test_a_newer_version_is_read_on_with_one_warning(tmp_path):
    path = tmp_path / "newer.rdb"
    path.write_bytes(W.relabel(SAMPLE.read_bytes(), b"REDIS0016"))
    p = rdbscan_cli("load", path, "-o", tmp_path / "n.duckdb")
    assert p.returncode == EXIT_OK, p.stderr
    assert p.stderr.splitlines()[0] == (
        f"rdbscan: warning: {path}: REDIS0016 is newer than rdbscan knows (it reads up to "
        f"REDIS0015): read on; the figures rest on the newest format rdbscan knows; upgrade "
        f"rdbscan for an exact reading"
    )


def newer_with_unknown_type(version: int = 16, valkey: bool = False) -> bytes:
    body = W.key(0, "a", W.string("1")) + W.key(0, "b", W.string("2"))
    body += bytes([34]) + W.string("mystery") + b"\x00" * 10
    return W.rdb(body, version=version, valkey=valkey)


def test_an_unknown_type_in_a_newer_dump_stops_cleanly(tmp_path):
    data = newer_with_unknown_type()
    with pytest.raises(UnsupportedError) as e:
        run(data)
    assert e.value.describe() == (
        "byte 19: type 34 is not one rdbscan knows: the dump's RDB version 16 is newer than "
        "the 15 rdbscan reads, so the read stops here (the file is not damaged; a newer "
        "rdbscan reads on) while reading key 'mystery', type 34 (unknown)"
    )
    path = tmp_path / "newer.rdb"
    path.write_bytes(data)
    db = tmp_path / "n.duckdb"
    p = rdbscan_cli("load", path, "-o", db)
    assert p.returncode == EXIT_PARTIAL
    assert "2 keys read" in p.stderr and "damaged" not in p.stderr.replace("not damaged", "")
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM keys").fetchone()[0] == 2
    assert con.execute("SELECT complete, error_kind, newer_than FROM dumps").fetchone() == (
        False,
        "unsupported",
        15,
    )


def test_the_report_of_a_newer_dump_never_calls_it_damaged(tmp_path):
    path = tmp_path / "newer.rdb"
    path.write_bytes(newer_with_unknown_type())
    p = rdbscan_cli("report", path, "-f", "json")
    assert p.returncode == EXIT_PARTIAL
    assert "do not restore" not in p.stdout and "damage" not in p.stdout.replace("not damaged", "")
    text = rdbscan_cli("report", path).stdout
    assert "rdbscan is older than this dump" in text and "do not restore" not in text


def test_valkey_newer_version_and_unknown_type(tmp_path):
    with pytest.raises(UnsupportedError, match="RDB version 82 is newer than the 81"):
        run(newer_with_unknown_type(82, valkey=True))


@pytest.mark.parametrize(
    "t,version,message",
    [
        (28, 12, "type 28 (array) in an RDB version 12 file: Redis writes it from RDB version 14"),
        (30, 14, "type 30 (hash-template-listpack-ref) in an RDB version 14 file"),
    ],
)
def test_a_new_type_in_an_older_version_is_damage(t, version, message):
    data = W.rdb(W.key(0, "a", W.string("1")) + W.key(t, "x", b"\x00"), version=version)
    with pytest.raises(CorruptError, match=re.escape(message)):
        run(data)


def test_gcra_stops_as_a_limit_of_rdbscan():
    data = W.rdb(W.key(0, "a", W.string("1")) + W.key(33, "rate", b"\x00" * 8), version=15)
    with pytest.raises(UnsupportedError, match="type 33 .GCRA"):
        run(data)


def test_opcode_242_before_rdb_15_is_damage():
    with pytest.raises(CorruptError, match="opcode 242 in an RDB version 14 file"):
        run(W.rdb(W.hash_template(0, ["a"]), version=14))


# -- damaged variants: one line, the keys before kept ------------------------------------------

DAMAGED = {
    "array tag": (
        redis88(W.key(28, "a", W.length(1) + W.length(0) + W.length(0) + W.length(9))),
        CorruptError,
        "array element tag 9 is none of 0-3",
    ),
    "array empty": (
        redis88(W.key(28, "a", W.length(0) + W.length(0))),
        CorruptError,
        "array of no elements",
    ),
    "array order": (
        redis88(W.key(28, "a", W.array_value([(5, 1), (2, 1)]))),
        CorruptError,
        "array index 2 follows index 5",
    ),
    "array insert flag": (
        redis88(W.key(28, "a", W.length(1) + W.length(2))),
        CorruptError,
        "array insert flag 2",
    ),
    "template unknown id": (
        W.rdb(W.key(32, "k", W.template_array_ref(7, ["v"])), version=15),
        CorruptError,
        "refers to template 7, which the dump does not define",
    ),
    "template twice": (
        W.rdb(W.hash_template(0, ["a"]) + W.hash_template(0, ["b"]), version=15),
        CorruptError,
        "hash template id 0 is defined twice",
    ),
    "template order": (
        W.rdb(b"\xf2" + W.length(0) + W.length(2) + W.string("bb") + W.string("a"), version=15),
        CorruptError,
        "not in ascending order",
    ),
    "template values": (
        W.rdb(
            W.hash_template(0, ["a", "b"]) + W.key(30, "h", W.template_lp_ref(0, ["x"])), version=15
        ),
        CorruptError,
        "holds 1 values for 2 fields",
    ),
    "path hash empty path": (
        valkey92(W.key(23, "p", W.length(1) + W.string("/") + W.length(0))),
        CorruptError,
        "path hash path of no fields",
    ),
    "update not resp": (valkey92(b"\xf2" + b"+OK\r\n"), CorruptError, "expected '\\*'"),
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_new_records(name):
    data, kind, message = DAMAGED[name]
    with pytest.raises(kind, match=message):
        run(data)


@pytest.mark.parametrize(
    "data",
    [
        redis88(W.key(0, "k", W.string("v")) + W.key(27, "s", xnack_stream())),
        redis88(W.key(0, "k", W.string("v")) + W.key(28, "a", W.array_value(MIXED_ARRAY))),
        W.rdb(
            W.key(0, "k", W.string("v"))
            + W.hash_template(0, PERSON)
            + W.key(30, "h", W.template_lp_ref(0, ["1", "2", "3"])),
            version=15,
        ),
        valkey92(W.key(0, "k", W.string("v")) + valkey92_body()),
    ],
    ids=["nack", "array", "template", "valkey92"],
)
def test_new_records_cut_anywhere_end_with_one_line(data, tmp_path):
    """Every cut of the new records is a truncation at a byte offset, the first key kept."""
    start = data.index(b"\x01k") + 4  # after the first key
    for cut in range(start, len(data) - 9, max(1, (len(data) - start) // 25)):
        with pytest.raises((TruncatedError, CorruptError)) as e:
            run(data[:cut])
        assert "\n" not in e.value.describe()
    path = tmp_path / "cut.rdb"
    path.write_bytes(data[: start + 6])
    p = rdbscan_cli("load", path, "-o", tmp_path / "cut.duckdb")
    assert p.returncode == EXIT_DAMAGED and "1 keys read" in p.stderr


# -- the real corpus re-labelled (opt-in: RDBSCAN_CORPUS) -------------------------------------

CORPUS = os.environ.get("RDBSCAN_CORPUS")
RELABEL = {
    "redis-8.6.3": (b"REDIS0014", b"REDIS0015"),
    "valkey-9.1.2": (b"VALKEY081", b"VALKEY081+lz4", b"VALKEY081+zstd"),
}


def _corpus_dumps():
    if not CORPUS:
        return []
    return [
        (p, magic)
        for server, magics in RELABEL.items()
        for p in sorted(Path(CORPUS, server).rglob("dump.rdb"))
        for magic in magics
    ]


@pytest.mark.skipif(not CORPUS, reason="set RDBSCAN_CORPUS to the shared dumps folder")
@pytest.mark.parametrize("path,magic", _corpus_dumps(), ids=lambda x: str(x)[-40:])
def test_corpus_relabelled_gives_the_same_rows_and_memory(tmp_path, path, magic):
    """A real Redis 8.6.3 / Valkey 9.1.2 dump whose header says what Redis 8.8, 8.10 or Valkey
    9.2 writes (the CRC64 written again) gives the rows and memory of the original."""
    from test_vkcs import vkcs  # Valkey 9.2's whole-file envelope, as its writer makes it

    data = path.read_bytes()
    a, con_a = load(tmp_path, data, "orig.rdb")
    head, _, codec = magic.partition(b"+")
    relabelled = W.relabel(data, head)
    if codec:
        relabelled = vkcs(relabelled, codec.decode(), checksum=True)
    b, con_b = load(tmp_path, relabelled, "relabelled.rdb")
    assert (b.error, b.checksum, b.newer_than) == (None, "ok", None) and b.keys == a.keys > 0
    q = (
        "SELECT db, key_bytes, type, encoding, length, max_elem_bytes, memory_bytes, "
        "memory_total_bytes, expire_at_ms FROM keys ORDER BY db, key_bytes"
    )
    assert con_a.execute(q).fetchall() == con_b.execute(q).fetchall()


def test_the_streams_section_counts_nacked_ids(tmp_path):
    path = tmp_path / "s.rdb"
    path.write_bytes(redis88(W.key(27, "mystream", xnack_stream())))
    from rdbscan.reports.report import ReportOptions

    report = rdbscan.report([str(path)], ReportOptions(sections=("overview", "streams")))
    [item] = report["streams"]["items"]
    assert (item["pending"], item["nacked"], item["group_details"]) == (
        4,
        2,
        ["mygroup (1 consumer, 4 pending, 2 nacked)"],
    )
