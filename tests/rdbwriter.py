"""A tiny RDB writer for tests: builds byte-exact records for cases no fixture covers
(64-bit lengths, listpack counts of 65535, Valkey HASH_2, KEY_META, hostile lengths, ...).
Written from rdb-format.md, independently of the parser under test."""

from __future__ import annotations

import struct

import anycrc

CRC = anycrc.Model("CRC64-REDIS")


def length(n: int, force64: bool = False) -> bytes:
    if force64:
        return b"\x81" + struct.pack(">Q", n)
    if n < 64:
        return bytes([n])
    if n < 16384:
        return bytes([0x40 | (n >> 8), n & 0xFF])
    if n <= 0xFFFFFFFF:
        return b"\x80" + struct.pack(">I", n)
    return b"\x81" + struct.pack(">Q", n)


def string(b: bytes | str, force64: bool = False) -> bytes:
    if isinstance(b, str):
        b = b.encode()
    return length(len(b), force64) + b


def int_string(v: int) -> bytes:
    if -128 <= v <= 127:
        return b"\xc0" + struct.pack("<b", v)
    if -32768 <= v <= 32767:
        return b"\xc1" + struct.pack("<h", v)
    return b"\xc2" + struct.pack("<i", v)


def lzf_string(data: bytes) -> bytes:
    """An LZF record made of literal runs only (valid LZF, no compression)."""
    out = bytearray()
    for i in range(0, len(data), 32):
        chunk = data[i : i + 32]
        out.append(len(chunk) - 1)
        out += chunk
    return b"\xc3" + length(len(out)) + length(len(data)) + bytes(out)


def _lp_entry(e) -> bytes:
    if isinstance(e, int):
        if 0 <= e <= 127:
            enc = bytes([e])
        elif -4096 <= e <= 4095:
            v = e & 0x1FFF
            enc = bytes([0xC0 | (v >> 8), v & 0xFF])
        elif -32768 <= e <= 32767:
            enc = b"\xf1" + struct.pack("<h", e)
        elif -(1 << 31) <= e < (1 << 31):
            enc = b"\xf3" + struct.pack("<i", e)
        else:
            enc = b"\xf4" + struct.pack("<q", e)
    else:
        if isinstance(e, str):
            e = e.encode()
        if len(e) < 64:
            enc = bytes([0x80 | len(e)]) + e
        elif len(e) < 4096:
            enc = bytes([0xE0 | (len(e) >> 8), len(e) & 0xFF]) + e
        else:
            enc = b"\xf0" + struct.pack("<I", len(e)) + e
    n = len(enc)
    if n <= 127:
        back = bytes([n])
    elif n < 16383:
        back = bytes([n >> 7, (n & 127) | 128])
    else:
        back = bytes([n >> 14, ((n >> 7) & 127) | 128, (n & 127) | 128])
    return enc + back


def listpack(entries, count: int | None = None) -> bytes:
    body = b"".join(_lp_entry(e) for e in entries)
    total = 6 + len(body) + 1
    n = len(entries) if count is None else count
    return struct.pack("<IH", total, n) + body + b"\xff"


def rdb(
    body: bytes,
    version: int = 11,
    valkey: bool = False,
    aux: dict | None = None,
    checksum: bool = True,
) -> bytes:
    magic = f"VALKEY{version:03d}".encode() if valkey else f"REDIS{version:04d}".encode()
    head = magic
    for k, v in (aux or {}).items():
        head += b"\xfa" + string(k) + string(v)
    data = head + body + b"\xff"
    if version >= 5:
        data += struct.pack("<Q", CRC.calc(data) if checksum else 0)
    return data


def key(rdb_type: int, name: bytes | str, value: bytes) -> bytes:
    return bytes([rdb_type]) + string(name) + value


def _zl_entry(prev: int, e) -> bytes:
    """One ziplist entry (rdb-format.md section 5.1): the previous entry's length, then the
    narrowest encoding ziplist.c picks: immediates 0..12, int8/16/24/32/64, strings with a 1, 2
    or 5-byte length (the 5-byte one from 16384 bytes)."""
    head = bytes([prev]) if prev < 254 else b"\xfe" + struct.pack("<I", prev)
    if isinstance(e, int):
        if 0 <= e <= 12:
            enc = bytes([0xF1 + e])
        elif -128 <= e <= 127:
            enc = b"\xfe" + struct.pack("<b", e)
        elif -32768 <= e <= 32767:
            enc = b"\xc0" + struct.pack("<h", e)
        elif -(1 << 23) <= e < (1 << 23):
            enc = b"\xf0" + struct.pack("<i", e)[:3]
        elif -(1 << 31) <= e < (1 << 31):
            enc = b"\xd0" + struct.pack("<i", e)
        else:
            enc = b"\xe0" + struct.pack("<q", e)
    else:
        if isinstance(e, str):
            e = e.encode()
        if len(e) < 64:
            enc = bytes([len(e)]) + e
        elif len(e) < 16384:
            enc = bytes([0x40 | (len(e) >> 8), len(e) & 0xFF]) + e
        else:
            enc = b"\x80" + struct.pack(">I", len(e)) + e
    return head + enc


def ziplist(entries, count: int | None = None) -> bytes:
    """A ziplist (rdb-format.md section 5.1): zlbytes, zltail, zllen, entries, 0xff."""
    body, prev, tail = b"", 0, 10
    for e in entries:
        ent = _zl_entry(prev, e)
        tail = 10 + len(body)
        body += ent
        prev = len(ent)
    n = len(entries) if count is None else count
    return struct.pack("<IIH", 10 + len(body) + 1, tail, n) + body + b"\xff"


def intset(values, width: int = 2) -> bytes:
    """An intset (rdb-format.md section 5.3) of `values` in the order given."""
    fmt = {2: "<h", 4: "<i", 8: "<q"}[width]
    return struct.pack("<II", width, len(values)) + b"".join(struct.pack(fmt, v) for v in values)


# -- the servers of late 2026 (docs/rdb-format.md sections 4.5-4.7) ------------------------------


def array_value(elements: list[tuple[int, object]], insert_idx: int | None = None) -> bytes:
    """Redis 8.8 type 28: elements as (index, value); ints and floats by their Python type,
    strings of at most 7 bytes as small strings (tag 3), longer ones as SDS (tag 0)."""
    out = length(len(elements)) + length(0 if insert_idx is None else 1)
    if insert_idx is not None:
        out += length(insert_idx)
    for idx, v in elements:
        out += length(idx)
        if isinstance(v, bool) or not isinstance(v, (int, float, str, bytes)):
            raise TypeError(v)
        if isinstance(v, int):
            out += length(1) + struct.pack("<q", v)
        elif isinstance(v, float):
            out += length(2) + struct.pack("<d", v)
        else:
            b = v.encode() if isinstance(v, str) else v
            out += length(3 if len(b) <= 7 else 0) + string(b)
    return out


def template_sorted(names) -> list[bytes]:
    """Field names in the order a template keeps them: by length, then bytes (sdscmplen)."""
    bs = [n.encode() if isinstance(n, str) else n for n in names]
    return sorted(bs, key=lambda b: (len(b), b))


def hash_template(tid: int, names) -> bytes:
    """Redis 8.10 opcode 242: one template record."""
    names = template_sorted(names)
    return b"\xf2" + length(tid) + length(len(names)) + b"".join(string(n) for n in names)


def template_lp_ref(tid: int, values) -> bytes:
    """Type 30's value: a listpack of the template id and the values (in template order)."""
    return string(listpack([tid, *values]))


def template_array_ref(tid: int, values) -> bytes:
    """Type 32's value: the template id, then a string per value."""
    return length(tid) + b"".join(string(v) for v in values)


def template_self(names, values, array: bool, raw_names: bool = False) -> bytes:
    """Types 29 (array=False) and 31: the names inline (a listpack, or raw with raw_names),
    then the values as in 30 (with a leading id entry) or 32."""
    names = template_sorted(names)
    if raw_names:
        out = length(1) + length(len(names)) + b"".join(string(n) for n in names)
    else:
        out = length(0) + string(listpack(names))
    if array:
        return out + b"".join(string(v) for v in values)
    return out + string(listpack([0, *values]))


def path_hash(paths: dict) -> bytes:
    """Valkey 9.2 type 23: {path: {field: value}}."""
    out = length(len(paths))
    for p, fields in paths.items():
        out += string(p) + length(len(fields))
        for f, v in fields.items():
            out += string(f) + string(v)
    return out


def resp_command(*args) -> bytes:
    """A RESP multibulk, as Valkey 9.2's opcode 242 (UPDATE) carries it."""
    parts = [a.encode() if isinstance(a, str) else a for a in args]
    out = b"*%d\r\n" % len(parts)
    for a in parts:
        out += b"$%d\r\n" % len(a) + a + b"\r\n"
    return out


def relabel(data: bytes, magic: bytes) -> bytes:
    """A dump with its 9-byte header replaced and its CRC64 written again."""
    body = magic + data[9:-8]
    return body + struct.pack("<Q", CRC.calc(body))
