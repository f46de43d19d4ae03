"""Key names longer than KEY_KEEP bytes, read as they stream past (Redis allows names of 512 MB):
the parser keeps their first KEY_KEEP bytes and computes, chunk by chunk, what a key row needs of
the whole name: its length, a 64-bit hash that tells apart names with the same prefix, and its
cluster slot (docs/hostile-inputs.md).  A name is never held whole, so its size does not add to
peak memory."""

from __future__ import annotations

import hashlib
from binascii import crc_hqx

# Key names longer than this keep only their first KEY_KEEP bytes in keys.key / key_raw (the
# reasons are in rdbscan/db/rows.py, which re-exports it; _speedups.KEY_KEEP is the same limit).
KEY_KEEP = 1024


def key_digest(key: bytes) -> int:
    """keys.key_hash of a truncated key name: the first 8 bytes of its BLAKE2b digest as a
    signed 64-bit integer (two truncated names with the same prefix tell apart by it)."""
    return LongName().update(key).digest()


class LongName:
    """A key name fed in pieces: its first KEY_KEEP bytes, length, key_digest and slot
    (model.slots.key_slot: CRC16 of the first non-empty {hashtag}, else of the whole name)."""

    __slots__ = ("head", "length", "_hash", "_crc", "_tag_crc", "_tag_len", "_phase")

    def __init__(self) -> None:
        self.clear()

    def clear(self) -> None:
        """Forget what was fed (an LZF name that turned out not to decompress)."""
        self.head = b""
        self.length = 0
        self._hash = hashlib.blake2b(digest_size=8)
        self._crc = 0  # CRC16 of the whole name
        self._tag_crc = 0  # of the bytes after the first '{' (up to the first '}' after it)
        self._tag_len = 0
        self._phase = 0  # 0: no '{' yet, 1: inside the tag, 2: tag found, 3: empty tag

    def update(self, piece: bytes) -> LongName:
        if len(self.head) < KEY_KEEP:
            self.head += piece[: KEY_KEEP - len(self.head)]
        self.length += len(piece)
        self._hash.update(piece)
        if self._phase != 2:  # the slot may be the whole name's
            self._crc = crc_hqx(piece, self._crc)
        if self._phase < 2:
            rest = piece
            if self._phase == 0:
                i = piece.find(b"{")
                if i >= 0:
                    self._phase = 1
                    rest = piece[i + 1 :]
            if self._phase == 1:
                j = rest.find(b"}")
                if j < 0:
                    self._tag_crc = crc_hqx(rest, self._tag_crc)
                    self._tag_len += len(rest)
                else:
                    self._tag_crc = crc_hqx(rest[:j], self._tag_crc)
                    self._tag_len += j
                    self._phase = 2 if self._tag_len else 3
        return self

    def digest(self) -> int:
        return int.from_bytes(self._hash.digest(), "little", signed=True)

    def slot(self) -> int:
        return (self._tag_crc if self._phase == 2 else self._crc) & 0x3FFF
