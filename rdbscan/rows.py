"""Key rows: turns the parser's KeyRecords into column lists for the `keys`, `streams` and
`stream_groups` tables (schema in store.py).  Knows neither RDB bytes nor DuckDB."""
from __future__ import annotations

from .memory import bucket_shares, estimate, select_profile, total
from .slots import key_slot
from .store import KEYS_COLUMNS, STREAM_GROUPS_COLUMNS, STREAMS_COLUMNS

ESTIMATE_CACHE = 100_000   # value shapes whose memory estimate is remembered


class RowBuilder:
    """Accumulates one batch of rows at a time."""

    def __init__(self, dump_id: int, info, target: str | None = None):
        self.dump_id = dump_id
        self.info = info
        self.target = target
        self.profile = None
        self.bucket_share: dict[int, tuple[float, float]] = {}
        self.estimates: dict[tuple, int] = {}   # memory estimate by value shape (add)
        self.reset()

    def reset(self) -> None:
        self.rows: list[tuple] = []
        self.streams = [[] for _ in STREAMS_COLUMNS]
        self.groups = [[] for _ in STREAM_GROUPS_COLUMNS]

    @property
    def count(self) -> int:
        return len(self.rows)

    @property
    def keys(self) -> list:
        """The batch as columns (KEYS_COLUMNS order); rows are kept as tuples and transposed
        once per batch, which costs far less than appending to 20 lists per key."""
        if not self.rows:
            return [[] for _ in KEYS_COLUMNS]
        return list(zip(*self.rows))

    def _shares(self, db: int) -> tuple[float, float]:
        """Per-key share of the main and expires bucket arrays, from RESIZEDB (section 8.6)."""
        share = self.bucket_share.get(db)
        if share is None:
            share = self.bucket_share[db] = bucket_shares(self.info.resizedb, db)
        return share

    def add(self, rec) -> None:
        prof = self.profile
        if prof is None:
            prof = self.profile = select_profile(self.info, self.target)
        k = rec.key
        db = rec.db
        expire = rec.expire_ms
        ex = rec.extra
        if ex is None and rec.elems is None and rec.nodes is None:
            # Strings and single-blob values: both estimates depend on these figures alone,
            # and dumps repeat them endlessly (5 M `DEBUG POPULATE` keys: 7 shapes).
            shape = (rec.type, rec.encoding, len(k), rec.length, rec.blob, db, expire is None)
            mem_tot = self.estimates.get(shape)
            if mem_tot is None:
                if len(self.estimates) >= ESTIMATE_CACHE:
                    self.estimates.clear()
                mem = estimate(rec, prof)
                mem_tot = self.estimates[shape] = (
                    mem, total(mem, expire is not None, self._shares(db)))
            mem, tot = mem_tot
            fttl = fmin = ints = None
        else:
            mem = estimate(rec, prof)
            tot = total(mem, expire is not None, self._shares(db))
            if ex is not None and "fields_with_ttl" in ex:
                fttl, fmin = ex["fields_with_ttl"], ex["min_field_expire_ms"]
            else:
                fttl = fmin = None
            ints = ex.get("int_members") if ex is not None else None
        text = k.decode("utf-8", "backslashreplace")
        self.rows.append((
            self.dump_id, db, text, k, len(k), rec.type, rec.encoding, rec.rdb_type,
            rec.length, rec.max_elem, rec.end - rec.offset, mem, tot, expire, rec.idle,
            rec.freq, key_slot(k), rec.offset, fttl, fmin, ints))
        if ex is not None and rec.type == "stream":
            self._add_stream(rec, text)

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
