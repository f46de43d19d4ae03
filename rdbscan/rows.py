"""Key rows: turns the parser's KeyRecords into column lists for the `keys`, `streams` and
`stream_groups` tables (schema in store.py).  Knows neither RDB bytes nor DuckDB."""
from __future__ import annotations

from .memory import bucket_shares, estimate, select_profile, total
from .slots import key_slot
from .store import KEYS_COLUMNS, STREAM_GROUPS_COLUMNS, STREAMS_COLUMNS


class RowBuilder:
    """Accumulates one batch of rows at a time, column by column."""

    def __init__(self, dump_id: int, info, target: str | None = None):
        self.dump_id = dump_id
        self.info = info
        self.target = target
        self.profile = None
        self.bucket_share: dict[int, tuple[float, float]] = {}
        self.reset()

    def reset(self) -> None:
        self.keys = [[] for _ in KEYS_COLUMNS]
        self.streams = [[] for _ in STREAMS_COLUMNS]
        self.groups = [[] for _ in STREAM_GROUPS_COLUMNS]
        self.count = 0

    def _shares(self, db: int) -> tuple[float, float]:
        """Per-key share of the main and expires bucket arrays, from RESIZEDB (section 8.6)."""
        share = self.bucket_share.get(db)
        if share is None:
            share = self.bucket_share[db] = bucket_shares(self.info.resizedb, db)
        return share

    def add(self, rec) -> None:
        if self.profile is None:
            self.profile = select_profile(self.info, self.target)
        (dump_id, db, key, key_bytes, key_length, typ, encoding, rdb_type, length, max_elem,
         serialized, memory, memory_total, expire, idle, freq, slot, offset, fttl,
         fmin) = self.keys
        k = rec.key
        dump_id.append(self.dump_id)
        db.append(rec.db)
        key.append(k.decode("utf-8", "backslashreplace"))
        key_bytes.append(k)
        key_length.append(len(k))
        typ.append(rec.type)
        encoding.append(rec.encoding)
        rdb_type.append(rec.rdb_type)
        length.append(rec.length)
        max_elem.append(rec.max_elem)
        serialized.append(rec.end - rec.offset)
        mem = estimate(rec, self.profile)
        memory.append(mem)
        memory_total.append(total(mem, rec.expire_ms is not None, self._shares(rec.db)))
        expire.append(rec.expire_ms)
        idle.append(rec.idle)
        freq.append(rec.freq)
        slot.append(key_slot(k))
        offset.append(rec.offset)
        ex = rec.extra
        if ex is not None and "fields_with_ttl" in ex:
            fttl.append(ex["fields_with_ttl"])
            fmin.append(ex["min_field_expire_ms"])
        else:
            fttl.append(None)
            fmin.append(None)
        if rec.type == "stream" and ex is not None:
            self._add_stream(rec, key[-1])
        self.count += 1

    def _add_stream(self, rec, key_text: str) -> None:
        ex = rec.extra
        for col, value in zip(self.streams, (
                self.dump_id, rec.db, key_text, rec.length, ex["listpacks"], ex["first_id"],
                ex["last_id"], ex["max_deleted_id"], ex["entries_added"], len(ex["groups"]),
                ex["consumers"], ex["pending"])):
            col.append(value)
        for g in ex["groups"]:
            for col, value in zip(self.groups, (
                    self.dump_id, rec.db, key_text, g["name"].decode("utf-8", "backslashreplace"),
                    g["last_delivered_id"], g["entries_read"], len(g["consumers"]),
                    g["pending"])):
                col.append(value)
