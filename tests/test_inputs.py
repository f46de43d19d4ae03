"""Every input a user has: compressed (by magic bytes), piped, AOF preamble, appendonlydir,
replication captures, tar; the input is never written to."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import shutil
import sys
import tarfile
from pathlib import Path

import duckdb
import lz4.frame
import pytest
import rdbwriter as W
import zstandard
from common import FIXTURES, run_cli

from rdbscan.db.load import load
from rdbscan.rdb import source as S
from rdbscan.rdb.parser import DumpInfo, parse

SMALL = FIXTURES / "redis-7.0.15" / "small" / "dump.rdb"
AOF62 = FIXTURES / "redis-6.2.16" / "variants" / "aof-preamble"
AOF70 = FIXTURES / "redis-7.0.15" / "variants" / "aof-preamble"

ROW_SQL = (
    "SELECT db, key_bytes, type, encoding, length, max_elem_bytes, serialized_bytes, "
    "memory_bytes, expire_at_ms, file_offset FROM keys ORDER BY file_offset"
)

COMPRESSORS = {
    "gzip": gzip.compress,
    "zstd": lambda d: zstandard.ZstdCompressor().compress(d),
    "lz4": lz4.frame.compress,
    "bzip2": bz2.compress,
    "xz": lzma.compress,
}


def _rows(db: Path, dump_id: int | None = None) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        where = "" if dump_id is None else f" WHERE dump_id = {dump_id}"
        sql = ROW_SQL.replace(" ORDER BY", where + " ORDER BY")
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _dump_row(db: Path, cols: str, dump_id: int = 1):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT {cols} FROM dumps WHERE dump_id = ?", [dump_id]).fetchone()
    finally:
        con.close()


@pytest.fixture(scope="module")
def plain_rows(tmp_path_factory):
    db = tmp_path_factory.mktemp("plain") / "p.duckdb"
    [r] = load([str(SMALL)], str(db))
    assert r.complete and r.error is None
    rows = _rows(db)
    assert len(rows) == r.keys > 500
    return rows


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_compressed_files_give_identical_rows(tmp_path, plain_rows, kind):
    data = SMALL.read_bytes()
    # Misleading name: detection is by magic bytes, never by the file name.
    path = tmp_path / "backup.rdb"
    path.write_bytes(COMPRESSORS[kind](data))
    db = tmp_path / "c.duckdb"
    [r] = load([str(path)], str(db))
    assert r.error is None and r.complete and r.compression == kind
    assert _rows(db) == plain_rows
    assert _dump_row(db, "compression, framing, checksum, bytes_read") == (
        kind,
        "rdb",
        "ok",
        len(data),
    )


@pytest.mark.parametrize("kind", ["gzip", "zstd", "lz4", "xz"])
def test_concatenated_members_are_read_in_order(tmp_path, plain_rows, kind):
    data = SMALL.read_bytes()
    cut = len(data) // 3
    path = tmp_path / "multi.bin"
    path.write_bytes(COMPRESSORS[kind](data[:cut]) + COMPRESSORS[kind](data[cut:]))
    db = tmp_path / "m.duckdb"
    [r] = load([str(path)], str(db))
    assert r.error is None and r.complete
    assert _rows(db) == plain_rows


def test_plain_file_named_gz_is_read_as_plain(tmp_path, plain_rows):
    path = tmp_path / "dump.rdb.gz"
    shutil.copy(SMALL, path)
    db = tmp_path / "x.duckdb"
    [r] = load([str(path)], str(db))
    assert r.complete and r.compression is None
    assert _rows(db) == plain_rows


@pytest.mark.parametrize("kind", [None, "gzip", "zstd", "lz4"])
def test_stdin_gives_identical_rows(tmp_path, plain_rows, kind):
    data = SMALL.read_bytes()
    payload = data if kind is None else COMPRESSORS[kind](data)
    db = tmp_path / "s.duckdb"
    proc = run_cli("load", "-", "-o", str(db), input=payload)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert _rows(db) == plain_rows
    assert _dump_row(db, "path, compression, file_size, complete") == ("<stdin>", kind, None, True)


class _Pipe(io.RawIOBase):
    """A non-seekable stream that returns short reads, like a pipe."""

    def __init__(self, data: bytes, step: int = 4093):
        self.data = data
        self.pos = 0
        self.step = step
        self.reads = 0

    def readable(self):
        return True

    def seekable(self):
        return False

    def seek(self, *a):  # pragma: no cover - must never be called
        raise AssertionError("seek on a pipe")

    def tell(self):  # pragma: no cover - must never be called
        raise AssertionError("tell on a pipe")

    def read(self, n=-1):
        self.reads += 1
        n = len(self.data) - self.pos if n < 0 else min(n, self.step)
        out = self.data[self.pos : self.pos + n]
        self.pos += len(out)
        return out


class _FakeStdin:
    def __init__(self, raw):
        self.buffer = raw


@pytest.mark.parametrize("kind", [None, "gzip", "zstd", "lz4", "bzip2", "xz"])
def test_non_seekable_short_reads(monkeypatch, kind):
    data = SMALL.read_bytes()
    payload = data if kind is None else COMPRESSORS[kind](data)
    pipe = _Pipe(payload)
    monkeypatch.setattr(sys, "stdin", _FakeStdin(pipe))
    src = S.open_source("-")
    assert src.size is None and src.compression == kind
    info = DumpInfo()
    n = sum(1 for _ in parse(src.stream, info, size=src.size, initial=src.initial))
    src.close()
    assert info.complete and info.checksum == "ok" and n == info.keys
    assert info.trailing_bytes == 0


def test_aof_preamble_single_file_62(tmp_path):
    m = json.loads((AOF62 / "manifest.json").read_text())
    path = AOF62 / "appendonly.aof"
    db = tmp_path / "a.duckdb"
    [r] = load([str(path)], str(db))
    assert r.error is None and r.complete and r.keys == m["key_count"]
    assert r.framing == "aof-preamble"
    assert r.tail_bytes == m["file_size"] - m["rdb_preamble_length"]
    row = _dump_row(db, "framing, tail_bytes, bytes_read, aof_preamble, complete")
    assert row == ("aof-preamble", r.tail_bytes, m["rdb_preamble_length"], True, True)


def test_aof_preamble_through_stdin(tmp_path):
    m = json.loads((AOF62 / "manifest.json").read_text())
    db = tmp_path / "a.duckdb"
    proc = run_cli(
        "load", "-", "-o", str(db), input=gzip.compress((AOF62 / "appendonly.aof").read_bytes())
    )
    assert proc.returncode == 0, proc.stderr
    assert _dump_row(db, "keys, framing, tail_bytes") == (
        m["key_count"],
        "aof-preamble",
        m["file_size"] - m["rdb_preamble_length"],
    )


@pytest.mark.parametrize("which", ["dir", "manifest", "datadir"])
def test_aof_dir_70(tmp_path, which):
    m = json.loads((AOF70 / "manifest.json").read_text())
    target = {
        "dir": AOF70 / "appendonlydir",
        "manifest": AOF70 / "appendonlydir" / "appendonly.aof.manifest",
        "datadir": AOF70,
    }[which]
    db = tmp_path / "d.duckdb"
    [r] = load([str(target)], str(db))
    assert r.error is None and r.complete and r.keys == m["key_count"]
    assert r.framing == "aof-dir" and r.path.endswith("appendonly.aof.2.base.rdb")
    assert _dump_row(db, "keys, framing, checksum") == (m["key_count"], "aof-dir", "ok")


def test_aof_without_preamble_is_a_clear_error(tmp_path):
    incr = AOF70 / "appendonlydir" / "appendonly.aof.2.incr.aof"
    proc = run_cli("load", str(incr), "-o", str(tmp_path / "x.duckdb"))
    assert proc.returncode == 4
    err = proc.stderr
    assert "without an RDB preamble" in err and "Traceback" not in err


def test_aof_manifest_problems(tmp_path):
    d = tmp_path / "appendonlydir"
    d.mkdir()
    (d / "appendonly.aof.manifest").write_text("file appendonly.aof.1.incr.aof seq 1 type i\n")
    with pytest.raises(S.SourceError, match="no base file"):
        S.open_source(str(d))
    (d / "appendonly.aof.manifest").write_text("file appendonly.aof.1.base.rdb seq 1 type b\n")
    with pytest.raises(S.SourceError, match="missing"):
        S.open_source(str(d))
    (d / "appendonly.aof.manifest").write_text("file ../../etc/passwd seq 1 type b\n")
    with pytest.raises(S.SourceError, match="outside"):
        S.open_source(str(d))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(S.SourceError, match="directory"):
        S.open_source(str(empty))
    # Quoted names (Redis writes names with spaces in quotes).
    base, incr = S.parse_aof_manifest(
        b'file "my aof.1.base.rdb" seq 1 type b\nfile x.1.incr.aof seq 1 type i\n', "m"
    )
    assert base == "my aof.1.base.rdb" and incr == ["x.1.incr.aof"]


def _repl_payloads(data: bytes) -> dict[str, bytes]:
    mark = hashlib.sha1(b"rdbscan").hexdigest().encode()
    assert len(mark) == 40
    return {
        "eof": b"$EOF:" + mark + b"\r\n" + data + mark,
        "length": b"$%d\r\n" % len(data) + data,
        "fullresync-eof": b"+FULLRESYNC 8de1787ba490483314a4d30f1c628bc5025eb761 2443808505\r\n"
        + b"\n" * 5
        + b"$EOF:"
        + mark
        + b"\r\n"
        + data
        + mark,
        "fullresync-length": b"+FULLRESYNC 8de1787ba490483314a4d30f1c628bc5025eb761 0\r\n\n\n"
        + b"$%d\r\n" % len(data)
        + data
        + b"*1\r\n$4\r\nPING\r\n",
        # `redis-cli --rdb -` (7.0) from a diskless master: no header, the mark left at the end
        "redis-cli-eof": data + mark,
    }


@pytest.mark.parametrize(
    "name", ["eof", "length", "fullresync-eof", "fullresync-length", "redis-cli-eof"]
)
def test_replication_framings(tmp_path, plain_rows, name):
    data = SMALL.read_bytes()
    payload = _repl_payloads(data)[name]
    path = tmp_path / "capture.bin"
    path.write_bytes(payload)
    db = tmp_path / "r.duckdb"
    [r] = load([str(path)], str(db))
    assert r.error is None and r.complete and not r.warnings
    assert r.framing == ("replication-eof" if name.endswith("eof") else "replication-length")
    assert r.tail_bytes == 0
    assert _rows(db) == plain_rows
    # The same through a pipe, compressed.
    db2 = tmp_path / "r2.duckdb"
    proc = run_cli("load", "-", "-o", str(db2), input=gzip.compress(payload))
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr
    assert _rows(db2) == plain_rows


@pytest.mark.parametrize(
    "tail", [b"x" * 40, b"5dd5e08805e2c2903476af96f1d87a220a87b8a", b"5dd5e0" * 8]
)
def test_other_trailing_bytes_are_reported(tmp_path, tail):
    """Bytes after the RDB that are not an AOF tail nor a replication EOF mark (40 lowercase hex
    characters): kept out, counted and reported as a warning."""
    path = tmp_path / "tail.rdb"
    path.write_bytes(SMALL.read_bytes() + tail)
    [r] = load([str(path)], str(tmp_path / "t.duckdb"))
    assert r.complete and r.error is None and r.framing == "rdb" and r.tail_bytes == len(tail)
    assert r.warnings == [
        f"{path}: {len(tail)} bytes follow the RDB's end marker and were not read"
    ]


def test_replication_length_shorter_than_declared(tmp_path):
    data = SMALL.read_bytes()
    path = tmp_path / "capture.bin"
    path.write_bytes(b"$%d\r\n" % len(data) + data[:100_000])
    [r] = load([str(path)], str(tmp_path / "x.duckdb"))
    assert r.error_kind == "truncated" and not r.complete and r.keys > 0


@pytest.mark.parametrize("compressed", [False, True])
def test_tar_archives(tmp_path, plain_rows, compressed):
    path = tmp_path / ("backup.tar.gz" if compressed else "backup.tar")
    with tarfile.open(path, "w:gz" if compressed else "w") as tf:
        tf.add(SMALL, arcname="data/dump.rdb")
    db = tmp_path / "t.duckdb"
    [r] = load([str(path)], str(db))
    assert r.error is None and r.complete and r.framing == "tar"
    assert r.path.endswith(":data/dump.rdb")
    assert _rows(db) == plain_rows


def test_input_is_never_written(tmp_path):
    src_dir = tmp_path / "in"
    src_dir.mkdir()
    shutil.copy(SMALL, src_dir / "dump.rdb")
    (src_dir / "dump.rdb.gz").write_bytes(gzip.compress(SMALL.read_bytes()))
    shutil.copytree(AOF70 / "appendonlydir", src_dir / "appendonlydir")
    for p in src_dir.rglob("*"):
        p.chmod(0o444) if p.is_file() else None

    def snapshot():
        return {
            str(p): (
                p.stat().st_mtime_ns,
                p.stat().st_size,
                hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None,
            )
            for p in sorted(src_dir.rglob("*"))
        }

    before = snapshot()
    out = tmp_path / "out"
    out.mkdir()
    res = load(
        [str(src_dir / "dump.rdb"), str(src_dir / "dump.rdb.gz"), str(src_dir / "appendonlydir")],
        str(out / "x.duckdb"),
    )
    assert all(r.complete for r in res)
    assert snapshot() == before


def test_decompression_bomb_is_refused():
    # 8 MiB of zeros inside a valid RDB string value: gzip shrinks it ~1000x.
    value = b"\x00" * (8 << 20)
    rdb = W.rdb(W.key(0, "zeros", W.string(value)), version=9)
    payload = gzip.compress(rdb, compresslevel=9)
    assert len(rdb) / len(payload) > 100
    old = sys.stdin
    sys.stdin = _FakeStdin(io.BytesIO(payload))
    try:
        src = S.open_source("-", max_ratio=100, ratio_floor=1 << 20)
        with pytest.raises(S.DecompressionError, match="expands more than 100:1"):
            for _ in parse(src.stream, DumpInfo(), size=src.size, initial=src.initial):
                pass
        # With the default bound the same input is fine.
        sys.stdin = _FakeStdin(io.BytesIO(payload))
        src = S.open_source("-")
        info = DumpInfo()
        assert sum(1 for _ in parse(src.stream, info, size=src.size, initial=src.initial)) == 1
        assert info.complete
    finally:
        sys.stdin = old


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_corrupt_compressed_data_is_an_rdb_error(tmp_path, kind):
    data = SMALL.read_bytes()
    comp = bytearray(COMPRESSORS[kind](data))
    mid = len(comp) // 2
    for i in range(mid, mid + 64):
        comp[i] ^= 0x5A
    path = tmp_path / "bad.bin"
    path.write_bytes(bytes(comp))
    proc = run_cli("load", str(path), "-o", str(tmp_path / "x.duckdb"))
    err = proc.stderr
    # zstd and lz4 frames without content checksums may decode garbage: then the RDB parser
    # or its CRC64 notices.  Either way: one line, no traceback, exit 4 or 5.
    assert proc.returncode in (4, 5), err
    assert "Traceback" not in err and err.count("\n") <= 2


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_truncated_compressed_file(tmp_path, kind):
    data = SMALL.read_bytes()
    comp = COMPRESSORS[kind](data)
    path = tmp_path / "cut.bin"
    path.write_bytes(comp[: len(comp) * 2 // 3])
    db = tmp_path / "x.duckdb"
    [r] = load([str(path)], str(db))
    assert not r.complete and r.error_kind == "truncated", r.error
    assert f"the {kind} stream itself ends early" in r.error
    if kind == "bzip2":  # one 900 KiB block: not one byte of the RDB came out, so no dumps row
        assert not db.exists()  # and the new database, with nothing committed, is removed
    else:
        assert _dump_row(db, "complete, keys")[0] is False


def test_compressed_stream_inside_compressed_stream(tmp_path):
    path = tmp_path / "double.gz"
    path.write_bytes(gzip.compress(gzip.compress(SMALL.read_bytes())))
    [r] = load([str(path)], str(tmp_path / "x.duckdb"))
    assert r.error_kind == "not-rdb" and "decompress it first" in r.error


def test_cli_names_compression_in_help():
    out = run_cli("load", "--help").output
    assert "--skip-bad" in out and "gzip" in out


def test_xz_decoder_memory_is_limited(monkeypatch):
    payload = lzma.compress(SMALL.read_bytes(), preset=6)  # an 8 MiB dictionary
    monkeypatch.setattr(S, "XZ_MEMLIMIT", 1 << 20)
    monkeypatch.setattr(sys, "stdin", _FakeStdin(io.BytesIO(payload)))
    with pytest.raises(S.DecompressionError, match="decoder memory"):
        src = S.open_source("-")
        for _ in parse(src.stream, DumpInfo(), size=src.size, initial=src.initial):
            pass
