"""Errors a dump can end with.  Each carries the byte offset and what was expected, so the
command line can print one line: FILE: byte N: what went wrong (key, type), K keys read."""

from __future__ import annotations


class RDBError(Exception):
    """The input is not a readable RDB stream at `offset`."""

    kind = "corrupt"

    def __init__(
        self, message: str, offset: int, *, key: bytes | None = None, rdb_type: int | None = None
    ):
        super().__init__(message)
        self.message = message
        self.offset = offset
        self.key = key
        self.rdb_type = rdb_type

    def describe(self, input_offset: int | None = None) -> str:
        """The error as one line without the file name: 'byte N: message (key ..., type ...)'.
        input_offset: where the compressed block holding byte N starts in the input (a VKCS
        file), named after N."""
        text = f"byte {self.offset}"
        if input_offset is not None:
            text += f" (compressed block at input byte {input_offset})"
        text += f": {self.message}"
        ctx = []
        if self.key is not None:
            ctx.append("key " + repr(self.key.decode("utf-8", "backslashreplace"))[:120])
        if self.rdb_type is not None:
            from .constants import RDB_TYPE_LABELS

            ctx.append(f"type {self.rdb_type} ({RDB_TYPE_LABELS.get(self.rdb_type, 'unknown')})")
        if ctx:
            text += " while reading " + ", ".join(ctx)
        return text


class TruncatedError(RDBError):
    """The input ended before the structure being read was complete."""

    kind = "truncated"


class CorruptError(RDBError):
    """A structural impossibility: unknown type or opcode, impossible length, bad blob."""

    kind = "corrupt"


class UnsupportedError(RDBError):
    """A well-formed input this version of rdbscan cannot read (newer RDB version, type 6 modules)."""

    kind = "unsupported"


class NotRDBError(RDBError):
    """The input does not start with an RDB magic."""

    kind = "not-rdb"


class BlobError(ValueError):
    """A listpack, ziplist, intset or zipmap image that does not decode; the parser turns it into
    a CorruptError with the file offset of the blob."""


class BlobRefused(BlobError):
    """A blob that decodes, but that Redis's integrity checks (lpValidateIntegrity,
    ziplistValidateIntegrity, intsetValidateIntegrity) refuse: a back-length, previous-entry
    length, tail offset or header count that does not match the entries, a terminator that is
    not 0xff, intset members out of order.  The walk went to the end: `result` is what the
    walker would have returned, `kind` one of constants.INVALID_KINDS.  The key is kept and
    flagged (keys.invalid) rather than the load stopped."""

    def __init__(self, message: str, kind: str, result: tuple):
        super().__init__(message)
        self.kind = kind
        self.result = result
