"""Hashes whose fields carry their own TTLs: Redis 7.4 types 22-25 and Valkey 9 HASH_2 (docs/rdb-
format.md section 4.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import constants as C
from .blobs import listpack_entries
from .errors import BlobError
from .reader import I64, int_text_len
from .records import FieldTTLs
from .values import LONG_MAX, LONG_MIN, ValueReader

if TYPE_CHECKING:
    from .records import KeyRecord


class FieldTTLValues(ValueReader):
    """Hashes whose fields carry their own TTLs."""

    def v_hash_ttl(self, rec: KeyRecord) -> None:
        """Types 24 (HASH_METADATA) and 22 (its 7.4-rc form): fields with their own TTLs."""
        r = self.r
        pre_ga = rec.rdb_type == C.RDB_TYPE_HASH_METADATA_PRE_GA
        min_expire = 0 if pre_ga else r.unpack(I64, "hash minimum field expiry")
        n = r.length("hash field count")
        self.check_count(n, "hash", 3)
        fields: dict[int, int] = {}
        ttl_fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        mx = 0
        with_ttl = 0
        earliest = None
        skip = r.skip_string
        for _ in range(n):
            t = r.length("hash field TTL")
            f = skip("hash field")
            v = skip("hash value")
            if t:
                at = t if pre_ga else t + min_expire - 1
                if not LONG_MIN <= at <= LONG_MAX:
                    self.recover(self.corrupt(f"hash field expiry {at} ms is out of range"))
                    at = 0
                with_ttl += 1
                if earliest is None or at < earliest:
                    earliest = at
                ttl_fields[f] = ttl_fields.get(f, 0) + 1
            else:
                fields[f] = fields.get(f, 0) + 1
            vals[v] = vals.get(v, 0) + 1
            mx = max(mx, f, v)
        rec.length = n
        rec.max_elem = mx
        rec.elems = fields
        rec.vals = vals
        rec.encoding = "hashtable"
        rec.field_ttls = FieldTTLs(with_ttl, earliest, ttl_fields)

    def v_hash_2(self, rec: KeyRecord) -> None:
        """Valkey 9 HASH_2 (type 22 under the VALKEY magic): field, value, i64 expiry (-1 none)."""
        r = self.r
        n = r.length("hash field count")
        self.check_count(n, "hash", 10)
        fields: dict[int, int] = {}
        vals: dict[int, int] = {}
        mx = 0
        with_ttl = 0
        earliest = None
        skip = r.skip_string
        for _ in range(n):
            f = skip("hash field")
            v = skip("hash value")
            at = r.unpack(I64, "hash field expiry")
            if at != -1:
                with_ttl += 1
                if earliest is None or at < earliest:
                    earliest = at
            fields[f] = fields.get(f, 0) + 1
            vals[v] = vals.get(v, 0) + 1
            mx = max(mx, f, v)
        rec.length = n
        rec.max_elem = mx
        rec.elems = fields
        rec.vals = vals
        rec.encoding = "hashtable"
        rec.field_ttls = FieldTTLs(with_ttl, earliest)

    def v_hash_listpack_ex(self, rec: KeyRecord) -> None:
        """Types 25 / 23: [i64 min expire] listpack of field, value, ttl triplets (0 = no TTL)."""
        r = self.r
        if rec.rdb_type == C.RDB_TYPE_HASH_LISTPACK_EX:
            r.unpack(I64, "hash minimum field expiry")
        start = r.tell()
        blob = self.blob("hash listpack")
        try:
            items = listpack_entries(blob)
        except BlobError as e:
            self.recover(self.corrupt(f"hash listpack: {e}", start))
            items = []
        if len(items) % 3:
            self.recover(
                self.corrupt(
                    f"hash listpack holds {len(items)} entries, not field/value/TTL triplets", start
                )
            )
            items = []
        mx = 0
        with_ttl = 0
        earliest = None
        for i in range(0, len(items), 3):
            f, v, t = items[i], items[i + 1], items[i + 2]
            mx = max(
                mx,
                len(f) if isinstance(f, bytes) else int_text_len(f),
                len(v) if isinstance(v, bytes) else int_text_len(v),
            )
            if not isinstance(t, int):
                self.recover(
                    self.corrupt("hash listpack: field TTL entry is not an integer", start)
                )
                break
            if t:
                with_ttl += 1
                if earliest is None or t < earliest:
                    earliest = t
        rec.length = len(items) // 3
        rec.max_elem = mx
        rec.blob_bytes = len(blob)
        rec.encoding = "listpackex"
        rec.field_ttls = FieldTTLs(with_ttl, earliest)
