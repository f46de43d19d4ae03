"""The servers `rdbscan migrate --to` names: which RDB format each reads, what it keeps
compact on load, and the memory profile it is estimated with.

A target is `[redis-|valkey-]MAJOR.MINOR[/ALLOCATOR]` (`valkey-9.1`, `redis-8.6/16p`, `7.4`);
the allocator suffix is memory.parse_target's (`/8` official builds, `/16` distribution
packages linking the system jemalloc, `/16p` jemalloc 5.3.1 as Debian sid links it).
Facts per server line come from its sources (docs/migrate.md cites file and function).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..model.memory import Profile, parse_target, split_target

# RDB_VERSION (rdb.h) of each release line: the newest version it writes and reads.
REDIS_RDB = {
    (2, 8): 6,
    (3, 0): 6,
    (3, 2): 7,
    (4, 0): 8,
    (5, 0): 9,
    (6, 0): 9,
    (6, 2): 9,
    (7, 0): 10,
    (7, 2): 11,
    (7, 4): 12,
    (7, 9): 12,  # 8.0 milestones (7.9.x)
    (8, 0): 12,
    (8, 2): 12,
    (8, 4): 12,
    (8, 6): 13,
    (8, 8): 14,
    (8, 10): 15,
}
VALKEY_RDB = {(7, 2): 11, (8, 0): 11, (8, 1): 11, (9, 0): 80, (9, 1): 80, (9, 2): 81}
# Valkey's RDB_FOREIGN_VERSION_MIN / _MAX (rdb.h, 9.0+; the same range 8.1 calls "foreign"):
# REDIS-magic versions that Redis wrote after the fork, and RDB_FOREIGN_TYPE_MIN / _MAX: the
# type and opcode ids that mean something else in Redis than in Valkey.
FOREIGN_VERSION_MIN, FOREIGN_VERSION_MAX = 12, 79
FOREIGN_TYPE_MIN, FOREIGN_TYPE_MAX = 22, 243

# Compact-encoding thresholds of the default configuration (config.c) every line shares:
# hash-max-listpack-entries / -value, set-max-intset-entries, set-max-listpack-entries /
# -value (7.2+), zset-max-listpack-entries / -value, list-max-listpack-size -2 (8 KiB nodes).
HASH_ENTRIES, HASH_VALUE = 512, 64
SET_INTSET_ENTRIES, SET_LP_ENTRIES, SET_LP_VALUE = 512, 128, 64
ZSET_ENTRIES, ZSET_VALUE = 128, 64
LIST_NODE_BYTES = 8192
LIST_ZIPLIST_ENTRIES = 512  # <= 3.0: list-max-ziplist-entries / -value 64
LIST_ZIPLIST_VALUE = 64


@dataclass(frozen=True)
class Server:
    """One target server line and the profile its memory is estimated with."""

    spec: str  # as the user wrote it
    family: str  # redis | valkey
    version: tuple[int, int]
    profile: Profile

    @property
    def name(self) -> str:
        """`valkey-9.1`, `redis-8.6/16p`: the label of the target in reports and tables."""
        base = f"{self.family}-{self.version[0]}.{self.version[1]}"
        p = self.profile
        suffix = "" if p.quantum == 8 and not p.large_pages else f"/{p.quantum}"
        return base + suffix + ("p" if p.large_pages else "")

    @property
    def rdb_version(self) -> int:
        """The newest RDB version this server reads (its own RDB_VERSION)."""
        table = VALKEY_RDB if self.family == "valkey" else REDIS_RDB
        return table[self.version]

    @property
    def valkey_magic(self) -> bool:
        """Writes (and reads) the VALKEY magic (Valkey 9.0+)."""
        return self.family == "valkey" and self.version >= (9, 0)

    @property
    def listpack(self) -> bool:
        """Listpacks replace ziplists (Redis 7.0+, every Valkey)."""
        return self.family == "valkey" or self.version >= (7, 0)

    @property
    def quicklist(self) -> bool:
        """Lists are quicklists (3.2+)."""
        return self.family == "valkey" or self.version >= (3, 2)

    @property
    def listpack_lists(self) -> bool:
        """Small lists are one listpack, not a quicklist (Redis 7.2+, Valkey 7.2+)."""
        return self.family == "valkey" or self.version >= (7, 2)

    @property
    def listpack_sets(self) -> bool:
        """Small sets of strings are a listpack (Redis 7.2+, Valkey 7.2+)."""
        return self.family == "valkey" or self.version >= (7, 2)

    @property
    def field_ttls(self) -> str | None:
        """How the server keeps hash fields with a TTL: 'redis' (7.4+: listpackex or hashtable,
        RDB types 24/25), 'valkey' (9.0+: hashtable, VALKEY type 22), None."""
        if self.family == "redis":
            return "redis" if self.version >= (7, 4) else None
        return "valkey" if self.version >= (9, 0) else None

    @property
    def btree_zsets(self) -> bool:
        """Valkey 9.2 keeps large sorted sets in a B+ tree."""
        return self.family == "valkey" and self.version >= (9, 2)

    @property
    def embstr_limit(self) -> int:
        return 39 if self.family == "redis" and self.version < (3, 2) else 44

    @property
    def version_check(self) -> bool:
        """Has the `rdb-version-check` setting (Valkey 8.1+)."""
        return self.family == "valkey" and self.version >= (8, 1)


_SPEC = re.compile(r"(?:(redis|valkey)-?)?(\d+)\.(\d+)(?:\.\d+)*")


def parse_server(spec: str) -> Server:
    """The Server of a `--to` value; ValueError (one line, the accepted forms) when unknown."""
    text = spec.strip()
    base, _cluster = split_target(text)
    head, sep, alloc = base.rpartition("/")
    version_text = head if sep else base
    m = _SPEC.fullmatch(version_text.strip().lower())
    known = ", ".join(
        [f"redis-{a}.{b}" for a, b in REDIS_RDB if (a, b) != (3, 0)]
        + [f"valkey-{a}.{b}" for a, b in VALKEY_RDB]
    )
    if not m:
        raise ValueError(
            f"unknown server {spec!r}: expected SERVER-VERSION[/ALLOCATOR], e.g. valkey-9.1, "
            f"redis-8.6/16p (servers: {known}; allocators /8, /16, /16p)"
        )
    family = m.group(1) or "redis"
    version = (int(m.group(2)), int(m.group(3)))
    table = VALKEY_RDB if family == "valkey" else REDIS_RDB
    if version not in table:
        raise ValueError(f"unknown server {spec!r}: rdbscan knows {known}")
    prefix = "valkey-" if family == "valkey" else ""
    profile_spec = f"{prefix}{version[0]}.{version[1]}" + (f"/{alloc}" if sep else "")
    try:
        profile = parse_target(profile_spec)
    except ValueError as e:
        raise ValueError(f"unknown server {spec!r}: {e}") from None
    return Server(spec=text, family=family, version=version, profile=profile)
