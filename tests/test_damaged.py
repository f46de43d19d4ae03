"""Damaged and hostile input: one-line errors at the offsets the corpus manifests record,
partial rows kept, exit codes, --debug, --skip-bad, and cuts at thousands of offsets."""

from __future__ import annotations

import gzip
import io
import json
import resource
import shutil
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W
from common import FIXTURES, run_cli

from rdbscan.db.load import load
from rdbscan.rdb.errors import CorruptError, RDBError, TruncatedError
from rdbscan.rdb.parser import DumpInfo, parse

V70 = FIXTURES / "redis-7.0.15" / "variants"
SMALL = FIXTURES / "redis-7.0.15" / "small" / "dump.rdb"


def _manifest(name: str) -> dict:
    return json.loads((V70 / name / "manifest.json").read_text())


def _q(db: Path, sql: str):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


# -- the corpus's damaged variants, through the command line ---------------------------------
def test_truncated_variant(tmp_path):
    m = _manifest("truncated")
    c = m["corruption"]
    path = V70 / "truncated" / "dump.rdb"
    db = tmp_path / "t.duckdb"
    proc = run_cli("load", str(path), "-o", str(db))
    err = proc.stderr
    assert proc.returncode == 4
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    line = lines[0]
    assert str(path) in line
    assert f"byte {c['value_data_offset']}:" in line
    assert "unexpected end of input" in line
    assert f"key {c['inside_key']!r}" in line and "type 0 (string)" in line
    # redis-check-rdb counts the key it was reading ("390 keys read"); we count complete keys.
    assert "389 keys read" in line
    rows = _q(db, "SELECT count(*) FROM keys")[0][0]
    assert rows == 389
    dump = _q(db, "SELECT complete, error_offset, keys, error IS NOT NULL FROM dumps")[0]
    assert dump == (False, c["value_data_offset"], 389, True)


def test_truncated_variant_debug_shows_traceback(tmp_path):
    path = V70 / "truncated" / "dump.rdb"
    proc = run_cli("--debug", "load", str(path), "-o", str(tmp_path / "t.duckdb"))
    err = proc.stderr
    assert proc.returncode == 4
    assert "Traceback" in err and "TruncatedError" in err
    assert "389 keys read" in err


def test_truncated_variant_compressed_through_stdin(tmp_path):
    c = _manifest("truncated")["corruption"]
    payload = gzip.compress((V70 / "truncated" / "dump.rdb").read_bytes())
    proc = run_cli("load", "-", "-o", str(tmp_path / "t.duckdb"), input=payload)
    err = proc.stderr
    assert proc.returncode == 4 and "Traceback" not in err
    assert f"<stdin>: byte {c['value_data_offset']}:" in err and "389 keys read" in err


def test_corrupt_type_variant(tmp_path):
    c = _manifest("corrupt-type")["corruption"]
    path = V70 / "corrupt-type" / "dump.rdb"
    db = tmp_path / "c.duckdb"
    proc = run_cli("load", str(path), "-o", str(db))
    err = proc.stderr
    assert proc.returncode == 4
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"byte {c['offset']}:" in err and f"type or opcode {c['new_byte']}" in err
    assert "224 keys read" in err  # redis-check-rdb: "[info] 224 keys read"
    assert _q(db, "SELECT count(*) FROM keys")[0][0] == 224
    assert _q(db, "SELECT complete, error_offset FROM dumps")[0] == (False, c["offset"])


def test_corrupt_value_variant(tmp_path):
    m = _manifest("corrupt-value")
    path = V70 / "corrupt-value" / "dump.rdb"
    db = tmp_path / "v.duckdb"
    proc = run_cli("load", str(path), "-o", str(db))
    err = proc.stderr
    assert proc.returncode == 5
    assert "checksum mismatch" in err and "Traceback" not in err
    stored, computed = _q(db, "SELECT checksum_stored, checksum_computed FROM dumps")[0]
    assert stored != computed and stored in err and computed in err
    assert _q(db, "SELECT keys, checksum, complete FROM dumps")[0] == (
        m["key_count"],
        "mismatch",
        True,
    )


def test_missing_file_and_directory(tmp_path):
    proc = run_cli("load", str(tmp_path / "nope.rdb"), "-o", str(tmp_path / "x.duckdb"))
    assert proc.returncode == 6 and "Traceback" not in proc.stderr  # EXIT_INPUT
    assert "nope.rdb" in proc.stderr


# -- --skip-bad ------------------------------------------------------------------------------
def _corrupt_one_listpack(data: bytes) -> tuple[bytes, bytes, int]:
    """Damage the header of the first uncompressed listpack/intset value with no expire."""
    info = DumpInfo()
    for rec in parse(io.BytesIO(data), info, size=len(data)):
        if rec.rdb_type not in (11, 16, 17) or data[rec.offset] != rec.rdb_type:
            continue
        p = rec.offset + 1
        if data[p] >= 0x40:
            continue
        p += 1 + data[p]  # past the key name
        b0 = data[p]
        if b0 >= 0x80:
            continue  # LZF or a 32-bit length: look further
        start = p  # the blob string (errors point here)
        p += 1 if b0 < 0x40 else 2  # the blob's bytes start here
        bad = bytearray(data)
        bad[p] ^= 0x01  # the blob's own size field no longer matches
        return bytes(bad), rec.key, start
    raise AssertionError("no listpack value found")


@pytest.mark.slow
def test_skip_bad_skips_a_damaged_blob(tmp_path):
    data = SMALL.read_bytes()
    bad, key, off = _corrupt_one_listpack(data)
    path = tmp_path / "bad.rdb"
    path.write_bytes(bad)
    total = sum(1 for _ in parse(io.BytesIO(data), DumpInfo(), size=len(data)))

    db = tmp_path / "a.duckdb"
    proc = run_cli("load", str(path), "-o", str(db))
    err = proc.stderr
    assert proc.returncode == 4 and "Traceback" not in err
    assert f"byte {off}:" in err and repr(key.decode()) in err

    db2 = tmp_path / "b.duckdb"
    proc = run_cli("load", "--skip-bad", str(path), "-o", str(db2))
    err = proc.stderr
    assert proc.returncode == 5, err
    assert "1 damaged keys skipped" in err and repr(key.decode()) in err
    assert "Traceback" not in err
    assert _q(db2, "SELECT keys, skipped_keys, complete, checksum FROM dumps")[0] == (
        total - 1,
        1,
        True,
        "mismatch",
    )
    assert _q(db2, "SELECT count(*) FROM keys")[0][0] == total - 1
    assert _q(db2, f"SELECT count(*) FROM keys WHERE key = '{key.decode()}'")[0][0] == 0


def test_skip_bad_lzf_blob_that_does_not_decompress():
    lp = W.listpack([b"f1", b"v1", b"f2", b"v2"])
    blob = bytearray(W.lzf_string(lp))
    # \xc3 LEN(clen) LEN(ulen) then the first literal-run control byte.
    ctrl = 1 + len(W.length(len(lp) + (len(lp) + 31) // 32)) + len(W.length(len(lp)))
    blob[ctrl] = 0xE0  # a back-reference before the start: invalid
    body = W.key(16, "broken", bytes(blob)) + W.key(0, "fine", W.string("ok"))
    data = W.rdb(body, version=10)
    with pytest.raises(CorruptError, match="LZF"):
        list(parse(io.BytesIO(data), DumpInfo(), size=len(data)))
    info = DumpInfo()
    keys = [r.key for r in parse(io.BytesIO(data), info, size=len(data), skip_bad=True)]
    assert keys == [b"fine"] and info.skipped_keys == 1 and info.complete
    assert "broken" in info.skipped[0]


# -- cuts at thousands of offsets -------------------------------------------------------------
def _small_public_fixtures(limit: int = 6000) -> list[Path]:
    out = []
    for p in sorted((FIXTURES / "public").rglob("*.rdb")):
        if p.stat().st_size > limit:
            continue
        data = p.read_bytes()
        try:
            for _ in parse(io.BytesIO(data), DumpInfo(), size=len(data)):
                pass
        except RDBError:
            continue  # fixtures that are damaged or unsupported on purpose
        out.append(p)
    return out


def _check_cut(data: bytes, cut: int, end: int, known: bool) -> None:
    piece = data[:cut]
    info = DumpInfo()
    try:
        for _ in parse(io.BytesIO(piece), info, size=cut if known else None):
            pass
    except TruncatedError as e:
        assert cut < end, f"cut at {cut} after the RDB end {end} failed: {e.describe()}"
        assert 0 <= e.offset <= cut
        assert e.describe().startswith(f"byte {e.offset}:")
        return
    except RDBError as e:  # pragma: no cover - the assertion message is the point
        raise AssertionError(f"cut at {cut}: {type(e).__name__} {e.describe()}") from None
    assert cut >= end, f"cut at {cut} parsed although the RDB ends at {end}"


@pytest.mark.slow
def test_cut_every_byte_of_small_fixtures():
    files = _small_public_fixtures()
    assert len(files) >= 50
    cuts = 0
    for p in files:
        data = p.read_bytes()
        info = DumpInfo()
        for _ in parse(io.BytesIO(data), info, size=len(data)):
            pass
        end = info.bytes_read
        for cut in range(len(data)):
            _check_cut(data, cut, end, known=True)
            if cut % 3 == 0:
                _check_cut(data, cut, end, known=False)
            cuts += 1
    assert cuts >= 20_000


@pytest.mark.slow
def test_cut_a_real_dump_at_spread_offsets():
    # Every byte of the small fixtures above; here a real 370 KB dump at ~850 offsets
    # (each parse reads up to the cut, so this is the slow one).
    data = SMALL.read_bytes()
    n = len(data)
    offsets = sorted(
        {i * n // 600 for i in range(600)} | set(range(0, 120)) | set(range(n - 120, n + 1))
    )
    assert len(offsets) >= 800
    for cut in offsets:
        _check_cut(data, cut, n, known=True)
    for cut in offsets[::10]:
        _check_cut(data, cut, n, known=False)


@pytest.mark.slow
def test_cut_files_through_the_cli_never_show_a_traceback(tmp_path):
    data = SMALL.read_bytes()
    for i, cut in enumerate([9, 300, 4097, 100_000, 250_001, len(data) - 9, len(data) - 1]):
        path = tmp_path / f"cut{i}.rdb"
        path.write_bytes(data[:cut])
        proc = run_cli("load", str(path), "-o", str(tmp_path / f"cut{i}.duckdb"))
        err = proc.stderr
        assert proc.returncode == 4, err
        assert "Traceback" not in err and err.count("\n") == 1
        assert "unexpected end of input" in err and "keys read" in err


# -- hostile lengths ---------------------------------------------------------------------------
def _parse_stream(data: bytes, known: bool):
    info = DumpInfo()
    for _ in parse(io.BytesIO(data), info, size=len(data) if known else None):
        pass


@pytest.mark.parametrize("known", [True, False])
@pytest.mark.parametrize(
    "case", ["string64", "string32", "lzf_ratio", "count", "listpack", "stream_pel", "module"]
)
def test_hostile_lengths_fail_fast_without_allocating(case, known):
    body = {
        "string64": W.key(0, "s", b"\x81" + (1 << 62).to_bytes(8, "big") + b"x" * 10),
        "string32": W.key(0, "s", b"\x80" + (0xFFFFFFF0).to_bytes(4, "big") + b"x" * 10),
        "lzf_ratio": W.key(16, "h", b"\xc3" + W.length(10) + W.length(900_000_000) + b"x" * 10),
        "count": W.key(2, "set", W.length(1 << 39) + W.string("a") * 3),
        "listpack": W.key(16, "h", W.length(1 << 29) + b"\x00" * 10),
        "stream_pel": W.key(
            15,
            "st",
            W.length(0)
            + W.length(0)
            + W.length(0)
            + W.length(0)
            + W.length(1)
            + W.string("g")
            + W.length(0)
            + W.length(0)
            + W.length(1 << 38),
        ),
        "module": W.key(7, "m", W.length(12345 << 10) + W.length(5) + W.string("x" * 3) * 4),
    }[case]
    data = W.rdb(body, version=9)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(RDBError):
        _parse_stream(data, known)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200_000


def test_garbage_after_valid_header_is_an_error_not_a_hang():
    import random

    rng = random.Random(5)
    for _ in range(200):
        data = b"REDIS0009" + rng.randbytes(rng.randrange(0, 4000))
        for known in (True, False):
            try:
                _parse_stream(data, known)
            except RDBError:
                pass


def test_empty_and_tiny_inputs(tmp_path):
    for payload, kind in [
        (b"", "truncated"),
        (b"RED", "truncated"),
        (b"REDIS00", "truncated"),
        (b"hello world", "not-rdb"),
        (b"\x00" * 100, "not-rdb"),
    ]:
        path = tmp_path / "tiny.rdb"
        path.write_bytes(payload)
        [r] = load([str(path)], str(tmp_path / "t.duckdb"))
        assert r.error_kind == kind and not r.complete, (payload, r.error)


def test_shared_copy_unchanged(tmp_path):
    # Loading never touches the fixture (sanity: its bytes are the manifest's).
    import hashlib

    m = _manifest("truncated")
    path = V70 / "truncated" / "dump.rdb"
    copy = tmp_path / "d.rdb"
    shutil.copy(path, copy)
    load([str(copy)], str(tmp_path / "x.duckdb"))
    assert (
        hashlib.sha256(copy.read_bytes()).hexdigest()
        == hashlib.sha256(path.read_bytes()).hexdigest()
    )
    assert m["corruption"]["truncated_size"] == copy.stat().st_size


# -- regressions found by bench/fuzz.py ----------------------------------------------------------
@pytest.mark.parametrize(
    "entries",
    [
        [2, 1, -4, 5, 0],  # negative master field count: looped forever
        [0, 0, 1, b"f", 0, 0, 1, 1, -3, b"x", 4],  # negative entry field count
        [0, 0, 0, 0, 0, 5, 5, -1],
        [b"x", 0, 0, 0],  # master counts that are not integers
    ],
)
@pytest.mark.parametrize("skip_bad", [False, True])
def test_stream_listpack_with_negative_counts(entries, skip_bad):
    value = (
        W.length(1)
        + W.string(b"\0" * 16)
        + W.string(W.listpack(entries))
        + W.length(1)
        + W.length(5)
        + W.length(1)
        + W.length(0)
    )
    data = W.rdb(W.key(15, "st", value) + W.key(0, "after", W.string("ok")), version=9)
    if skip_bad:
        info = DumpInfo()
        keys = [r.key for r in parse(io.BytesIO(data), info, size=len(data), skip_bad=True)]
        assert keys == [b"after"] and info.skipped_keys == 1
    else:
        with pytest.raises(CorruptError, match="stream listpack"):
            _parse_stream(data, True)


@pytest.mark.slow
def test_listpack_of_millions_of_entries_is_refused_not_decoded():
    from rdbscan.rdb import blobs

    entries = [0] * (blobs.MAX_DECODED_ENTRIES // 2 + 10)
    lp = W.listpack([0, 0, 0, 0] + entries * 2, count=65535)  # ~8 MB of 1-byte entries
    value = (
        W.length(1)
        + W.string(b"\0" * 16)
        + W.string(lp)
        + W.length(1)
        + W.length(5)
        + W.length(1)
        + W.length(0)
    )
    data = W.rdb(W.key(15, "st", value), version=9)
    with pytest.raises(CorruptError, match="decodes entry by entry"):
        _parse_stream(data, False)
