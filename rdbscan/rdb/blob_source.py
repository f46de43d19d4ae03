"""The bytes of one blob, read in pieces and seen through a window (blob_stream.py walks blobs
longer than blob_stream.WHOLE_MAX this way; reader.Reader.string makes the sources)."""

from __future__ import annotations

from collections.abc import Iterable

from .errors import BlobError

# Bytes of input (plain, or compressed) read at a time.
PIECE = 64 << 10
# Bytes of LZF input decoded at a time: the output of one decode is at most 88 times this.
LZF_PIECE = 4 << 10


class BlobSource:
    """The n bytes of one blob, produced in order by `pieces` (an iterable of bytes that raises
    the reader's error, truncation or LZF, when the input does not give them), seen through a
    window.  len() is the blob's length as the whole-blob path would have held it (0 after an
    LZF payload that does not decompress, as values.ValueReader.blob returns b"")."""

    __slots__ = ("n", "length", "_pieces", "buf", "off")

    def __init__(self, n: int, pieces: Iterable[bytes]) -> None:
        self.n = n
        self.length = n
        self._pieces = iter(pieces)
        self.buf = b""  # the window: blob bytes off .. off + len(buf)
        self.off = 0

    def __len__(self) -> int:
        return self.length

    def window(self, lo: int, hi: int) -> tuple[bytes, int]:
        """(buf, off): the blob's bytes from off <= lo (or from the last window's off, if lo is
        below it) through at least min(hi, n); bytes before lo are dropped for good."""
        buf, off = self.buf, self.off
        got = off + len(buf)
        if hi > self.n:
            hi = self.n
        if got >= hi:
            return buf, off
        if lo < off:
            lo = off
        parts = []
        if lo < got:
            parts.append(buf[lo - off :])
            off = lo
        else:
            off = -1  # set by the first piece kept
        while got < hi:
            piece = next(self._pieces, None)
            if piece is None:  # unreachable: a source that ends short raises first
                raise BlobError("blob ends before its length")
            k = len(piece)
            if off < 0:
                if got + k <= lo:
                    got += k
                    continue
                cut = lo - got if lo > got else 0
                off = got + cut
                piece = piece[cut:]
            parts.append(piece)
            got += k
        if off < 0:  # lo at or past the end: nothing kept
            off = got
        self.buf = b"".join(parts)
        self.off = off
        return self.buf, off

    def finish(self) -> None:
        """Read the rest of the blob (the reader ends past it) and raise what reading it raises
        (truncation, LZF data that does not decompress to its length)."""
        self.buf = b""
        for _ in self._pieces:
            pass

    def walk(self, walker, *args) -> tuple:
        """walker(self, *args), the rest read in any case: an error of the input (reading, LZF)
        comes before the walker's, as when the blob is read whole before its walk."""
        try:
            result = walker(self, *args)
        except BlobError:
            self.finish()
            raise
        self.finish()
        return result


def bytes_source(blob: bytes, piece: int = PIECE) -> BlobSource:
    """A BlobSource over bytes already in memory, in pieces of `piece` bytes (tests)."""
    return BlobSource(len(blob), (blob[i : i + piece] for i in range(0, len(blob), piece)))
