"""Redis Cluster hash slot of a key (docs/rdb-format.md section 9): CRC16/XMODEM of the hashtag,
or of the whole key when it has no non-empty {...} tag, modulo 16384."""

from __future__ import annotations

from binascii import crc_hqx


def key_slot(key: bytes) -> int:
    s = key.find(b"{")
    if s != -1:
        e = key.find(b"}", s + 1)
        if e != -1 and e != s + 1:
            key = key[s + 1 : e]
    return crc_hqx(key, 0) & 0x3FFF
