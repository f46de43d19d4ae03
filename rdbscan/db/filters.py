"""Filters at parse time (`load`, `report`, `export`: docs/export.md): which keys of a
dump become rows.  A key the filter leaves out costs no row: the Python path drops its record
before RowBuilder.add, the compiled record loop before it commits the row (its C checks: db,
type, length, memory, expiry, a literal key prefix; a key regex is asked of Python per key).

    f = KeyFilter(match=["user:*"], types=["hash"], skip_expired=True)
    f.describe()   # 'match user:*, type hash, not expired at the snapshot' (dumps.filter)
    f.sql()        # the same filter as an SQL condition on the keys view (alias k)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..rdb import constants as C

# `--type` names: the keys.type names of the core types, and `module` for any module value.
TYPE_NAMES = ("string", "list", "set", "zset", "hash", "stream", "array", "module")


def glob_to_regex(glob: str) -> str:
    """A Redis glob (`KEYS`/`SCAN MATCH`: `*`, `?`, `[abc]`, `[^a]`, `[a-z]`, `\\x`) as a regex
    that must match the whole key."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        elif c == "[":
            j = glob.find("]", i + 2 if glob[i + 1 : i + 2] in ("^", "]") else i + 1)
            if j < 0:  # no closing bracket: a literal [
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j]
                neg = body.startswith("^")
                if neg:
                    body = body[1:]
                body = "".join("\\" + ch if ch in "\\[]" else ch for ch in body)
                out.append(f"[{'^' if neg else ''}{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "(?s:" + "".join(out) + r")\Z"


def literal_prefix(glob: str) -> bytes | None:
    """The prefix of a glob of the form `PREFIX*` with no other special character, else None:
    the compiled loop checks such a glob with one memcmp."""
    if not glob.endswith("*"):
        return None
    head = glob[:-1]
    if any(ch in head for ch in "*?[\\"):
        return None
    return head.encode()


def parse_size(text: str) -> int:
    """`10240`, `10KB`, `1.5MiB`, `2g`: bytes (KB/KiB both 1,024, as the report writes them)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b)?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"{text!r} is not a size (10240, 10KB, 1.5MiB, 2GB)")
    scale = 1024 ** " kmgt".index((m.group(2) or " ").lower())
    return int(float(m.group(1)) * scale)


@dataclass
class KeyFilter:
    """Keys to keep.  Every given condition must hold; `match` (Redis globs) and `regex`
    (Python regexes, searched anywhere in the key name) hold when any of theirs does, and both
    when both are given."""

    match: list[str] = field(default_factory=list)
    regex: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    dbs: list[int] = field(default_factory=list)
    min_memory: int | None = None
    min_length: int | None = None
    skip_expired: bool = False

    def __post_init__(self) -> None:
        for t in self.types:
            if t not in TYPE_NAMES:
                raise ValueError(f"--type {t}: one of {', '.join(TYPE_NAMES)}")
        for r in self.regex:
            try:
                re.compile(r.encode())
            except re.error as e:
                raise ValueError(f"--regex {r!r}: {e}") from None
        self._globs = [re.compile(glob_to_regex(g).encode()) for g in self.match]
        self._regexes = [re.compile(r.encode()) for r in self.regex]
        prefixes = [literal_prefix(g) for g in self.match]
        # All globs literal prefixes (and no regex): C compares them; else Python decides.
        self.prefixes: list[bytes] | None = (
            [p for p in prefixes if p is not None]
            if self.match and None not in prefixes and not self.regex
            else None
        )

    @property
    def active(self) -> bool:
        return bool(
            self.match
            or self.regex
            or self.types
            or self.dbs
            or self.min_memory
            or self.min_length
            or self.skip_expired
        )

    def describe(self) -> str:
        """One line for `dumps.filter` and the report: what was kept."""
        parts = []
        if self.match:
            parts.append("match " + " or ".join(self.match))
        if self.regex:
            parts.append("regex " + " or ".join(self.regex))
        if self.types:
            parts.append("type " + ",".join(self.types))
        if self.dbs:
            parts.append("db " + ",".join(map(str, self.dbs)))
        if self.min_memory:
            parts.append(f"memory >= {self.min_memory} B")
        if self.min_length:
            parts.append(f"length >= {self.min_length}")
        if self.skip_expired:
            parts.append("not expired at the snapshot")
        return ", ".join(parts)

    def key_ok(self, key: bytes) -> bool:
        """The key name conditions (match, regex)."""
        if self._globs and not any(g.match(key) for g in self._globs):
            return False
        if self._regexes and not any(r.search(key) for r in self._regexes):
            return False
        return True

    def keep(self, rec, cutoff_ms: int | None) -> bool:
        """Whether the key of KeyRecord `rec` is kept, but for its memory (`keep_memory`, asked
        once it is estimated); cutoff_ms: the snapshot time in ms (skip_expired)."""
        if self.dbs and rec.db not in self.dbs:
            return False
        if self.types:
            t = (
                "module"
                if rec.rdb_type in (C.RDB_TYPE_MODULE_PRE_GA, C.RDB_TYPE_MODULE_2)
                else rec.type
            )
            if t not in self.types:
                return False
        if self.min_length and (rec.length or 0) < self.min_length:
            return False
        if (
            self.skip_expired
            and cutoff_ms is not None
            and rec.expire_ms is not None
            and rec.expire_ms <= cutoff_ms
        ):
            return False
        return self.key_ok(rec.key)

    def keep_memory(self, memory: int) -> bool:
        return not self.min_memory or memory >= self.min_memory

    def compiled(self, type_names: dict[int, str]) -> dict:
        """What the compiled loop checks itself (KeyColumns.set_filter): dbs, the RDB type ids
        kept, min length, min memory, skip_expired, literal prefixes, and `key_ok` when the key
        needs Python."""
        rdb_types = None
        if self.types:
            rdb_types = [t for t, name in type_names.items() if name in self.types]
        need_python = bool(self._globs or self._regexes) and self.prefixes is None
        return {
            "dbs": list(self.dbs) or None,
            "rdb_types": rdb_types,
            "min_length": self.min_length or 0,
            "min_memory": self.min_memory or 0,
            "skip_expired": self.skip_expired,
            "prefixes": self.prefixes,
            "key_ok": self.key_ok if need_python else None,
        }

    def sql(self) -> str:
        """The filter as an SQL condition on the `keys` view (alias k), for a database already
        loaded (`export` of a database).  skip_expired compares with the dump's snapshot_ms."""
        conds = []

        def lit(s: str) -> str:
            return "'" + s.replace("'", "''") + "'"

        if self.match:
            conds.append(
                "("
                + " OR ".join(
                    f"regexp_full_match(k.key, {lit(glob_to_regex(g)[4:-3])}, 's')"
                    for g in self.match
                )
                + ")"
            )
        if self.regex:
            conds.append(
                "(" + " OR ".join(f"regexp_matches(k.key, {lit(r)})" for r in self.regex) + ")"
            )
        if self.types:
            named = [t for t in self.types if t != "module"]
            alt = [f"k.type IN ({', '.join(map(lit, named))})"] if named else []
            if "module" in self.types:
                alt.append("k.rdb_type IN (6, 7)")
            conds.append("(" + " OR ".join(alt) + ")")
        if self.dbs:
            conds.append(f"k.db IN ({', '.join(map(str, self.dbs))})")
        if self.min_memory:
            conds.append(f"k.memory_bytes >= {int(self.min_memory)}")
        if self.min_length:
            conds.append(f"k.length >= {int(self.min_length)}")
        if self.skip_expired:
            conds.append(
                "(k.expire_at_ms IS NULL OR k.expire_at_ms > "
                "(SELECT d.snapshot_ms FROM dumps d WHERE d.dump_id = k.dump_id))"
            )
        return " AND ".join(conds) or "true"


def reported_filters(con, dump_ids: list[int]) -> dict | None:
    """The filters the `dumps` rows of `dump_ids` record (a database or dataset that predates
    the `filter` column has none): {'filter': 'match user:* (dump 1); ...', 'filtered_keys': n},
    None when every one of them was loaded whole."""
    if not dump_ids:
        return None
    cur = con.execute(
        f"SELECT * FROM dumps WHERE dump_id IN ({', '.join(str(int(d)) for d in dump_ids)}) "
        "ORDER BY dump_id"
    )
    names = [d[0] for d in cur.description]
    if "filter" not in names:
        return None
    rows = [dict(zip(names, r)) for r in cur.fetchall()]
    described = sorted({r["filter"] for r in rows if r.get("filter")})
    if not described:
        return None
    whole = sum(1 for r in rows if not r.get("filter"))
    text = "; ".join(described) + (f" ({whole} dump(s) loaded whole)" if whole else "")
    return {"filter": text, "filtered_keys": sum(r.get("filtered_keys") or 0 for r in rows)}


def filter_note(found: dict) -> str:
    """The overview's note on a filtered load."""
    return (
        f"Loaded with a filter ({found['filter']}): the figures cover the filtered keys only; "
        f"{found['filtered_keys']:,} keys of the dumps were left out."
    )
