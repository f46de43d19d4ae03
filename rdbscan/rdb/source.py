"""Source bytes: open what the user named as a forward-only binary stream of RDB data.

What a user may hand us (docs/inputs.md):

* a file path, or `-` for standard input (pipes work: nothing here seeks);
* compressed input: gzip, zstd, lz4 (frame format), bzip2 and xz, recognised by their magic
  bytes (never by the file name) and decompressed as a stream.  Concatenated members/frames
  are read one after the other.  A compressed stream that ends early is read up to where it
  ends and the RDB parser then reports the truncation at the right RDB offset;
* Valkey's whole-file compression (9.2, `rdbcompression lz4`): an 8-byte `VKCS` envelope and
  one LZ4 or zstd frame, at the start of the input or of a replication payload (_VkcsFrame);
* Redis 7's multi-part AOF: the `appendonlydir/` directory, its `*.manifest` file, or the
  data directory that holds `appendonlydir/` -- the base file of the manifest (`type b`) is
  read;
* an AOF with an RDB preamble (`REDIS...` followed by RESP commands): the parser stops at
  the RDB's EOF opcode and the loader records how many bytes follow (`dumps.tail_bytes`);
* replication captures: `$EOF:<40-byte mark>\\r\\n<rdb><mark>` (diskless) and
  `$<length>\\r\\n<rdb>` (disk-backed), optionally preceded by the `+FULLRESYNC ...` line and
  the `\\n` keep-alives a master sends while it prepares the payload;
* a tar archive (e.g. `backup.tar.gz`): its first regular member whose name ends in `.rdb`
  (or its first regular member).

The input is opened read-only and nothing is created next to it.

Memory and time are bounded: decompressors are asked for at most what the parser requests,
the decompressed output is capped relative to the compressed input consumed (MAX_RATIO, after
RATIO_FLOOR bytes; `--allow-ratio` lifts it) so a decompression bomb ends with an error instead
of running for minutes, and an xz decoder may use at most XZ_MEMLIMIT (docs/hostile-inputs.md).
"""

from __future__ import annotations

import io
import os
import re
import shlex
import sys
from array import array
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from . import remote
from .errors import CorruptError, NotRDBError, TruncatedError, UnsupportedError

# Decompression-bomb bound: the decompressed output may exceed MAX_RATIO times the
# compressed bytes consumed only while it is below RATIO_FLOOR.  Real RDB files compress
# 2-20x (their strings are already LZF-compressed); gzip itself cannot exceed ~1032x, and 1 MB
# of gzip expanding 1000x into cheap records took minutes to parse.  The ratio bounds the
# parse time per compressed byte; open_source(max_ratio=None) (--allow-ratio) lifts it.
MAX_RATIO = 200
RATIO_FLOOR = 16 << 20
RAW_BLOCK = 64 * 1024  # compressed bytes read per call
ZSTD_SLICE = 1024  # zstd input fed per decompress() call (bounds its output)
PEEK = 512  # bytes inspected to recognise a format (a tar header)
URL_BLOCK = 8 << 20  # bytes read per request from a URL (s3://, https://): memory held per input
MAX_KEEPALIVES = 1 << 20  # '\n' keep-alives skipped before a `$` replication header
MANIFEST_MAX = 1 << 20  # an AOF manifest larger than this is not a manifest
# xz decoder memory: every preset fits (xz -9 / -9e need 65 MiB); a header asking for a larger
# dictionary (up to 4 GiB) is refused before the decoder allocates it.
XZ_MEMLIMIT = 128 << 20

# Valkey's VKCS envelope (valkey-io/valkey src/compression_stream.h; docs/inputs.md): magic,
# version, codec, flags (bit 0: the codec's checksums are on; the others reserved), stream kind.
VKCS_MAGIC = b"VKCS"
VKCS_ENVELOPE = 8
VKCS_VERSION = 1
VKCS_CODECS = {1: "lz4", 2: "zstd"}
VKCS_KINDS = {0: "rdb", 1: "replication stream"}
VKCS_FLAG_CHECKSUM = 0x01
# Decompressed bytes behind the read position whose compressed block is remembered for error
# lines (more than the largest item the parser holds, reader.MAX_ITEM).
VKCS_KEEP = 2 << 30
LZ4_OUT = 1 << 20  # decompressed bytes asked of the LZ4 decoder per call

_MAGICS = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\x04\x22\x4d\x18", "lz4"),
    (b"\xfd7zXZ\x00", "xz"),
)
_BZ2 = re.compile(rb"BZh[1-9]")
_LEN_HEADER = re.compile(rb"\$(\d{1,19})\r\n")
_EOF_HEADER = re.compile(rb"\$EOF:(.{40})\r\n", re.S)
# The 40 random hex characters that end a diskless replication payload (Redis's EOF mark).
EOF_MARK = re.compile(rb"[0-9a-f]{40}")
_FULLRESYNC = re.compile(rb"\+(?:FULLRESYNC|CONTINUE)[^\r\n]{0,200}\r\n")


@dataclass
class Source:
    name: str  # what to call the input in messages and in `dumps.path`
    stream: object  # binary stream with .read(n)
    size: int | None  # bytes of RDB data when known (None for pipes and compressed)
    compression: str | None = None  # gzip | zstd | lz4 | bzip2 | xz | vkcs-lz4 | vkcs-zstd
    # rdb | aof-dir | tar | replication-eof | replication-length | replication-stream
    framing: str | None = None
    initial: bytes = b""  # bytes already read from `stream` that belong to the RDB
    notes: dict = field(default_factory=dict)
    _closers: list = field(default_factory=list, repr=False)
    _pipe: Any = field(default=None, repr=False)  # the _Available a pipe is read through

    def input_ready(self) -> bool:
        """Whether reading the pipe would return at once (data or its end) instead of waiting
        for more input; False for a regular file."""
        return self._pipe is not None and self._pipe.ready()

    def input_offset(self, offset: int) -> int | None:
        """Where in the input the compressed block holding byte `offset` of the RDB data starts
        (a VKCS frame); None for other inputs, or when that block is no longer remembered."""
        for obj in self._closers:
            if isinstance(obj, _Decompressed) and isinstance(obj.inner, _VkcsFrame):
                return obj.inner.input_offset(offset + obj.rdb_base)
        return None

    def close(self) -> None:
        for c in reversed(self._closers):
            try:
                c.close()
            except Exception:  # closing a half-read decompressor must never mask the result
                pass
        self._closers.clear()


class SourceError(Exception):
    """The input cannot be opened (missing file, directory without a base RDB, ...)."""


class DecompressionError(CorruptError):
    """The compressed layer is damaged or exceeds the decompression-ratio bound."""


# -- small stream helpers -----------------------------------------------------------------
class _Prefixed:
    """`head` followed by the rest of `raw` (what was peeked goes back in front)."""

    def __init__(self, head: bytes, raw):
        self.head = head
        self.raw = raw

    def read(self, n: int = -1) -> bytes:
        if self.head:
            if n < 0 or n >= len(self.head):
                h, self.head = self.head, b""
                if n < 0:
                    return h + self.raw.read()
                return h
            h, self.head = self.head[:n], self.head[n:]
            return h
        return self.raw.read(n)

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass


class _Counting:
    """Counts the compressed bytes a decompressor consumes."""

    def __init__(self, raw):
        self.raw = raw
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.count += len(data)
        return data

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass


class _Available:
    """A pipe or FIFO read as its data arrives: read(n) returns what is there (at least one
    byte, at most n) instead of waiting for n bytes, so that a live stream (`redis-cli
    --replica`) is parsed up to the RDB's end without waiting for more input."""

    def __init__(self, raw):
        self.raw = raw
        self._read1 = getattr(raw, "read1", raw.read)

    def read(self, n: int = -1) -> bytes:
        return self.raw.read() if n < 0 else self._read1(n)

    def ready(self) -> bool:
        import select

        try:
            return bool(select.select([self.raw], [], [], 0)[0])
        except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
            return False

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        pass


class _Limited:
    """At most `limit` bytes of `raw` (the payload of a `$<length>` replication header)."""

    def __init__(self, raw, limit: int):
        self.raw = raw
        self.left = limit

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        n = self.left if n < 0 else min(n, self.left)
        data = self.raw.read(n)
        self.left -= len(data)
        return data

    def close(self) -> None:
        pass


class _ZstdReader:
    """Streaming zstd: frames one after another, truncation detected, bounded output per call
    (zstandard's stream_reader neither reports a cut-off frame nor reads across frames)."""

    def __init__(self, raw):
        import zstandard

        self._zstd = zstandard
        self.raw = raw
        self.obj = zstandard.ZstdDecompressor().decompressobj()
        self.pending = b""  # compressed bytes not yet fed: pending[ppos:]
        self.ppos = 0
        self.out: list[bytes] = []  # decompressed pieces not yet returned
        self.out_len = 0
        self.in_frame = False  # a frame is started and not finished
        self.done = False
        self.truncated = False

    def read(self, n: int = -1) -> bytes:
        n = 1 << 20 if n < 0 else n
        while self.out_len < n and not self.done:
            if self.ppos >= len(self.pending):
                self.pending = self.raw.read(RAW_BLOCK)
                self.ppos = 0
                if not self.pending:
                    self.done = True
                    self.truncated = self.in_frame
                    break
            piece = self.pending[self.ppos : self.ppos + ZSTD_SLICE]
            self.ppos += len(piece)
            self.in_frame = True
            try:
                data = self.obj.decompress(piece)
            except self._zstd.ZstdError as e:
                raise _CodecError(str(e)) from None
            if data:
                self.out.append(data)
                self.out_len += len(data)
            if self.obj.eof:
                # Frame finished: what was fed after it starts the next frame.
                rest = self.obj.unused_data
                if rest:
                    self.pending = rest + self.pending[self.ppos :]
                    self.ppos = 0
                self.obj = self._zstd.ZstdDecompressor().decompressobj()
                self.in_frame = False
        data = b"".join(self.out)
        if len(data) <= n:
            self.out, self.out_len = [], 0
            return data
        self.out, self.out_len = [data[n:]], len(data) - n
        return data[:n]

    def close(self) -> None:
        pass


class _VkcsFrame:
    """The one codec frame of a VKCS envelope, then what follows it, as it is.

    The frame is fed to its decoder a block at a time (the frame header, then each block with
    its header and checksum, read from the LZ4 and zstd frame formats), so every decompressed
    byte is known to come out of the block that starts at input byte P: error lines name it
    (Source.input_offset).  A block's output is bounded by the format (LZ4: 4 MiB, zstd: 128
    KiB).  A frame whose structure does not parse is fed in small slices and the decoder's own
    error ends it.  Valkey writes one frame per envelope: bytes after it are not decompressed
    (an `$EOF:` mark, or bytes the RDB parser counts as trailing)."""

    def __init__(self, codec: str, raw, base: int):
        self.codec = codec
        self.raw = raw
        self.base = base  # input offset of the frame's first byte
        if codec == "lz4":
            import lz4.frame

            self.dec: Any = lz4.frame.LZ4FrameDecompressor()
            self.errors: tuple = (RuntimeError, ValueError)
        else:
            import zstandard

            self.dec = zstandard.ZstdDecompressor().decompressobj()
            self.errors = (zstandard.ZstdError,)
        self.pending = b""  # input bytes read and not yet fed: pending[ppos:]
        self.ppos = 0
        self.raw_ended = False
        self.fed = 0  # frame bytes given to the decoder
        self.stage: str | None = "header"  # what starts at `fed`: header | block | None (unknown)
        self.last = False  # the block being fed is the frame's last
        self.block_crc = self.content_crc = False
        self.unit_start = 0  # frame offset of the header or block being fed
        self.unit_end: int | None = None  # where it ends, None when not known
        self.out: list[bytes] = []  # decompressed pieces not yet returned
        self.produced = 0  # decompressed bytes so far
        self.ends = array("q")  # decompressed end of each block fed ...
        self.starts = array("q")  # ... and the frame offset where it starts
        self.forgotten = 0  # decompressed bytes before the first remembered block
        self.frame_done = False
        self.frame_out = 0  # decompressed size of the frame, once done
        self.truncated = False

    # -- the frame's structure ----------------------------------------------------------
    def _have(self, n: int) -> bytes | None:
        """The next n input bytes without consuming them, or None when the input ends first."""
        while len(self.pending) - self.ppos < n:
            more = b"" if self.raw_ended else self.raw.read(RAW_BLOCK)
            if not more:
                self.raw_ended = True
                return None
            self.pending = self.pending[self.ppos :] + more
            self.ppos = 0
        return self.pending[self.ppos : self.ppos + n]

    def _unit_size(self) -> int | None:
        """Size of the header or block starting at `fed`; None when it cannot be known."""
        if self.codec == "lz4":
            if self.stage == "header":  # magic, FLG, BD, [content size], [dictionary id], HC
                b = self._have(5)
                if b is None or b[:4] != b"\x04\x22\x4d\x18":
                    return None
                flg = b[4]
                self.block_crc, self.content_crc = bool(flg & 0x10), bool(flg & 0x04)
                self.stage = "block"
                return 7 + (8 if flg & 0x08 else 0) + (4 if flg & 0x01 else 0)
            b = self._have(4)  # block size (0: the end mark), data, [block checksum]
            if b is None:
                return None
            size = int.from_bytes(b, "little")
            if size == 0:
                self.last = True
                return 4 + (4 if self.content_crc else 0)
            return 4 + (size & 0x7FFFFFFF) + (4 if self.block_crc else 0)
        if self.stage == "header":  # magic, descriptor, [window], [dictionary id], [size]
            b = self._have(5)
            if b is None or b[:4] != b"\x28\xb5\x2f\xfd":
                return None
            fhd = b[4]
            single = bool(fhd & 0x20)
            self.content_crc = bool(fhd & 0x04)
            self.stage = "block"
            return (
                5
                + (0 if single else 1)
                + (0, 1, 2, 4)[fhd & 3]
                + ((1 if single else 0), 2, 4, 8)[fhd >> 6]
            )
        b = self._have(3)  # block header: last flag, type, size; an RLE block holds one byte
        if b is None:
            return None
        h = int.from_bytes(b, "little")
        self.last = bool(h & 1)
        size = 1 if (h >> 1) & 3 == 1 else h >> 3
        return 3 + size + (4 if self.last and self.content_crc else 0)

    # -- decoding -----------------------------------------------------------------------
    def _step(self) -> None:
        """Feed the decoder once: up to the end of the current header or block."""
        if self.unit_end is None:
            size = self._unit_size() if self.stage is not None else None
            self.unit_start = self.fed
            if size is None:
                self.stage = None  # feed slices; the decoder finds what is wrong
            else:
                self.unit_end = self.fed + size
        if self.ppos >= len(self.pending):
            self.pending = b"" if self.raw_ended else self.raw.read(RAW_BLOCK)
            self.ppos = 0
            if not self.pending:  # the input ends inside the frame
                self.raw_ended = self.truncated = True
                return
        step = ZSTD_SLICE if self.unit_end is None else min(self.unit_end - self.fed, RAW_BLOCK)
        piece = self.pending[self.ppos : self.ppos + step]
        self.ppos += len(piece)
        self.fed += len(piece)
        try:
            if self.codec == "lz4":
                # Without max_length python-lz4 may keep part of a block's output until the
                # next call (lost when the input ends there); with it, none is held back.
                data = self.dec.decompress(piece, max_length=LZ4_OUT)
                while not self.dec.needs_input and not self.dec.eof:
                    more = self.dec.decompress(b"", max_length=LZ4_OUT)
                    if not more:
                        break
                    data += more
            else:
                data = self.dec.decompress(piece)
        except self.errors as e:
            raise _CodecError(str(e)) from None
        if data:
            self.out.append(data)
            self.produced += len(data)
        if self.unit_end is not None and self.fed >= self.unit_end:
            self._remember()
            self.unit_end = None
            if self.last:
                self.stage = None
        if self.dec.eof:
            rest = self.dec.unused_data
            if rest:  # the structure was misread: the decoder knows where the frame ends
                self.pending = rest + self.pending[self.ppos :]
                self.ppos = 0
                self.fed -= len(rest)
            self.frame_done = True
            self.frame_out = self.produced

    def _remember(self) -> None:
        self.ends.append(self.produced)
        self.starts.append(self.unit_start)
        if len(self.ends) >= 1 << 16:  # drop the blocks far behind the read position
            k = bisect_right(self.ends, self.produced - VKCS_KEEP)
            if k:
                self.forgotten = self.ends[k - 1]
                del self.ends[:k]
                del self.starts[:k]

    def read(self, n: int = -1) -> bytes:
        """At most n bytes (some as soon as a block has been decoded)."""
        n = 1 << 20 if n < 0 else n
        while not self.out and not self.frame_done and not self.truncated:
            self._step()
        if self.out:
            data = b"".join(self.out) if len(self.out) > 1 else self.out[0]
            self.out = [data[n:]] if len(data) > n else []
            return data[:n]
        if self.truncated:
            return b""
        if self.ppos < len(self.pending):  # after the frame: the input as it is
            data = self.pending[self.ppos : self.ppos + n]
            self.ppos += len(data)
            return data
        return b"" if self.raw_ended else self.raw.read(n)

    def input_offset(self, logical: int) -> int | None:
        """Input offset of the block that decompressed byte `logical` comes from (after the
        frame: of that byte itself)."""
        if logical < self.forgotten:
            return None
        if self.frame_done and logical >= self.frame_out:
            return self.base + self.fed + (logical - self.frame_out)
        i = bisect_right(self.ends, logical)
        if i < len(self.ends):
            return self.base + self.starts[i]
        return self.base + (self.unit_start if self.unit_end is not None else self.fed)

    def close(self) -> None:
        pass


class _CodecError(Exception):
    pass


def _codec_errors() -> tuple:
    """Every exception a decompressor raises on damaged data (zlib.error and LZMAError are
    not OSErrors; lz4 raises RuntimeError)."""
    import lzma
    import zlib

    return (OSError, ValueError, RuntimeError, zlib.error, lzma.LZMAError, _CodecError)


class _Decompressed:
    """Decompressed stream with the ratio bound and errors turned into RDBErrors."""

    def __init__(self, kind: str, raw, max_ratio: int | None, ratio_floor: int, *, base: int = 0):
        self.kind = kind
        self.counter = _Counting(raw)
        self.max_ratio = max_ratio
        self.ratio_floor = ratio_floor
        self.produced = 0
        self.rdb_base = 0  # decompressed bytes before the RDB data (a replication header)
        self.truncated = False
        self.ended = False
        self.failure: DecompressionError | None = None  # raised at the next read
        if kind.startswith("vkcs-"):  # base: input offset of the frame (after the envelope)
            self.inner: Any = _VkcsFrame(kind[5:], self.counter, base)
        elif kind == "gzip":
            import gzip

            self.inner = gzip.GzipFile(fileobj=self.counter, mode="rb")  # type: ignore[call-overload]
        elif kind == "bzip2":
            import bz2

            self.inner = bz2.BZ2File(self.counter, mode="rb")  # type: ignore[call-overload]
        elif kind == "xz":
            import _compression
            import lzma

            # LZMAFile has no memory limit, and an xz header may ask for a 4 GiB dictionary.
            self.inner = _compression.DecompressReader(
                self.counter,  # type: ignore[arg-type]
                lzma.LZMADecompressor,
                trailing_error=lzma.LZMAError,
                memlimit=XZ_MEMLIMIT,
            )
        elif kind == "lz4":
            try:
                import lz4.frame
            except ImportError:  # pragma: no cover - declared dependency
                raise SourceError("lz4-compressed input needs the 'lz4' package") from None
            self.inner = lz4.frame.LZ4FrameFile(self.counter, mode="rb")
        elif kind == "zstd":
            try:
                self.inner = _ZstdReader(self.counter)
            except ImportError:  # pragma: no cover - declared dependency
                raise SourceError("zstd-compressed input needs the 'zstandard' package") from None
        else:  # pragma: no cover
            raise ValueError(kind)

    def read(self, n: int = -1) -> bytes:
        if self.failure is not None:
            raise self.failure
        if self.ended:
            return b""
        n = 1 << 20 if n < 0 else n
        parts = []
        have = 0
        read1 = getattr(self.inner, "read1", self.inner.read)
        try:
            # read1, not read: a buffered read() that hits EOFError loses what it had
            # decompressed before, and that is exactly the data a cut-off file still holds.
            while have < n:
                data = read1(n - have)
                if not data:
                    self.ended = True
                    break
                parts.append(data)
                have += len(data)
        except EOFError:
            # The compressed stream stops before its end marker (a cut-off download or a
            # full disk): hand over what was decompressed; the parser reports where it ends.
            self.truncated = True
            self.ended = True
        except _codec_errors() as e:
            msg = str(e) or type(e).__name__
            offset = max(self.produced + have - self.rdb_base, 0)
            if "Memory usage limit" in msg:
                failure = DecompressionError(
                    f"{self.kind} data needs more than {XZ_MEMLIMIT >> 20} MiB of decoder memory "
                    f"(its dictionary is too large); refused before allocating it (decompress "
                    f"it yourself and pipe it to `rdbscan load -`)",
                    offset,
                )
            else:
                # A VKCS error line names the input offset of the block (Source.input_offset).
                after = (
                    ""
                    if self.kind.startswith("vkcs-")
                    else f" after {self.counter.count} compressed bytes"
                )
                failure = DecompressionError(f"{self.kind} data is corrupt{after}: {msg}", offset)
            if not parts:
                raise failure from None
            # What decompressed before the damage is handed over first: the keys in it are read.
            self.failure = failure
        data = b"".join(parts) if len(parts) != 1 else parts[0]
        if getattr(self.inner, "truncated", False):  # _ZstdReader, _VkcsFrame
            self.truncated = True
        self.produced += len(data)
        if (
            self.max_ratio is not None
            and self.produced > self.ratio_floor
            and self.produced > self.max_ratio * max(self.counter.count, 1)
        ):
            raise DecompressionError(
                f"{self.kind} input expands more than {self.max_ratio}:1 "
                f"({self.counter.count} compressed bytes gave {self.produced}); refusing a "
                f"likely decompression bomb (--allow-ratio reads it anyway)",
                max(self.produced - self.rdb_base, 0),
            )
        return data

    def readable(self) -> bool:
        return True

    def close(self) -> None:
        try:
            self.inner.close()
        except Exception:
            pass


# -- detection --------------------------------------------------------------------------------
def _peek(raw, n: int) -> bytes:
    """Up to n bytes from the front of raw (short reads from pipes are retried)."""
    parts = []
    have = 0
    while have < n:
        data = raw.read(n - have)
        if not data:
            break
        parts.append(data)
        have += len(data)
    return b"".join(parts)


def detect_compression(head: bytes) -> str | None:
    if head.startswith(VKCS_MAGIC):
        return "vkcs"
    for magic, kind in _MAGICS:
        if head.startswith(magic):
            return kind
    if _BZ2.match(head):
        return "bzip2"
    return None


def _is_tar(head: bytes) -> bool:
    return len(head) >= 262 and head[257:262] == b"ustar"


def parse_aof_manifest(text: bytes, where: str) -> tuple[str, list[str]]:
    """(base file name, incremental file names) from a Redis 7 AOF manifest."""
    base = None
    incr = []
    for lineno, line in enumerate(text.decode("utf-8", "replace").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            parts = shlex.split(line)
        except ValueError:
            raise SourceError(f"{where}: line {lineno} of the AOF manifest is malformed") from None
        if len(parts) % 2:
            raise SourceError(f"{where}: line {lineno} of the AOF manifest is malformed")
        entry = dict(zip(parts[::2], parts[1::2]))
        name, kind = entry.get("file"), entry.get("type")
        if not name or kind not in ("b", "h", "i"):
            raise SourceError(f"{where}: line {lineno} of the AOF manifest is malformed")
        if os.sep in name or name in (".", ".."):
            raise SourceError(f"{where}: AOF manifest names a file outside its directory: {name!r}")
        if kind == "b":
            base = name
        elif kind == "i":
            incr.append(name)
    if base is None:
        raise SourceError(
            f"{where}: the AOF manifest has no base file (type b); the AOF has "
            f"only RESP commands and no RDB to read"
        )
    return base, incr


def _looks_like_manifest(path: str) -> bool:
    if path.endswith(".manifest"):
        return True
    try:
        if os.path.getsize(path) > MANIFEST_MAX:
            return False
        with open(path, "rb") as f:
            return f.read(5) == b"file "
    except OSError:
        return False


def _resolve_path(path: str) -> tuple[str, dict]:
    """A directory or an AOF manifest -> the RDB file to read, with notes on how."""
    notes: dict = {}
    if os.path.isdir(path):
        manifests = sorted(n for n in os.listdir(path) if n.endswith(".manifest"))
        if not manifests and os.path.isdir(os.path.join(path, "appendonlydir")):
            return _resolve_path(os.path.join(path, "appendonlydir"))
        if not manifests:
            raise SourceError(
                f"{path}: is a directory without an AOF manifest "
                f"(appendonlydir/*.manifest); name the RDB file inside it"
            )
        if len(manifests) > 1:
            raise SourceError(
                f"{path}: holds several AOF manifests ({', '.join(manifests)}); "
                f"name the one to read"
            )
        path = os.path.join(path, manifests[0])
    if os.path.isfile(path) and _looks_like_manifest(path):
        try:
            with open(path, "rb") as f:
                text = f.read(MANIFEST_MAX + 1)
        except OSError as e:
            raise SourceError(f"{path}: {e.strerror}") from None
        if len(text) > MANIFEST_MAX:
            raise SourceError(f"{path}: too large for an AOF manifest")
        base, incr = parse_aof_manifest(text, path)
        folder = os.path.dirname(path)
        notes.update(aof_manifest=path, aof_base=base, aof_incr=incr)
        path = os.path.join(folder, base)
        if not os.path.exists(path):
            raise SourceError(f"{notes['aof_manifest']}: its base file {base} is missing")
        notes["framing"] = "aof-dir"
    return path, notes


def open_source(
    path: str, *, max_ratio: int | None = MAX_RATIO, ratio_floor: int = RATIO_FLOOR
) -> Source:
    """Open `path` (or `-` for stdin) and peel off compression and framing.  max_ratio=None:
    no bound on the decompression ratio (`--allow-ratio`)."""
    if path == "-":
        if sys.stdin is None:  # started with standard input closed (`<&-`)
            raise SourceError("<stdin>: standard input is closed")
        raw = sys.stdin.buffer
        name = "<stdin>"
        size = None
        notes: dict = {}
        closers: list = []
    elif remote.is_url(path):  # s3://, gs://, https:// (docs/fleet.md)
        raw, size = _open_url(path)
        name, notes, closers = path, {}, [raw]
    else:
        real, notes = _resolve_path(path)
        name = path if real == path else real
        if os.path.isdir(real):
            raise SourceError(f"{real}: is a directory, not an RDB file")
        try:
            raw = open(real, "rb")
        except OSError as e:
            raise SourceError(f"{real}: {e.strerror}") from None
        try:
            st = os.fstat(raw.fileno())
            import stat

            size = st.st_size if stat.S_ISREG(st.st_mode) else None  # FIFOs, /dev/stdin
        except OSError:
            size = None
        closers = [raw]
    if size is None:
        raw = _Available(raw)
    src = Source(name=name, stream=raw, size=size, notes=notes, framing=notes.pop("framing", None))
    src._pipe = raw if size is None else None
    src._closers = closers
    try:
        _unwrap(src, max_ratio, ratio_floor)
    except BaseException:
        src.close()
        raise
    return src


def _open_url(url: str) -> tuple[Any, int | None]:
    """An object in a bucket or on a web server, read in blocks (fsspec): its file object and
    size."""
    try:
        fs = remote.filesystem(url)
        raw = fs.open(url, "rb", block_size=URL_BLOCK)
    except remote.UnsupportedURL as e:
        raise SourceError(str(e)) from None
    except FileNotFoundError as e:
        # fsspec's http file system turns every failed request into FileNotFoundError: a
        # refused one (401, 403) is not a missing object
        status = getattr(e.__cause__, "status", None)
        if isinstance(status, int) and status != 404:
            reason = getattr(e.__cause__, "message", "")
            raise SourceError(
                f"{url}: the server answered HTTP {status} {reason}".rstrip()
            ) from None
        raise SourceError(f"{url}: No such file or directory") from None
    except (OSError, ValueError) as e:  # no permission, no such bucket, a malformed URL
        raise SourceError(f"{url}: {e}") from None
    size = getattr(raw, "size", None)
    return raw, size if isinstance(size, int) else None


def _unwrap(src: Source, max_ratio: int | None, ratio_floor: int) -> None:
    """Peel what wraps the RDB bytes, outermost first: compression, a tar archive, a
    replication header, a VKCS envelope; set src.framing, src.stream (the RDB bytes) and
    src.initial (its first bytes, peeked), or refuse input that is no RDB (NotRDBError)."""
    raw = src.stream
    head = _peek(raw, PEEK)
    kind = detect_compression(head)
    dec = None  # the decompressor in front of the framings, if any
    if kind:
        dec, head = _decompress(src, kind, raw, head, 0, max_ratio, ratio_floor)
        raw = dec
    if _is_tar(head):
        raw, head = _open_tar(src, _Prefixed(head, raw))
    raw, head, skipped = _replication_header(src, raw, head)
    if skipped:
        src.notes["header_bytes"] = skipped
    if dec is not None:
        dec.rdb_base = skipped  # the parser's offsets start after the replication header
    if head.startswith(VKCS_MAGIC):  # a VKCS file in a replication payload or a tar member
        if dec is not None:
            raise NotRDBError(
                f"{dec.kind} data holds another compressed stream (vkcs); decompress it first",
                skipped,
            )
        front = src.notes.get("tar_offset", 0) + skipped
        raw, head = _decompress(src, "vkcs", raw, head, front, max_ratio, ratio_floor)
    if head.startswith(b"*") and head[1:2].isdigit():
        raise NotRDBError(
            "an append-only file of RESP commands without an RDB preamble "
            "(aof-use-rdb-preamble no); rdbscan reads only RDB data",
            skipped,
        )
    if head.startswith(b"PK\x03\x04"):
        raise NotRDBError(
            "a zip archive: extract the RDB first (e.g. `unzip -p backup.zip | "
            "rdbscan load - ...`)",
            0,
        )
    if src.framing is None:
        # what a diskless replica receives (VKCS stream kind 1), without a `$` header in it
        replication = src.notes.get("vkcs_kind") == VKCS_KINDS[1]
        src.framing = "replication-stream" if replication else "rdb"
    src.stream = raw
    src.initial = head


def _replication_header(src: Source, raw, head: bytes) -> tuple[Any, bytes, int]:
    """A replication payload's front (docs/inputs.md): the +FULLRESYNC reply, keepalive
    newlines and the `$EOF:<mark>` or `$<length>` header, skipped; the stream after them, its
    first bytes and how many bytes were skipped.  src.size loses them; a `$<length>` payload is
    read to its length only."""
    skipped = 0
    m = _FULLRESYNC.match(head)
    if m:
        src.notes["psync_reply"] = m.group(0).strip().decode("ascii", "replace")
        head = head[m.end() :]
        skipped += m.end()
    while head.startswith(b"\n"):
        stripped = head.lstrip(b"\n")
        skipped += len(head) - len(stripped)
        head = stripped + _peek(raw, PEEK - len(stripped))
        if skipped > MAX_KEEPALIVES:
            raise NotRDBError("more than 1 MiB of newlines before a replication header", 0)
    m = _EOF_HEADER.match(head)
    if m and head.startswith(b"$EOF:"):
        src.framing = "replication-eof"
        src.notes["eof_mark"] = m.group(1)
        skipped += m.end()
        head = head[m.end() :]
        if src.size is not None:
            # <header><rdb><40-byte mark>: the mark is counted as tail and checked by the loader.
            src.size -= skipped
    elif head.startswith(b"$") and not head.startswith(b"$EOF:"):
        m = _LEN_HEADER.match(head)
        if not m:
            raise NotRDBError(
                "malformed replication header: expected '$<length>\\r\\n' or "
                "'$EOF:<40 bytes>\\r\\n'",
                skipped,
            )
        declared = int(m.group(1))
        src.framing = "replication-length"
        src.notes["declared_length"] = declared
        skipped += m.end()
        head = head[m.end() :]
        if src.size is not None:
            src.notes["bytes_after_payload"] = max(src.size - skipped - declared, 0)
            src.size = min(declared, src.size - skipped)
        else:
            src.size = declared  # a shorter stream is reported as truncated by the parser
        raw = _Limited(_Prefixed(head, raw), declared)
        head = _peek(raw, min(PEEK, declared))
    elif src.size is not None and skipped:
        src.size -= skipped
    return raw, head, skipped


def _decompress(
    src: Source, kind: str, raw, head: bytes, front: int, max_ratio: int | None, ratio_floor: int
) -> tuple[_Decompressed, bytes]:
    """`raw` (`head` peeked from it, at input offset `front`) decompressed: the decompressor
    and the first bytes it gives."""
    base = front
    if kind == "vkcs":
        head = _vkcs_envelope(src, raw, head, front)
        kind = src.notes["vkcs_codec"]
        head = head[VKCS_ENVELOPE:]
        base += VKCS_ENVELOPE
    dec = _Decompressed(kind, _Prefixed(head, raw), max_ratio, ratio_floor, base=base)
    src._closers.append(dec)
    src.compression = kind
    src.notes["compressed_bytes"] = src.size
    src.size = None
    head = _peek(dec, PEEK)
    inner = detect_compression(head)
    if inner:
        raise NotRDBError(
            f"{kind} data holds another compressed stream ({inner}); decompress it first", 0
        )
    return dec, head


def _vkcs_envelope(src: Source, raw, head: bytes, front: int) -> bytes:
    """Check the 8-byte VKCS envelope at the start of `head` (input offset `front`) and note
    what it says; returns `head`, topped up to hold the envelope.  An envelope from a newer
    Valkey (another version, codec, flag or stream kind) is a limit of rdbscan, not damage."""
    if len(head) < VKCS_ENVELOPE:
        head += _peek(raw, VKCS_ENVELOPE - len(head))
        if len(head) < VKCS_ENVELOPE:
            raise TruncatedError(
                f"the input ends inside the VKCS envelope, after {len(head)} of its "
                f"{VKCS_ENVELOPE} bytes",
                front + len(head),
            )
    version, codec, flags, kind = head[4], head[5], head[6], head[7]
    if version != VKCS_VERSION:
        raise UnsupportedError(
            f"VKCS envelope version {version}: rdbscan reads version {VKCS_VERSION}", front + 4
        )
    if codec not in VKCS_CODECS:
        raise UnsupportedError(
            f"VKCS envelope codec {codec}: rdbscan reads codecs 1 (LZ4) and 2 (zstd)", front + 5
        )
    if flags & ~VKCS_FLAG_CHECKSUM:
        raise UnsupportedError(
            f"VKCS envelope flags 0x{flags:02x}: reserved bits are set (rdbscan reads bit 0, "
            f"the codec checksum, only)",
            front + 6,
        )
    if kind not in VKCS_KINDS:
        raise UnsupportedError(
            f"VKCS stream kind {kind}: rdbscan reads kinds 0 (RDB) and 1 (replication stream)",
            front + 7,
        )
    src.notes.update(
        vkcs_codec=f"vkcs-{VKCS_CODECS[codec]}",
        vkcs_checksum=bool(flags & VKCS_FLAG_CHECKSUM),
        vkcs_kind=VKCS_KINDS[kind],
        vkcs_offset=front,
    )
    return head


def _open_tar(src: Source, raw):
    import tarfile

    try:
        tar = tarfile.open(fileobj=raw, mode="r|")
        chosen = None
        for member in tar:  # stream mode cannot go back: the first regular file
            if member.isfile():
                chosen = member
                break
        if chosen is None:
            raise NotRDBError("a tar archive without a regular file", 0)
        f = tar.extractfile(chosen)
        # Read the member's bytes from the archive stream itself: the member file object
        # drops the last chunk it read when the archive is cut short (a truncated tar kept 20
        # keys where the same bytes as a plain file kept 368), and reads nothing at all when
        # the header overstates the member's size.
        stream = getattr(tar, "fileobj", None)
        if getattr(stream, "pos", None) == chosen.offset_data and hasattr(stream, "read"):
            f = _Limited(stream, chosen.size)  # type: ignore[assignment]
    except tarfile.TarError as e:
        raise CorruptError(f"tar archive is unreadable: {e}", 0) from None
    src.framing = "tar"
    src.notes["tar_member"] = chosen.name
    src.notes["tar_offset"] = chosen.offset_data
    src.name = f"{src.name}:{chosen.name}"
    src.size = chosen.size
    src._closers.append(tar)
    stream = _TarMember(f)
    return stream, _peek(stream, PEEK)


class _TarMember:
    """A tar member's data; a cut-off archive reads as a short member (the parser reports it)."""

    def __init__(self, f):
        self.f = f

    def read(self, n: int = -1) -> bytes:
        import tarfile

        try:
            return self.f.read(n)
        except (tarfile.TarError, EOFError, OSError):
            return b""

    def close(self) -> None:
        pass


def describe_truncation(src: Source) -> str | None:
    """A note for an error message when the compressed layer itself was cut short."""
    for obj in src._closers:
        if isinstance(obj, _Decompressed) and obj.truncated:
            return f"the {obj.kind} stream itself ends early"
    return None


__all__ = [
    "Source",
    "SourceError",
    "DecompressionError",
    "open_source",
    "detect_compression",
    "parse_aof_manifest",
    "describe_truncation",
    "MAX_RATIO",
    "RATIO_FLOOR",
    "TruncatedError",
]
