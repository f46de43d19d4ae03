"""Valkey 9.2's VKCS whole-file compression (docs/inputs.md, "Valkey's VKCS envelope"): an
8-byte envelope and one LZ4 or zstd frame, from a file, stdin, S3 and inside replication
captures; the same rows as the plain dump, exact error lines for what is not readable."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import struct
import subprocess
import sys
import tarfile
from pathlib import Path

import anycrc
import duckdb
import lz4.frame
import pytest
import rdbwriter as W
import s3fs
import zstandard
from moto.server import ThreadedMotoServer

from rdbscan.db.load import load
from rdbscan.errors import EXIT_DAMAGED, EXIT_OK, EXIT_PARTIAL
from rdbscan.rdb import source as S
from rdbscan.rdb.parser import DumpInfo, parse

ROOT = Path(__file__).parent.parent
SAMPLES = sorted((ROOT / "sample_dumps").glob("*.rdb"))
VALKEY8 = ROOT / "sample_dumps" / "valkey-8.0.1.rdb"  # REDIS0011, 562 keys
BLOCK = 64 * 1024  # Valkey's LZ4 block size; the zstd test frames end a block there too
CRC = anycrc.Model("CRC64-REDIS")
MARK = hashlib.sha1(b"vkcs").hexdigest().encode()
# (codec, codec checksum): the flag byte's bit 0 follows the codec checksum
WRAPS = [("lz4", False), ("lz4", True), ("zstd", False), ("zstd", True)]


# -- writing VKCS files -------------------------------------------------------------------------
def frame(data: bytes, codec: str, checksum: bool) -> tuple[bytes, list[int]]:
    """One codec frame of `data`, written as Valkey's stream writer does (LZ4: 64 KiB
    independent blocks, block checksums with the flag, no content size; zstd: a streamed frame,
    content checksum with the flag), and the frame offset of the block holding each 64 KiB of
    `data` (for zstd the first one also holds the frame header)."""
    chunks = [data[i : i + BLOCK] for i in range(0, len(data), BLOCK)]
    starts = []
    if codec == "lz4":
        c = lz4.frame.LZ4FrameCompressor(
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
            block_linked=False,
            content_checksum=False,
            block_checksum=checksum,
            auto_flush=True,
        )
        out = c.begin()
        for chunk in chunks:
            starts.append(len(out))
            out += c.compress(chunk)
        return out + c.flush(), starts
    z = zstandard.ZstdCompressor(write_checksum=checksum, write_content_size=False).compressobj()
    out = b""
    for chunk in chunks:
        starts.append(len(out))
        out += z.compress(chunk) + z.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    return out + z.flush(), starts


def envelope(codec: int, flags: int, kind: int = 0, version: int = 1) -> bytes:
    return b"VKCS" + bytes([version, codec, flags, kind])


def vkcs(data: bytes, codec: str = "lz4", checksum: bool = True, kind: int = 0) -> bytes:
    body, _ = frame(data, codec, checksum)
    return envelope({"lz4": 1, "zstd": 2}[codec], int(checksum), kind) + body


def relabel(data: bytes, magic: bytes) -> bytes:
    """`data` with another 9-byte magic and its CRC64 made right again."""
    body = magic + data[9:-8]
    return body + struct.pack("<Q", CRC.calc(body))


def capture(payload: bytes, how: str) -> bytes:
    """`payload` as a replication capture: diskless (`$EOF:`) or disk-based (`$<length>`)."""
    if how == "eof":
        return b"$EOF:" + MARK + b"\r\n" + payload + MARK
    return b"$%d\r\n" % len(payload) + payload


# -- reading them back --------------------------------------------------------------------------
def keys_rows(db: Path) -> list:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute("SELECT * EXCLUDE (dump_id) FROM keys ORDER BY file_offset").fetchall()
    finally:
        con.close()


def dump_row(db: Path, cols: str):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(f"SELECT {cols} FROM dumps").fetchall()
    finally:
        con.close()


def run_cli(args, stdin: bytes | None = None):
    """The installed entry point, in a subprocess (real pipes, real exit codes)."""
    return subprocess.run(
        [sys.executable, "-m", "rdbscan", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=300,
    )


def error_line(tmp_path: Path, data: bytes, name: str = "dump.vkcs") -> tuple[int, str, Path]:
    path = tmp_path / name
    path.write_bytes(data)
    proc = run_cli(["load", path, "-o", tmp_path / "e.duckdb", "-q"])
    return proc.returncode, proc.stderr.decode(), path


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """Each sample dump (and a VALKEY080 relabelling of the Valkey one) and its key rows."""
    out = {}
    root = tmp_path_factory.mktemp("plain")
    payloads = {p.name: p.read_bytes() for p in SAMPLES}
    payloads["valkey080.rdb"] = relabel(VALKEY8.read_bytes(), b"VALKEY080")
    for name, data in payloads.items():
        (root / name).write_bytes(data)
        db = root / f"{name}.duckdb"
        [r] = load([str(root / name)], str(db))
        assert r.complete and r.checksum == "ok" and r.keys > 0, (name, r.error)
        out[name] = (data, keys_rows(db))
    assert len(out) == 5
    return out


# -- the same rows --------------------------------------------------------------------------------
@pytest.mark.parametrize(("codec", "checksum"), WRAPS)
def test_wrapped_samples_give_the_same_rows(tmp_path, plain, codec, checksum):
    for name, (data, rows) in plain.items():
        path = tmp_path / name  # the name says .rdb: detection is by the magic bytes
        wrapped = vkcs(data, codec, checksum)
        assert wrapped[:8] == b"VKCS\x01" + bytes([1 if codec == "lz4" else 2, checksum, 0])
        path.write_bytes(wrapped)
        db = tmp_path / f"{name}.duckdb"
        [r] = load([str(path)], str(db))
        assert (r.error, r.complete, r.compression, r.framing) == (
            None,
            True,
            f"vkcs-{codec}",
            "rdb",
        ), name
        assert keys_rows(db) == rows, name
        assert dump_row(
            db, "compression, framing, checksum, bytes_read, file_size, tail_bytes"
        ) == [(f"vkcs-{codec}", "rdb", "ok", len(data), None, 0)]


def test_lz4_frame_with_content_size_and_checksum(tmp_path, plain):
    """Valkey writes neither, but an LZ4 frame header may hold both (19 bytes, not 7)."""
    data, rows = plain["valkey-8.0.1.rdb"]
    body = lz4.frame.compress(data, store_size=True, content_checksum=True, block_checksum=True)
    path = tmp_path / "sized.vkcs"
    path.write_bytes(envelope(1, 1) + body)
    db = tmp_path / "s.duckdb"
    [r] = load([str(path)], str(db))
    assert r.complete and r.error is None and r.compression == "vkcs-lz4"
    assert keys_rows(db) == rows


def test_valkey081_reads_as_its_unwrapped_file(tmp_path):
    """A VALKEY081 payload (Valkey 9.1+): wrapped, it is read exactly as the plain file is,
    whether or not this rdbscan reads RDB version 81 yet."""
    data = relabel(VALKEY8.read_bytes(), b"VALKEY081")
    plain_path, wrapped_path = tmp_path / "v81.rdb", tmp_path / "v81.vkcs"
    plain_path.write_bytes(data)
    wrapped_path.write_bytes(vkcs(data, "lz4", True))
    [a] = load([str(plain_path)], str(tmp_path / "a.duckdb"))
    [b] = load([str(wrapped_path)], str(tmp_path / "b.duckdb"))
    assert (b.complete, b.keys, b.error_kind, b.error_offset, b.compression) == (
        a.complete,
        a.keys,
        a.error_kind,
        a.error_offset,
        "vkcs-lz4",
    )
    if a.error is None:
        assert keys_rows(tmp_path / "b.duckdb") == keys_rows(tmp_path / "a.duckdb")
    else:  # 7: the frame header's size; the block holding byte N starts after it
        assert b.error == a.error.replace(str(plain_path), str(wrapped_path)).replace(
            f"byte {a.error_offset}:",
            f"byte {a.error_offset} (compressed block at input byte {8 + 7}):",
        )


# -- standard input, replication captures, tar, S3 -------------------------------------------------
@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_stdin(tmp_path, plain, codec):
    data, rows = plain["valkey080.rdb"]
    db = tmp_path / "s.duckdb"
    proc = run_cli(["load", "-", "-o", db, "-q"], stdin=vkcs(data, codec))
    assert (proc.returncode, proc.stderr) == (EXIT_OK, b"")
    assert keys_rows(db) == rows
    assert dump_row(db, "path, compression, framing, file_size, complete") == [
        ("<stdin>", f"vkcs-{codec}", "rdb", None, True)
    ]


@pytest.mark.parametrize("how", ["eof", "length"])
@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_inside_replication_captures(tmp_path, plain, how, codec):
    """A VKCS file as the payload of a full sync: `$<length>` (disk-based: the RDB file itself)
    and `$EOF:` (diskless: the mark follows the frame), from a file and through a pipe."""
    data, rows = plain["redis-7.4.1.rdb"]
    payload = capture(vkcs(data, codec), how)
    framing = "replication-eof" if how == "eof" else "replication-length"
    path = tmp_path / "capture.bin"
    path.write_bytes(payload)
    db = tmp_path / "r.duckdb"
    [r] = load([str(path)], str(db))
    assert (r.error, r.complete, r.warnings, r.tail_bytes) == (None, True, [], 0)
    assert keys_rows(db) == rows
    assert dump_row(db, "compression, framing, checksum") == [(f"vkcs-{codec}", framing, "ok")]
    db2 = tmp_path / "r2.duckdb"
    resync = b"+FULLRESYNC 8de1787ba490483314a4d30f1c628bc5025eb761 0\r\n\n\n"
    proc = run_cli(["load", "-", "-o", db2, "-q"], stdin=resync + payload)
    assert (proc.returncode, proc.stderr) == (EXIT_OK, b"")
    assert keys_rows(db2) == rows
    assert dump_row(db2, "compression, framing") == [(f"vkcs-{codec}", framing)]


def test_replication_stream_kind(tmp_path, plain):
    """Stream kind 1: the decompressed payload is what a diskless replica receives; with its
    `$EOF:` header inside, or the RDB alone (framing replication-stream)."""
    data, rows = plain["valkey-8.0.1.rdb"]
    inner = vkcs(capture(data, "eof"), "zstd", True, kind=1)
    alone = vkcs(data, "lz4", True, kind=1)
    for name, payload, framing in (
        ("inner.bin", inner, "replication-eof"),
        ("alone.bin", alone, "replication-stream"),
    ):
        path = tmp_path / name
        path.write_bytes(payload)
        db = tmp_path / f"{name}.duckdb"
        [r] = load([str(path)], str(db))
        assert (r.error, r.complete, r.framing, r.warnings, r.tail_bytes) == (
            None,
            True,
            framing,
            [],
            0,
        )
        assert keys_rows(db) == rows


def test_tar_member(tmp_path, plain):
    data, rows = plain["redis-6.2.16.rdb"]
    path = tmp_path / "backup.tar"
    with tarfile.open(path, "w") as tf:
        info = tarfile.TarInfo("data/dump.rdb")
        wrapped = vkcs(data, "zstd")
        info.size = len(wrapped)
        tf.addfile(info, io.BytesIO(wrapped))
    db = tmp_path / "t.duckdb"
    [r] = load([str(path)], str(db))
    assert (r.error, r.complete, r.framing, r.compression) == (None, True, "tar", "vkcs-zstd")
    assert r.path == f"{path}:data/dump.rdb"
    assert keys_rows(db) == rows


@pytest.fixture(scope="module")
def bucket(plain):
    """moto's S3 server on a local port (as tests/test_s3.py), holding VKCS files."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    s3fs.S3FileSystem.clear_instance_cache()
    fs = s3fs.S3FileSystem()
    fs.mkdir("vkcs")
    data = plain["valkey080.rdb"][0]
    fs.pipe("vkcs/dump-lz4.rdb", vkcs(data, "lz4"))
    fs.pipe("vkcs/dump-zstd.rdb", vkcs(data, "zstd", False))
    fs.pipe("vkcs/bad-version.rdb", envelope(1, 1, version=2) + frame(data, "lz4", True)[0])
    try:
        yield fs
    finally:
        s3fs.S3FileSystem.clear_instance_cache()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        server.stop()


def test_s3(tmp_path, plain, bucket):
    rows = plain["valkey080.rdb"][1]
    for codec in ("lz4", "zstd"):
        url = f"s3://vkcs/dump-{codec}.rdb"
        db = tmp_path / f"{codec}.duckdb"
        [r] = load([url], str(db))
        assert (r.error, r.complete, r.path, r.compression) == (None, True, url, f"vkcs-{codec}")
        assert keys_rows(db) == rows
        assert dump_row(db, "path, compression, framing") == [(url, f"vkcs-{codec}", "rdb")]
    [r] = load(["s3://vkcs/bad-version.rdb"], str(tmp_path / "bad.duckdb"))
    assert (r.error, r.error_kind) == (
        "s3://vkcs/bad-version.rdb: byte 4: VKCS envelope version 2: rdbscan reads version 1; "
        "0 keys read",
        "unsupported",
    )


# -- envelopes rdbscan does not read: one line, exit 9 (a limit of rdbscan, not damage) --------
@pytest.mark.parametrize(
    ("head", "line"),
    [
        (envelope(1, 1, version=2), "byte 4: VKCS envelope version 2: rdbscan reads version 1"),
        (envelope(1, 1, version=0), "byte 4: VKCS envelope version 0: rdbscan reads version 1"),
        (
            envelope(3, 1),
            "byte 5: VKCS envelope codec 3: rdbscan reads codecs 1 (LZ4) and 2 (zstd)",
        ),
        (
            envelope(1, 0x81),
            "byte 6: VKCS envelope flags 0x81: reserved bits are set (rdbscan reads bit 0, the "
            "codec checksum, only)",
        ),
        (
            envelope(1, 0x02),
            "byte 6: VKCS envelope flags 0x02: reserved bits are set (rdbscan reads bit 0, the "
            "codec checksum, only)",
        ),
        (
            envelope(1, 1, kind=2),
            "byte 7: VKCS stream kind 2: rdbscan reads kinds 0 (RDB) and 1 (replication stream)",
        ),
    ],
)
def test_unreadable_envelopes(tmp_path, head, line):
    body, _ = frame(VALKEY8.read_bytes(), "lz4", True)
    code, err, path = error_line(tmp_path, head + body)
    assert (code, err) == (EXIT_PARTIAL, f"rdbscan: error: {path}: {line}; 0 keys read\n")
    [r] = load([str(path)], str(tmp_path / "x.duckdb"))
    assert (r.error_kind, r.error_offset, r.keys) == ("unsupported", int(line.split()[1][:-1]), 0)


def test_unreadable_envelope_inside_a_capture_names_its_input_byte(tmp_path):
    body, _ = frame(VALKEY8.read_bytes(), "zstd", True)
    payload = envelope(2, 1, version=7) + body
    header = b"$%d\r\n" % len(payload)
    code, err, path = error_line(tmp_path, header + payload)
    assert (code, err) == (
        EXIT_PARTIAL,
        f"rdbscan: error: {path}: byte {len(header) + 4}: VKCS envelope version 7: rdbscan "
        f"reads version 1; 0 keys read\n",
    )


def test_short_envelope_and_empty_frame(tmp_path):
    code, err, path = error_line(tmp_path, b"VKCS\x01\x01")
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte 6: the input ends inside the VKCS envelope, after 6 of "
        f"its 8 bytes; 0 keys read\n",
    )
    code, err, path = error_line(tmp_path, envelope(2, 1))
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte 0 (compressed block at input byte 8): unexpected end of "
        f"input: the input is empty, fewer than the 9 bytes of an RDB header (the vkcs-zstd "
        f"stream itself ends early); 0 keys read\n",
    )


# -- damaged frames: one line naming the logical offset and the compressed block ----------------
@pytest.mark.parametrize("codec", ["lz4", "zstd"])
def test_truncated_frame(tmp_path, codec):
    """Cut after 3 whole blocks: the 196,608 bytes they hold are read, and the line names the
    key they end in and the compressed block where that key starts."""
    data = VALKEY8.read_bytes()
    body, starts = frame(data, codec, True)
    code, err, path = error_line(
        tmp_path, envelope(1 if codec == "lz4" else 2, 1) + body[: starts[3]]
    )
    offset = 194966  # the quicklist node that 'list:large' was reading when the data ran out
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte {offset} (compressed block at input byte "
        f"{8 + starts[offset // BLOCK]}): unexpected end of input at byte 196608: quicklist "
        f"node needs 4013 bytes while reading key 'list:large', type 18 (quicklist-v2) (the "
        f"vkcs-{codec} stream itself ends early); 370 keys read\n",
    )
    [r] = load([str(path)], str(tmp_path / "t.duckdb"))
    assert (r.complete, r.error_kind, r.error_offset, r.keys) == (False, "truncated", offset, 370)
    assert dump_row(tmp_path / "t.duckdb", "compression, complete, keys") == [
        (f"vkcs-{codec}", False, 370)
    ]


def test_corrupted_lz4_block(tmp_path):
    """A flipped byte in block 3 (bytes 196,608 on): its block checksum (flag bit 0) fails;
    the three blocks before it are read."""
    data = VALKEY8.read_bytes()
    body, starts = frame(data, "lz4", True)
    bad = bytearray(body)
    bad[(starts[3] + starts[4]) // 2] ^= 0x5A
    code, err, path = error_line(tmp_path, envelope(1, 1) + bytes(bad))
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte 196608 (compressed block at input byte {8 + starts[3]}): "
        f"vkcs-lz4 data is corrupt: LZ4F_decompress failed with code: "
        f"ERROR_blockChecksum_invalid while reading key 'list:large', type 18 (quicklist-v2); "
        f"370 keys read\n",
    )
    [r] = load([str(path)], str(tmp_path / "c.duckdb"))
    assert (r.error_kind, r.error_offset, r.keys) == ("corrupt", 196608, 370)


def test_corrupted_zstd_checksum(tmp_path):
    """A flipped byte in the zstd content checksum (flag bit 0): every key decompressed and
    read, and the file still reported damaged at the frame's last block."""
    data = VALKEY8.read_bytes()
    body, _ = frame(data, "zstd", True)
    bad = bytearray(body)
    bad[-1] ^= 0x01
    code, err, path = error_line(tmp_path, envelope(2, 1) + bytes(bad))
    last = 8 + len(body) - 7  # the empty last block (3 bytes) and the checksum (4)
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte {len(data)} (compressed block at input byte {last}): "
        f"vkcs-zstd data is corrupt: zstd decompressor error: Restored data doesn't match "
        f"checksum; 562 keys read\n",
    )
    [r] = load([str(path)], str(tmp_path / "c.duckdb"))
    assert (r.complete, r.error_kind, r.keys) == (False, "corrupt", 562)


@pytest.mark.parametrize(("codec", "checksum"), WRAPS)
def test_flipped_bytes_are_one_line(tmp_path, codec, checksum):
    """Without a codec checksum a flipped byte may decode to other bytes: then the RDB parser or
    its CRC64 finds it.  Either way one line, exit 4 or 5, never a traceback."""
    data = VALKEY8.read_bytes()
    wrapped = bytearray(vkcs(data, codec, checksum))
    for i in range(len(wrapped) // 2, len(wrapped) // 2 + 16):
        wrapped[i] ^= 0x5A
    code, err, _ = error_line(tmp_path, bytes(wrapped))
    assert code in (4, 5), err
    assert err.startswith("rdbscan: error: ") and err.count("\n") == 1 and "Traceback" not in err


# -- bounds and nesting ------------------------------------------------------------------------------
class _FakeStdin:
    def __init__(self, raw):
        self.buffer = raw


def test_decompression_bound_applies(monkeypatch):
    rdb = W.rdb(W.key(0, "zeros", W.string(b"\x00" * (8 << 20))), version=11)
    payload = vkcs(rdb, "lz4")
    assert len(rdb) / len(payload) > 200
    monkeypatch.setattr(sys, "stdin", _FakeStdin(io.BytesIO(payload)))
    src = S.open_source("-", max_ratio=100, ratio_floor=1 << 20)
    with pytest.raises(S.DecompressionError, match=r"^vkcs-lz4 input expands more than 100:1 \("):
        for _ in parse(src.stream, DumpInfo(), size=src.size, initial=src.initial):
            pass
    monkeypatch.setattr(sys, "stdin", _FakeStdin(io.BytesIO(payload)))
    src = S.open_source("-", max_ratio=None)  # --allow-ratio
    info = DumpInfo()
    assert sum(1 for _ in parse(src.stream, info, size=src.size, initial=src.initial)) == 1
    assert info.complete and info.checksum == "ok"


def test_compressed_twice_is_refused(tmp_path):
    data = VALKEY8.read_bytes()
    code, err, path = error_line(tmp_path, gzip.compress(vkcs(data)))
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte 0: gzip data holds another compressed stream (vkcs); "
        f"decompress it first; 0 keys read\n",
    )
    code, err, path = error_line(tmp_path, vkcs(gzip.compress(data), "zstd"))
    assert (code, err) == (
        EXIT_DAMAGED,
        f"rdbscan: error: {path}: byte 0: vkcs-zstd data holds another compressed stream "
        f"(gzip); decompress it first; 0 keys read\n",
    )


def test_bytes_after_the_frame_are_trailing_bytes(tmp_path, plain):
    """Valkey writes one frame and ignores what follows; rdbscan counts it, as after a plain
    RDB, and says so."""
    data, rows = plain["valkey-8.0.1.rdb"]
    path = tmp_path / "tail.vkcs"
    path.write_bytes(vkcs(data, "lz4") + b"\x00" * 100)
    db = tmp_path / "t.duckdb"
    [r] = load([str(path)], str(db))
    assert (r.complete, r.tail_bytes, r.warnings) == (
        True,
        100,
        [f"{path}: 100 bytes follow the RDB's end marker and were not read"],
    )
    assert keys_rows(db) == rows


# -- the corpus (opt-in) ---------------------------------------------------------------------------
@pytest.mark.skipif(
    not os.environ.get("RDBSCAN_CORPUS"),
    reason="set RDBSCAN_CORPUS to the shared dumps folder to wrap real Valkey 9.1.2 dumps",
)
def test_corpus_valkey_9_1_dumps_wrapped(tmp_path):
    root = Path(os.environ["RDBSCAN_CORPUS"]) / "valkey-9.1.2"
    dumps = [root / d / "dump.rdb" for d in ("small", "seed1", "variants/cluster", "variants/lfu")]
    assert all(p.exists() for p in dumps)
    for n, path in enumerate(dumps):
        data = path.read_bytes()
        assert data[:9] == b"VALKEY080"
        [a] = load([str(path)], str(tmp_path / f"{n}.duckdb"))
        assert a.complete and a.checksum == "ok"
        expected = keys_rows(tmp_path / f"{n}.duckdb")
        for codec, checksum in (("lz4", True), ("zstd", True)):
            wrapped = tmp_path / f"{n}-{codec}.vkcs"
            wrapped.write_bytes(vkcs(data, codec, checksum))
            db = tmp_path / f"{n}-{codec}.duckdb"
            [b] = load([str(wrapped)], str(db))
            assert (b.complete, b.checksum, b.keys, b.compression) == (
                True,
                "ok",
                a.keys,
                f"vkcs-{codec}",
            )
            assert keys_rows(db) == expected, (path, codec)
