"""What every value reader shares: the reader, errors with the key's context, blob strings that may
be skipped when damaged, and string values (docs/rdb-format.md sections 3 and 7.2)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from . import blob_stream
from . import constants as C
from .blob_source import BlobSource
from .errors import CorruptError, RDBError, TruncatedError, UnsupportedError
from .reader import (
    I8,
    I16,
    I32,
    LZF_CHECK_MAX,
    LZFError,
    Reader,
    int_text_len,
    lzf_length_ok,
    lzf_sizes_ok,
)

if TYPE_CHECKING:
    from .parser import DumpInfo
    from .records import KeyRecord


_CANONICAL_LONG = re.compile(rb"-?[1-9][0-9]{0,18}|0")


LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


COUNT_MAX = 1 << 40  # more keys than any server can hold: a damaged size field


class ValueReader:
    """What every value reader shares."""

    r: Reader
    info: DumpInfo
    key: bytes | None
    rdb_type: int | None
    skip_bad: bool
    bad: RDBError | None

    def corrupt(self, message: str, offset: int | None = None) -> CorruptError:
        return CorruptError(
            message,
            self.r.tell() if offset is None else offset,
            key=self.key,
            rdb_type=self.rdb_type,
        )

    def check_count(self, n: int, what: str, min_bytes: int = 1) -> None:
        """An element count cannot exceed what is left of the input."""
        if n > COUNT_MAX:
            raise self.corrupt(f"{what} claims {n} elements")
        left = self.r.remaining_known()
        if left is not None and n * min_bytes > left:
            # Most often a file cut short (a full disk, an interrupted copy): say so.
            raise TruncatedError(
                f"unexpected end of input: {what} of {n} elements needs at "
                f"least {n * min_bytes} bytes but only {left} remain",
                self.r.tell(),
                key=self.key,
                rdb_type=self.rdb_type,
            )

    def blob(self, what: str) -> bytes:
        """A blob string whose entries are decoded (stream nodes, hash field-TTL listpacks).
        With skip_bad an LZF payload that does not decompress (its length is known, so the
        reader is already past it) marks the value bad and reads as b''.  One longer than
        blob_stream.DECODE_MAX is read past without being held and refused: UnsupportedError
        (with skip_bad the value is left out, as a damaged one)."""
        start = self.r.tell()
        try:
            b = self.r.string(what, whole_max=blob_stream.DECODE_MAX)
            if isinstance(b, bytes):
                return b
            b.finish()
        except LZFError as e:
            e.key, e.rdb_type = self.key, self.rdb_type
            self.recover(e)
            return b""
        self.recover(
            UnsupportedError(
                f"{what} of {len(b)} bytes is longer than rdbscan decodes entry by entry "
                f"({blob_stream.DECODE_MAX} bytes)",
                start,
                key=self.key,
                rdb_type=self.rdb_type,
            )
        )
        return b""

    def blob_source(self, what: str, whole_max: int | None = None) -> bytes | BlobSource:
        """A blob string that is only walked (listpacks, ziplists, intsets, zipmaps): bytes, or
        above blob_stream.WHOLE_MAX a BlobSource that reads it in pieces as it is walked (an
        LZF payload that does not decompress is then found during the walk: walk_blob).  An LZF
        error found before is recovered as blob() does (b'')."""
        try:
            return self.r.string(what, whole_max=whole_max or blob_stream.WHOLE_MAX)
        except LZFError as e:
            e.key, e.rdb_type = self.key, self.rdb_type
            self.recover(e)
            return b""

    def recover(self, err: RDBError) -> None:
        """A bad value whose extent is known: raise it, or with skip_bad remember it (the
        first one) and let the caller continue to the end of the value."""
        if not self.skip_bad:
            raise err
        if self.bad is None:
            self.bad = err

    def refuse(self, kind: str, message: str, offset: int | None = None) -> None:
        """The value reads, but a Redis server would refuse to load it (constants.INVALID_KINDS):
        remember the first reason; the parser flags the key (keys.invalid) and goes on."""
        if self.r.refused is None:
            self.r.refused = (kind, message, self.r.tell() if offset is None else offset)

    def embstr_limit(self) -> int:
        """The longest string this dump's server stores as embstr (-1: none; any longer is raw) (docs/rdb-format.md section 7.2)."""
        major, minor = self.info.version_tuple()
        if (major, minor) < (3, 0):
            limit = -1  # 2.x: OBJECT ENCODING says raw for all text
        elif (major, minor) < (3, 2):
            limit = C.EMBSTR_SIZE_LIMIT_3_0
        else:
            limit = C.EMBSTR_SIZE_LIMIT
        return limit

    def string_value(self, rec: KeyRecord, limit: int) -> None:
        r = self.r
        buf, pos = r.buf, r.pos
        if len(buf) - pos >= 2 and buf[pos] < 0x40 and pos + 1 + buf[pos] <= len(buf):
            # Fast path: a short raw string entirely in the buffer.
            n = buf[pos]
            r.pos = pos + 1 + n
            rec.length = rec.max_elem = n
            if (
                n <= 20
                and _CANONICAL_LONG.fullmatch(buf, pos + 1, pos + 1 + n)
                and (n < 19 or LONG_MIN <= int(buf[pos + 1 : pos + 1 + n]) <= LONG_MAX)
            ):
                rec.encoding = "int"
            else:
                rec.encoding = "embstr" if n <= limit else "raw"
            return
        start = r.tell()
        n, enc = r.length_enc("string value")
        if enc:
            if n == 3:
                clen = r.length("string value (compressed length)")
                ulen = r.length("string value (uncompressed length)")
                if not lzf_sizes_ok(clen, ulen):
                    raise self.corrupt(
                        f"LZF sizes are impossible (compressed {clen}, uncompressed {ulen})", start
                    )
                if 0 < ulen <= LZF_CHECK_MAX:
                    if not lzf_length_ok(r.read(clen, "string value"), ulen):
                        self.refuse(
                            "lzf length", f"LZF data does not decompress to {ulen} bytes", start
                        )
                else:
                    r.skip(clen, "string value")
                rec.length = rec.max_elem = ulen
                rec.encoding = "embstr" if ulen <= limit else "raw"
                return
            if n == 0:
                v = r.unpack(I8, "string value")
            elif n == 1:
                v = r.unpack(I16, "string value")
            elif n == 2:
                v = r.unpack(I32, "string value")
            else:
                raise self.corrupt(f"unknown string encoding {n}", start)
            rec.length = rec.max_elem = int_text_len(v)
            rec.encoding = "int"
            return
        if n <= 20:
            r.need(n, "string value", start)
            data = r.buf[r.pos : r.pos + n]
            r.pos += n
            if _CANONICAL_LONG.fullmatch(data) and LONG_MIN <= int(data) <= LONG_MAX:
                rec.encoding = "int"
            else:
                rec.encoding = "embstr" if n <= limit else "raw"
        else:
            r.skip(n, "string value")
            rec.encoding = "embstr" if n <= limit else "raw"
        rec.length = rec.max_elem = n
