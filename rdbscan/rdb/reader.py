"""A forward-only byte reader over any binary stream: one bytes buffer refilled in chunks,
absolute offsets, the running CRC64 of everything consumed, and RDB primitives
(lengths and strings, docs/rdb-format.md section 3).

Memory is bounded by CHUNK plus the largest single item the parser must hold (a key,
an LZF payload or a listpack blob), and that is capped by `max_item` and by what is
left of the input when its size is known.  Values that are only measured are skipped
in chunks and never held.
"""

from __future__ import annotations

from struct import Struct

import anycrc
import lzf

from . import blob_source, lzf_stream
from .errors import CorruptError, TruncatedError
from .long_names import KEY_KEEP

CHUNK = 1 << 20
# Largest single read asked of the stream (a pipe's BufferedReader allocates what is asked).
MAX_READ = 16 * CHUNK
# Largest item we agree to hold in memory at once (listpacks are capped at 1 GiB by Redis,
# keys at 512 MB).  Anything larger is reported as corrupt before any allocation.
MAX_ITEM = 1 << 30

_CRC64 = anycrc.Model("CRC64-REDIS")
_crc_calc = _CRC64.calc

U16 = Struct("<H")
U32 = Struct("<I")
U32BE = Struct(">I")
U64BE = Struct(">Q")
I8 = Struct("<b")
I16 = Struct("<h")
I32 = Struct("<i")
I64 = Struct("<q")
U64 = Struct("<Q")
F64 = Struct("<d")


def lzf_sizes_ok(clen: int, ulen: int) -> bool:
    """LZF can neither grow data by more than a few percent nor expand it more than ~88x
    (a 3-byte back-reference copies at most 264 bytes), so other size pairs are corrupt."""
    return clen <= ulen + ulen // 16 + 64 and ulen <= clen * 100 + 64 and (clen > 0 or ulen == 0)


# LZF strings are decompressed (and dropped) to check that they give the length their header
# says, as Redis does on load (rdbLoadLzfStringObject); longer ones are measured unchecked, so
# that a value that is only measured is never held whole.
LZF_CHECK_MAX = 16 << 20


def lzf_whole(data: bytes, ulen: int) -> bytes | None:
    """LZF `data` decompressed whole by python-lzf: its ulen bytes, or None when it does not
    decompress to exactly ulen bytes (as Redis refuses it).  The compiled core's twin is
    _speedups.lzf_decode (backend.lzf_whole; tests/test_lzf_stream.py)."""
    try:
        out = lzf.decompress(data, ulen)
    except (ValueError, SystemError):
        return None
    return out if out is not None and len(out) == ulen else None


def lzf_length_ok(data: bytes, ulen: int) -> bool:
    """Whether LZF `data` decompresses to exactly ulen bytes (true unchecked past LZF_CHECK_MAX)."""
    if ulen == 0 or ulen > LZF_CHECK_MAX:
        return True
    return lzf_whole(data, ulen) is not None


def int_text_len(v: int) -> int:
    """Length of the decimal text of v (what Redis stores when it turns an int into a string)."""
    if 0 <= v < 10:
        return 1
    return len(str(v))


class LZFError(CorruptError):
    """An LZF payload that does not decompress; the reader is already past it."""


class Reader:
    """Buffered reader.  `buf[pos:]` is unread data; `base` is the file offset of `buf[0]`."""

    __slots__ = (
        "ints_skipped",
        "refused",
        "stream",
        "buf",
        "pos",
        "base",
        "crc",
        "crc_mark",
        "crc_on",
        "size",
        "eof",
        "max_item",
        "name",
        "lzf_decoder",
        "lzf_whole",
    )

    def __init__(
        self,
        stream,
        *,
        size: int | None = None,
        crc: bool = True,
        max_item: int = MAX_ITEM,
        initial: bytes = b"",
        lzf_decoder=lzf_stream.LZFStream,
        lzf_whole=lzf_whole,
    ):
        self.stream = stream
        # LZF payloads decoded in pieces (backend.LZFStream: the parser passes the compiled one)
        self.lzf_decoder = lzf_decoder
        # and whole (backend.lzf_whole: the compiled one, twice as fast as python-lzf's)
        self.lzf_whole = lzf_whole
        self.buf = initial
        self.pos = 0
        self.base = 0
        self.crc = 0
        self.crc_mark = 0
        self.crc_on = crc
        self.size = size
        self.eof = False
        self.max_item = max_item
        # Integer-encoded strings skip_string has passed (a set whose members all are is
        # intset-eligible).
        self.ints_skipped = 0
        # The first reason Redis would refuse the value being read, though it reads (kind,
        # message, offset); the parser flags the key and clears it (keys.invalid).
        self.refused: tuple[str, str, int] | None = None

    # -- buffer management -------------------------------------------------------------
    def tell(self) -> int:
        return self.base + self.pos

    def remaining_known(self) -> int | None:
        """Bytes left in the input if its size is known."""
        if self.size is None:
            return None
        return self.size - self.tell()

    def fill(self, n: int) -> bool:
        """Make at least n unread bytes available if the input has them; False if it ends first."""
        buf, pos = self.buf, self.pos
        if self.crc_on and pos > self.crc_mark:
            self.crc = _crc_calc(memoryview(buf)[self.crc_mark : pos], self.crc)
        rest = buf[pos:]
        have = len(rest)
        parts = [rest]
        while have < n and not self.eof:
            data = self.stream.read(min(max(CHUNK, n - have), MAX_READ))
            if not data:
                self.eof = True
                break
            parts.append(data)
            have += len(data)
        self.base += pos
        self.buf = b"".join(parts) if len(parts) > 1 else rest
        self.pos = 0
        self.crc_mark = 0
        return have >= n

    def checksum_here(self) -> int:
        """CRC64 of every byte consumed so far."""
        if self.crc_on and self.pos > self.crc_mark:
            self.crc = _crc_calc(memoryview(self.buf)[self.crc_mark : self.pos], self.crc)
            self.crc_mark = self.pos
        return self.crc

    def check_len(self, n: int, what: str, start: int) -> None:
        """Refuse a length that cannot be real before anything is allocated for it."""
        left = self.remaining_known()
        if left is not None and n > left:
            if n > (1 << 40):
                raise CorruptError(f"{what} claims an impossible {n} bytes", start)
            raise TruncatedError(
                f"unexpected end of input: {what} needs {n} bytes but the "
                f"input ends {max(left, 0)} bytes later",
                start,
            )

    def need(self, n: int, what: str, start: int | None = None) -> None:
        """Make n bytes available or raise a truncation error naming what was being read."""
        if len(self.buf) - self.pos >= n:
            return
        if n > self.max_item:
            raise CorruptError(
                f"{what} of {n} bytes exceeds the {self.max_item}-byte limit",
                self.tell() if start is None else start,
            )
        self.check_len(n, what, self.tell() if start is None else start)
        if not self.fill(n):
            raise TruncatedError(
                f"unexpected end of input at byte {self.tell() + len(self.buf) - self.pos}: "
                f"{what} needs {n} bytes",
                self.tell() if start is None else start,
            )

    def drain(self) -> int:
        """Read to the end of the input without keeping it; return how many bytes were left."""
        n = len(self.buf) - self.pos
        self.pos = len(self.buf)
        self.fill(0)
        self.buf = b""
        while not self.eof:
            data = self.stream.read(CHUNK)
            if not data:
                self.eof = True
                break
            n += len(data)
            self.base += len(data)
        return n

    def at_end(self) -> bool:
        if self.pos < len(self.buf):
            return False
        return not self.fill(1)

    # -- raw reads ---------------------------------------------------------------------
    def read(self, n: int, what: str = "data") -> bytes:
        if len(self.buf) - self.pos < n:
            self.need(n, what)
        p = self.pos
        self.pos = p + n
        return self.buf[p : p + n]

    def u8(self, what: str = "byte") -> int:
        if self.pos >= len(self.buf):
            self.need(1, what)
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def unpack(self, st: Struct, what: str):
        if len(self.buf) - self.pos < st.size:
            self.need(st.size, what)
        v = st.unpack_from(self.buf, self.pos)[0]
        self.pos += st.size
        return v

    def skip(self, n: int, what: str = "data", update=None) -> None:
        """Skip n bytes without holding them (CRC still sees them); with `update`, pass them to
        update(piece) as they go by, in pieces of at most a few chunks (a long key name)."""
        avail = len(self.buf) - self.pos
        if n <= avail:
            if update is not None:
                update(self.buf[self.pos : self.pos + n])
            self.pos += n
            return
        start = self.tell()
        self.check_len(n, what, start)
        if update is not None:
            update(self.buf[self.pos :])
        left = n - avail
        self.pos = len(self.buf)
        self.fill(0)  # CRC the buffer, drop it
        self.buf = b""
        crc_on, crc, stream = self.crc_on, self.crc, self.stream
        while left:
            data = stream.read(min(left, CHUNK * 4))
            if not data:
                self.eof = True
                self.crc = crc
                raise TruncatedError(
                    f"unexpected end of input at byte {start + n - left}: {what} needs {n} bytes",
                    start,
                )
            if crc_on:
                crc = _crc_calc(data, crc)
            if update is not None:
                update(data)
            self.base += len(data)
            left -= len(data)
        self.crc = crc

    # -- RDB primitives (docs/rdb-format.md section 3) ----------------------------------------------------
    def length(self, what: str = "length") -> int:
        """A LEN that must not be a special string encoding."""
        n, enc = self.length_enc(what)
        if enc:
            raise CorruptError(
                f"{what}: expected a length, found string encoding byte 0x{0xC0 | n:02x}",
                self.tell() - 1,
            )
        return n

    def length_enc(self, what: str = "length"):
        """(value, is_encoded) of a LEN; is_encoded means `value` is a string encoding id."""
        buf, pos = self.buf, self.pos
        if len(buf) - pos < 9:
            self.fill(9)
            buf, pos = self.buf, self.pos
            if pos >= len(buf):
                raise TruncatedError(f"unexpected end of input: {what}", self.tell())
        b0 = buf[pos]
        t = b0 >> 6
        if t == 0:
            self.pos = pos + 1
            return b0, False
        if t == 1:
            if pos + 2 > len(buf):
                raise TruncatedError(f"unexpected end of input: {what}", self.tell())
            self.pos = pos + 2
            return ((b0 & 0x3F) << 8) | buf[pos + 1], False
        if t == 3:
            self.pos = pos + 1
            return b0 & 0x3F, True
        if b0 == 0x80:
            if pos + 5 > len(buf):
                raise TruncatedError(f"unexpected end of input: {what}", self.tell())
            self.pos = pos + 5
            return U32BE.unpack_from(buf, pos + 1)[0], False
        if b0 == 0x81:
            if pos + 9 > len(buf):
                raise TruncatedError(f"unexpected end of input: {what}", self.tell())
            self.pos = pos + 9
            return U64BE.unpack_from(buf, pos + 1)[0], False
        raise CorruptError(f"{what}: unknown length encoding 0x{b0:02x}", self.tell())

    def pieces(self, n: int, what: str, start: int):
        """The next n bytes in pieces of at most blob_source.PIECE bytes, never held together
        (TruncatedError at `start` if the input ends first, as need() says it)."""
        left = n
        while left:
            avail = len(self.buf) - self.pos
            if not avail:
                if not self.fill(1):
                    raise TruncatedError(
                        f"unexpected end of input at byte {self.tell()}: {what} needs {n} bytes",
                        start,
                    )
                avail = len(self.buf) - self.pos
            k = min(avail, left, blob_source.PIECE)
            p = self.pos
            self.pos = p + k
            left -= k
            yield self.buf[p : p + k]

    def lzf_pieces(self, clen: int, ulen: int, what: str, start: int):
        """The output of the next clen bytes of LZF data, decoded piece by piece
        (lzf_stream.LZFStream): the reader always ends past them; LZFError (at `start`, the
        STR's offset) when they do not decompress to ulen bytes, as string() says it."""
        at = self.tell()
        if clen > self.max_item:  # what read(clen) checks first
            raise CorruptError(f"{what} of {clen} bytes exceeds the {self.max_item}-byte limit", at)
        self.check_len(clen, what, at)
        return self._lzf_pieces(self.lzf_decoder(ulen), clen, ulen, what, start, at)

    def _lzf_pieces(self, dec, clen: int, ulen: int, what: str, start: int, at: int):
        ok = True
        step = blob_source.LZF_PIECE
        for piece in self.pieces(clen, what, at):
            i = 0
            while ok and i < len(piece):
                try:
                    out = dec.decode(piece[i : i + step])
                except ValueError:
                    ok = False  # the rest is still read: a truncation comes first
                    break
                i += step
                if out:
                    yield out
        if ok:
            try:
                dec.finish()
            except ValueError:
                ok = False
        if not ok:
            raise LZFError(f"{what}: LZF data does not decompress to {ulen} bytes", start)

    def string(self, what: str = "string", long=None, whole_max: int | None = None):
        """A STR with its content (integers as decimal text, LZF decompressed).  With `long`
        (a long_names.LongName), a STR longer than its KEY_KEEP (unencoded or LZF) is fed to
        it as it streams past, never held whole, and b"" returned.  With `whole_max`, a STR
        longer than that (uncompressed) is returned as a blob_source.BlobSource that reads it
        in pieces as it is walked, rather than as bytes."""
        start = self.tell()
        n, enc = self.length_enc(what)
        if not enc:
            if long is not None and n > KEY_KEEP:
                if n > self.max_item:  # no server writes one: a damaged length
                    raise CorruptError(
                        f"{what} of {n} bytes exceeds the {self.max_item}-byte limit", start
                    )
                self.skip(n, what, long.update)
                return b""
            if whole_max is not None and n > whole_max:
                if n > self.max_item:  # what need() checks
                    raise CorruptError(
                        f"{what} of {n} bytes exceeds the {self.max_item}-byte limit", start
                    )
                self.check_len(n, what, start)
                return blob_source.BlobSource(n, self.pieces(n, what, start))
            if len(self.buf) - self.pos < n:
                self.need(n, what, start)
            p = self.pos
            self.pos = p + n
            return self.buf[p : p + n]
        if n == 0:
            return str(self.unpack(I8, what)).encode()
        if n == 1:
            return str(self.unpack(I16, what)).encode()
        if n == 2:
            return str(self.unpack(I32, what)).encode()
        if n == 3:
            clen = self.length(what + " (compressed length)")
            ulen = self.length(what + " (uncompressed length)")
            if ulen > self.max_item:
                raise CorruptError(
                    f"{what}: LZF string of {ulen} bytes exceeds the {self.max_item}-byte limit",
                    start,
                )
            if not lzf_sizes_ok(clen, ulen):
                raise CorruptError(
                    f"{what}: LZF sizes are impossible (compressed {clen}, uncompressed {ulen})",
                    start,
                )
            if long is not None and ulen > KEY_KEEP:
                try:
                    for piece in self.lzf_pieces(clen, ulen, what, start):
                        long.update(piece)
                except LZFError:
                    long.clear()  # as when decompressed whole: no name
                    raise
                return b""
            if whole_max is not None and ulen > whole_max:
                return blob_source.BlobSource(ulen, self.lzf_pieces(clen, ulen, what, start))
            data = self.read(clen, what)
            if ulen == 0:
                return b""
            out = self.lzf_whole(data, ulen)
            if out is None:
                raise LZFError(f"{what}: LZF data does not decompress to {ulen} bytes", start)
            return out
        raise CorruptError(f"{what}: unknown string encoding {n}", start)

    def string_head(self, what: str, keep: int) -> tuple[bytes, int]:
        """The first `keep` bytes of a STR (LZF decompressed, integers as text) and its whole
        length; the rest is read past in pieces, never held (aux fields, function sources,
        consumer names: strings a dump may make as long as the 1 GiB item limit)."""
        s = self.string(what, whole_max=keep)
        if isinstance(s, bytes):
            return s, len(s)
        head = s.window(0, keep)[0][:keep]
        s.finish()
        return head, s.n

    def skip_string(self, what: str = "string") -> int:
        """Skip a STR; return the length of its text (digits for integers, ulen for LZF)."""
        buf, pos = self.buf, self.pos
        if len(buf) - pos >= 9:
            b0 = buf[pos]
            if b0 < 0x40:
                end = pos + 1 + b0
                if end <= len(buf):
                    self.pos = end
                    return b0
            elif b0 < 0x80:
                n = ((b0 & 0x3F) << 8) | buf[pos + 1]
                end = pos + 2 + n
                if end <= len(buf):
                    self.pos = end
                    return n
        start = self.tell()
        n, enc = self.length_enc(what)
        if not enc:
            if len(self.buf) - self.pos < n:
                self.skip(n, what)
            else:
                self.pos += n
            return n
        if n == 0:
            self.ints_skipped += 1
            return int_text_len(self.unpack(I8, what))
        if n == 1:
            self.ints_skipped += 1
            return int_text_len(self.unpack(I16, what))
        if n == 2:
            self.ints_skipped += 1
            return int_text_len(self.unpack(I32, what))
        if n == 3:
            clen = self.length(what + " (compressed length)")
            ulen = self.length(what + " (uncompressed length)")
            if not lzf_sizes_ok(clen, ulen):
                raise CorruptError(
                    f"{what}: LZF sizes are impossible (compressed {clen}, uncompressed {ulen})",
                    start,
                )
            if 0 < ulen <= LZF_CHECK_MAX:
                if not lzf_length_ok(self.read(clen, what), ulen) and self.refused is None:
                    self.refused = (
                        "lzf length",
                        f"{what}: LZF data does not decompress to {ulen} bytes",
                        start,
                    )
            else:
                self.skip(clen, what)
            return ulen
        raise CorruptError(f"{what}: unknown string encoding {n}", start)
