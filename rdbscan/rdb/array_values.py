"""Redis 8.8 sparse arrays (RDB 14, type 28; docs/rdb-format.md section 4.5).

Layout, as Redis's rdb.c writes it and redis/librdb 2.3.0 reads it:
LEN count (> 0), LEN insert flag (0 or 1), [LEN insert index], then count x (LEN index, LEN tag,
payload): tag 0 (a string) and 3 (a string of at most 7 bytes) carry a STR, 1 an 8-byte
little-endian integer, 2 an 8-byte IEEE double.  Indexes are plain lengths below 2^64 - 1.

What the memory model needs (model/memory.py array_cost): per slice of 4096 indexes (the server's
default slice size), how many elements it holds and the span of their offsets; the lengths of the
strings too long to live in the element's tagged word."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import constants as C
from .values import ValueReader

if TYPE_CHECKING:
    from .records import KeyRecord

ARRAY_SLICE = 4096  # sparsearray.h AR_SLICE_SIZE_DEFAULT
SMALLSTR_MAX = 7  # sparsearray.h AR_SMALLSTR_MAXLEN (64-bit builds)
INT_INLINE = 1 << 61  # sparsearray.h arIntFits: integers in 62 bits live in the tagged word
MAX_KEPT_SLICES = 1 << 16  # per key; beyond, slices are taken as sparse (a lower bound)
INDEX_MAX = (1 << 64) - 2  # UINT64_MAX is the server's "no index"


class ArrayValues(ValueReader):
    """Type 28: a sparse array of strings, integers and doubles by 64-bit index."""

    def v_array(self, rec: KeyRecord) -> None:
        r = self.r
        n = r.length("array element count")
        if n == 0:
            raise self.corrupt("array of no elements (Redis refuses an empty array)")
        self.check_count(n, "array", 3)
        flag = r.length("array insert flag")
        if flag > 1:
            raise self.corrupt(f"array insert flag {flag} is neither 0 nor 1")
        if flag:
            r.length("array insert index")
        strings: dict[int, int] = {}  # element length -> count, of strings kept as pointers
        slices: dict[int, list[int]] = {}  # slice id -> [count, lowest offset, highest offset]
        mx = 0
        last = -1
        skip = r.skip_string
        for _ in range(n):
            at = r.tell()
            idx = r.length("array index")
            if idx > INDEX_MAX:
                raise self.corrupt(f"array index {idx} is out of range", at)
            if idx <= last:
                raise self.corrupt(f"array index {idx} follows index {last}: not ascending", at)
            last = idx
            tag = r.length("array element tag")
            if tag == C.ARRAY_TAG_INT:
                v = int.from_bytes(r.read(8, "array integer"), "little", signed=True)
                ln = len(str(v))
                if not -INT_INLINE <= v < INT_INLINE:
                    strings[ln] = strings.get(ln, 0) + 1
            elif tag == C.ARRAY_TAG_FLOAT:
                r.skip(8, "array double")
                ln = 8  # the text of a double varies; its stored form is 8 bytes
            elif tag in (C.ARRAY_TAG_SDS, C.ARRAY_TAG_SMALLSTR):
                ln = skip("array string")
                if tag == C.ARRAY_TAG_SMALLSTR and ln > SMALLSTR_MAX:
                    raise self.corrupt(f"array small string of {ln} bytes (at most 7)", at)
                if ln > SMALLSTR_MAX:
                    strings[ln] = strings.get(ln, 0) + 1
            else:
                raise self.corrupt(f"array element tag {tag} is none of 0-3", at)
            if ln > mx:
                mx = ln
            sid, off = divmod(idx, ARRAY_SLICE)
            s = slices.get(sid)
            if s is not None:
                s[0] += 1
                s[2] = off
            elif len(slices) < MAX_KEPT_SLICES:
                slices[sid] = [1, off, off]
        rec.length = n
        rec.max_elem = mx
        rec.elems = strings
        rec.nodes = {sid: tuple(s) for sid, s in slices.items()}  # type: ignore[misc]
        rec.array_last = last
        rec.encoding = "array"
