"""Hostile inputs (issue 15, docs/hostile-inputs.md): the fast cases of tests/hostile.py, each
loaded by `rdbscan load` in a child process, must meet their bound (exit code, rows kept, what
is stored, peak RSS under 300 MB).  Times are the benchmark's (bench/hostile.py), not asserted
here.  Plus the details of how a long key name is stored, in both row paths."""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import duckdb
import hostile  # tests/hostile.py: the cases and their harness (bench/hostile.py)
import pytest
import rdbwriter as W
from common import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st

from rdbscan.db.load import load
from rdbscan.db.rows import KEY_KEEP, key_digest
from rdbscan.errors import EXIT_DAMAGED
from rdbscan.model.slots import key_slot
from rdbscan.rdb import backend
from rdbscan.rdb.long_names import LongName

FAST = [c for c in hostile.CASES if c.fast]


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("case", FAST, ids=[c.name for c in FAST])
def test_hostile_input_meets_its_bound(case, tmp_path):
    r = hostile.run(case, tmp_path)
    assert r.failures == [], (r.failures, r.stderr)


def _long_names() -> list[bytes]:
    big = KEY_KEEP * 3
    return [
        b"a" * big,
        b"a" * big + b"!",  # same prefix, other name
        b"x" * (KEY_KEEP - 1) + "é".encode() + b"y" * 10,  # a UTF-8 character across the cut
        b"{tag}" + b"z" * big,  # cluster slot of the hashtag
        b"\xff\xfe" + b"q" * big,  # not UTF-8
        b"b" * KEY_KEEP,  # exactly at the limit: kept whole
    ]


def _dump(path: Path) -> str:
    body = b"\xfe\x00" + b"".join(
        W.key(0, k, W.string(b"v%d" % i)) for i, k in enumerate(_long_names())
    )
    path.write_bytes(W.rdb(body))
    return str(path)


def _stored(db: str) -> list:
    con = duckdb.connect(db, read_only=True)
    try:
        return con.execute(
            "SELECT key, key_raw, key_bytes, key_length, key_truncated, key_hash, "
            "slot, family FROM keys ORDER BY file_offset"
        ).fetchall()
    finally:
        con.close()


def test_long_key_names_are_stored_as_prefix_length_and_hash(tmp_path):
    db = str(tmp_path / "o.duckdb")
    load([_dump(tmp_path / "long.rdb")], db)
    rows = _stored(db)
    names = _long_names()
    assert len(rows) == len(names)
    for name, (_text, _raw, kb, length, truncated, digest, slot, _) in zip(names, rows):
        assert length == len(name) and slot == key_slot(name)
        if len(name) <= KEY_KEEP:
            assert kb == name and not truncated and digest is None
            continue
        assert truncated
        assert digest == int.from_bytes(
            hashlib.blake2b(name, digest_size=8).digest(), "little", signed=True
        )
        assert name.startswith(kb) and KEY_KEEP - 3 <= len(kb) <= KEY_KEEP
    # the cut falls before the two-byte character, not inside it: the prefix is valid UTF-8
    assert rows[2][2] == b"x" * (KEY_KEEP - 1) and rows[2][1] is None
    assert rows[4][1] == rows[4][2] == names[4][:KEY_KEEP]  # not UTF-8: key_raw keeps the bytes
    assert rows[0][5] != rows[1][5] and rows[0][2] == rows[1][2]


@pytest.mark.subprocess
@pytest.mark.skipif(backend.compiled is None, reason="one row path: the pure-Python one")
def test_long_key_names_stored_alike_by_both_row_paths(tmp_path):
    import subprocess

    dump = _dump(tmp_path / "long.rdb")
    compiled_db, pure_db = str(tmp_path / "c.duckdb"), str(tmp_path / "p.duckdb")
    load([dump], compiled_db)
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rdbscan.db.load import load; load([sys.argv[1]], sys.argv[2])",
            dump,
            pure_db,
        ],
        check=True,
        env={**os.environ, "RDBSCAN_PURE_PYTHON": "1"},
    )
    assert _stored(compiled_db) == _stored(pure_db)


def test_a_long_key_name_streams_past_and_is_never_held_whole():
    """A 24 MiB name (hashtag in its middle, across the reader's chunks) is read as it streams
    past: Python's peak allocation during the parse stays far below the name's size (before:
    the name was read whole, 24 MiB and more), and the row's length, hash and slot are the
    whole name's."""
    import io
    import tracemalloc

    from rdbscan.rdb.parser import DumpInfo, parse

    name = b"n" * (12 << 20) + b"{tag:1}" + b"m" * (12 << 20)
    data = W.rdb(b"\xfe\x00" + W.key(0, name, W.string(b"v")) + W.key(0, b"small", W.string(b"w")))
    del name
    stream = io.BufferedReader(io.BytesIO(data), 1 << 16)
    tracemalloc.start()
    try:
        recs = [r for r in parse(stream, DumpInfo(), size=len(data)) if r is not None]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    name = b"n" * (12 << 20) + b"{tag:1}" + b"m" * (12 << 20)
    long, small = recs
    assert peak < 12 << 20, peak  # half the name (the reader reads 4 MiB pieces)
    assert long.key == name[:KEY_KEEP] and long.key_length == len(name)
    assert (
        long.long_key
        == (len(name), key_digest(name), key_slot(name))
        == (
            len(name),
            key_digest(name),
            key_slot(b"tag:1"),
        )
    )
    assert small.key == b"small" and small.long_key is None


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=60),
    st.lists(st.integers(1, 7), max_size=20),
    st.sampled_from([b"", b"{", b"}"]),
)
def test_long_name_pieces_give_the_whole_names_slot_and_hash(key, cuts, extra):
    key = key.replace(b"\x00", b"{") + extra
    name, i = LongName(), 0
    for c in cuts:
        name.update(key[i : i + c])
        i += c
    name.update(key[i:])
    assert (name.head, name.length) == (key[:KEY_KEEP], len(key))
    assert (name.slot(), name.digest()) == (key_slot(key), key_digest(key))


# -- inputs cut short or never ending (issue 15, "Results merged or lost") ------------------


def _many_keys_rdb(n: int = 368) -> bytes:
    body = b"\xfe\x00" + b"".join(
        W.key(0, b"key:%d" % i, W.string(b"v" * 1000 + b"%d" % i)) for i in range(n)
    )
    return W.rdb(body)


def _tar(name: str, data: bytes, size: int | None = None) -> bytes:
    """A ustar archive of one member; `size` overstates the member's size in its header."""
    import io
    import tarfile

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as t:
        info = tarfile.TarInfo(name)
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    out = bytearray(buf.getvalue())
    if size is not None:
        out[124:136] = b"%011o\x00" % size
        out[148:156] = b" " * 8
        out[148:156] = b"%06o\x00 " % sum(out[:512])
    return bytes(out)


def _keys_kept(path: Path, tmp_path: Path) -> tuple[int, list]:
    db = tmp_path / (path.name + ".duckdb")
    results = load([str(path)], str(db))
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT count(*) FROM keys").fetchone()[0], results
    finally:
        con.close()


def test_truncated_tar_keeps_what_the_plain_file_keeps(tmp_path):
    rdb = _many_keys_rdb()
    cut = len(rdb) * 2 // 3
    plain = tmp_path / "cut.rdb"
    plain.write_bytes(rdb[:cut])
    tarred = tmp_path / "cut.tar"
    tarred.write_bytes(_tar("dump.rdb", rdb)[: 512 + cut])
    want, _ = _keys_kept(plain, tmp_path)
    assert want > 200
    got, (result,) = _keys_kept(tarred, tmp_path)
    assert got == want and not result.complete


def test_tar_header_overstating_its_member_keeps_the_rows(tmp_path):
    rdb = _many_keys_rdb()
    tarred = tmp_path / "big.tar"
    tarred.write_bytes(_tar("dump.rdb", rdb, size=len(rdb) * 4))
    got, (result,) = _keys_kept(tarred, tmp_path)
    assert got == 368 and result.complete


@pytest.mark.subprocess
def test_eof_capture_followed_by_a_live_stream_stops_at_the_rdb_end(tmp_path):
    """`redis-cli --replica | rdbscan load -`: the payload, its mark, then replication
    commands on a pipe that stays open.  The load ends at the RDB's end with every row."""
    import subprocess

    mark = b"0123456789abcdef0123456789abcdef01234567"
    db = tmp_path / "live.duckdb"
    proc = subprocess.Popen(
        [sys.executable, "-m", "rdbscan", "load", "-", "-o", str(db), "-q"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        proc.stdin.write(
            b"$EOF:" + mark + b"\r\n" + _many_keys_rdb() + mark + b"*1\r\n$4\r\nPING\r\n"
        )
        proc.stdin.flush()
        try:
            rc = proc.wait(timeout=300)  # a hang guard, not a speed bound
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            pytest.fail("rdbscan load waited for the end of a live replication stream")
    finally:
        proc.stdin.close()
    err = proc.stderr.read().decode()
    assert rc == 0, err
    assert "stopped after the replication payload's $EOF mark" in err
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM keys").fetchone()[0] == 368
    assert con.execute("SELECT complete, framing FROM dumps").fetchone() == (
        True,
        "replication-eof",
    )
    con.close()


def test_eof_capture_on_a_pipe_ending_at_its_mark_warns_nothing(tmp_path):
    """The same capture on a pipe that ends right after the mark: nothing followed it, so
    no "stopped after the mark" warning and no tail bytes."""
    mark = b"0123456789abcdef0123456789abcdef01234567"
    db = tmp_path / "ended.duckdb"
    proc = run_cli("load", "-", "-o", db, input=b"$EOF:" + mark + b"\r\n" + _many_keys_rdb() + mark)
    err = proc.stderr
    assert proc.returncode == 0, err
    assert "warning" not in err and "stopped after" not in err
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*), (SELECT tail_bytes FROM dumps) FROM keys").fetchone() == (
        368,
        0,
    )
    con.close()


# -- decompression bounds (issue 15, "Memory and time") ---------------------------------------


@pytest.mark.slow
def test_decompression_bomb_is_one_line_and_allow_ratio_reads_it(tmp_path):
    """gzip expanding ~1000:1: `load` refuses it past RATIO_FLOOR with one line naming the
    file, the byte offset and the way out, exit 4, the 100 keys read before kept; `report
    --allow-ratio` reads all 101 keys."""
    import re

    from rdbscan.rdb import source

    assert (source.MAX_RATIO, source.RATIO_FLOOR) == (200, 16 << 20)
    bomb = hostile._gzip_bomb(100, 32 << 20)(tmp_path)
    db = tmp_path / "refused.duckdb"
    proc = run_cli("load", bomb, "-o", db, "-q")
    err = proc.stderr
    assert proc.returncode == EXIT_DAMAGED, err
    assert re.fullmatch(
        rf"rdbscan: error: {re.escape(str(bomb))}: byte (\d+): gzip input expands more than "
        r"200:1 \((\d+) compressed bytes gave \1\); refusing a likely decompression bomb "
        r"\(--allow-ratio reads it anyway\) while reading key 'zeros:0', type 0 \(string\); "
        r"100 keys read\n",
        err,
    ), err
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*), (SELECT complete FROM dumps) FROM keys").fetchone() == (
        100,
        False,
    )
    con.close()
    db2 = tmp_path / "allowed.duckdb"
    proc = run_cli("report", bomb, "-o", db2, "-q", "--allow-ratio", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    con = duckdb.connect(str(db2), read_only=True)
    assert con.execute("SELECT count(*) FROM keys").fetchone()[0] == 101
    con.close()


def test_xz_dictionary_over_the_limit_is_refused_before_allocation(tmp_path):
    from rdbscan.rdb import source

    assert source.XZ_MEMLIMIT == 128 << 20
    path = hostile._xz_dict(10, 384)(tmp_path)
    [r] = load([str(path)], str(tmp_path / "x.duckdb"))
    assert r.keys == 0 and not r.complete
    assert r.error == (
        f"{path}: byte 0: xz data needs more than 128 MiB of decoder memory (its "
        f"dictionary is too large); refused before allocating it (decompress it "
        f"yourself and pipe it to `rdbscan load -`); 0 keys read"
    )


# -- bounded accumulations (issue 15, "Memory and time") --------------------------------------


def _stream_with_groups(n_groups: int, n_cons: int) -> bytes:
    """A type-15 stream value: one listpack of two entries, `n_groups` groups of `n_cons`
    consumers each, no pending entries."""
    import struct

    lp = W.listpack(
        [2, 0, 2, "temp", "hum", 0] + [2, 0, 0, 20, 40, 6] + [0, 1, 0, 1, "longer-field", "v", 6]
    )
    out = W.length(1) + W.string(struct.pack(">QQ", 1000, 0)) + W.string(lp)
    out += W.length(2) + W.length(1001) + W.length(0) + W.length(n_groups)
    consumers = b"".join(
        W.string(b"c%d" % c) + struct.pack("<q", 5) + W.length(0) for c in range(n_cons)
    )
    for g in range(n_groups):
        out += W.string(b"g%d" % g) + W.length(1000) + W.length(0) + W.length(0)
        out += W.length(n_cons) + consumers
    return out


def _accumulating_dump() -> bytes:
    """Each record kind the parser accumulates, past its bound (parser.MAX_KEPT_*)."""
    from rdbscan.rdb import parser as P
    from rdbscan.rdb import stream_values as SV

    aux = b"\xfa" + W.string("long") + W.string("x" * (P.MAX_AUX_VALUE + 1))
    aux += b"".join(
        b"\xfa" + W.string(f"aux-{i}") + W.string(str(i)) for i in range(P.MAX_KEPT_AUX + 499)
    )
    slots = b"".join(
        b"\xf4" + W.length(i % 16384) + W.length(3) + W.length(1) for i in range(20_000)
    )
    functions = b"".join(
        b"\xf5" + W.string(f"#!lua name=lib{i}\nreturn 1")
        for i in range(P.MAX_KEPT_FUNCTIONS + 200)
    )
    module_aux = b"".join(
        b"\xf7" + W.length(12345 << 10) + W.length(0) for _ in range(P.MAX_KEPT_MODULE_AUX + 100)
    )
    dbs = b"".join(
        b"\xfe" + W.length(db) + b"\xfb" + W.length(7) + W.length(2) for db in range(1, 20_001)
    )
    stream = b"\xfe\x00" + W.key(15, "s", _stream_with_groups(SV.MAX_KEPT_GROUPS + 500, 10))
    return W.rdb(aux + slots + functions + module_aux + dbs + stream, version=11)


CUT = {
    "aux": 500,
    "aux_value": 1,
    "slot_info": 20_000 - 16_384,
    "functions": 200,
    "module_aux": 100,
    "databases": 20_000 - 16_384,
    "stream_groups": 500,
    "stream_consumers": 500 * 10,
}


def test_accumulations_keep_a_bounded_sample_and_count_the_rest():
    import io

    from rdbscan.rdb import parser as P
    from rdbscan.rdb import stream_values as SV
    from rdbscan.rdb.parser import DumpInfo, parse

    info = DumpInfo()
    [rec] = list(parse(io.BytesIO(_accumulating_dump()), info))
    assert info.complete and info.checksum == "ok"
    assert info.cut == CUT
    assert len(info.aux) == P.MAX_KEPT_AUX and info.aux["long"] == "x" * P.MAX_AUX_VALUE
    assert (info.slot_info_records, info.slot_info_keys, len(info.slot_info)) == (
        20_000,
        60_000,
        16_384,
    )
    assert len(info.functions) == P.MAX_KEPT_FUNCTIONS and info.functions[-1] == "lib999"
    assert len(info.module_aux) == P.MAX_KEPT_MODULE_AUX
    assert len(info.resizedb) == 16_384 and info.resizedb[1] == (7, 2)
    st = rec.stream
    assert (st.group_count, len(st.groups), st.consumers) == (1_500, 1_000, 15_000)
    assert sum(len(g.consumers) for g in st.groups) == SV.MAX_KEPT_CONSUMERS
    assert all(g.consumer_count == 10 for g in st.groups)


def test_a_load_records_what_was_cut(tmp_path):
    path = tmp_path / "acc.rdb"
    path.write_bytes(_accumulating_dump())
    db = tmp_path / "acc.duckdb"
    [r] = load([str(path)], str(db))
    assert r.complete and r.error is None and r.cut == CUT
    assert r.warnings == [
        f"{path}: beyond rdbscan's bounds, counted but not kept: 500 aux fields, 1 aux values "
        f"cut short, 3,616 databases' RESIZEDB sizes, 200 function libraries, 100 module aux "
        f"records, 3,616 slot-info records, 5,000 stream consumers, 500 stream consumer groups "
        f"(those streams' memory counts the kept ones only: a lower bound) (docs/hostile-inputs.md)"
    ]
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert dict(con.execute("SELECT cut FROM dumps").fetchone()[0]) == CUT
        assert con.execute(
            "SELECT slot_info_records, slot_info_keys, cardinality(aux), "
            "len(functions), len(module_aux) FROM dumps"
        ).fetchone() == (20_000, 60_000, 1_000, 1_000, 1_000)
        assert con.execute("SELECT count(*) FROM db_sizes").fetchone()[0] == 16_384
        assert con.execute("SELECT count(*) FROM slot_info").fetchone()[0] == 16_384
        assert con.execute("SELECT groups, consumers FROM streams").fetchone() == (1_500, 15_000)
        assert con.execute("SELECT count(*), sum(consumers) FROM stream_groups").fetchone() == (
            1_000,
            10_000,
        )
    finally:
        con.close()
