"""On RDB <= 9 dumps, keys, types and lengths agree with rdbtools, the reference peer
(it cannot read Redis 7 dumps, so it is a test-only dependency)."""

from __future__ import annotations

import os

import pytest
from common import FIXTURES

from rdbscan.rdb.long_names import KEY_KEEP
from rdbscan.rdb.parser import DumpInfo, parse

rdbtools = pytest.importorskip("rdbtools")
from rdbtools import RdbCallback, RdbParser  # noqa: E402


def _k(key) -> bytes:
    """rdbtools hands integer-encoded keys over as ints; the key's bytes are their text."""
    return str(key).encode() if isinstance(key, int) else key


class Collect(RdbCallback):
    """Records (db, key) -> (type, element count) the way rdbtools sees them."""

    def __init__(self):
        super().__init__(string_escape=None)
        self.keys = {}
        self.db = 0
        self.cur = None

    def start_database(self, db_number):
        self.db = db_number

    def set(self, key, value, expiry, info):
        self.keys[(self.db, _k(key))] = (
            "string",
            len(value) if isinstance(value, bytes) else len(str(value)),
        )

    def _start(self, kind, key):
        self.cur = [kind, _k(key), 0]

    def _end(self):
        kind, key, n = self.cur
        self.keys[(self.db, key)] = (kind, n)

    def _inc(self, *_):
        self.cur[2] += 1

    def start_hash(self, key, length, expiry, info):
        self._start("hash", key)

    def hset(self, key, field, value):
        self._inc()

    def end_hash(self, key):
        self._end()

    def start_set(self, key, cardinality, expiry, info):
        self._start("set", key)

    def sadd(self, key, member):
        self._inc()

    def end_set(self, key):
        self._end()

    def start_list(self, key, expiry, info):
        self._start("list", key)

    def rpush(self, key, value):
        self._inc()

    def end_list(self, key, info):
        self._end()

    def start_sorted_set(self, key, length, expiry, info):
        self._start("zset", key)

    def zadd(self, key, score, member):
        self._inc()

    def end_sorted_set(self, key):
        self._end()

    def start_stream(self, key, listpacks_count, expiry, info):
        self._start("stream", key)

    def stream_listpack(self, key, entry_id, data):
        pass

    def end_stream(self, key, items, last_entry_id, cgroups):
        self.keys[(self.db, _k(key))] = ("stream", items)

    def start_module(self, key, module_name, expiry, info):
        if key is not None:  # rdbtools reports MODULE_AUX records with key None
            self.keys[(self.db, _k(key))] = ("module", 1)
        return False


def _rdb_le9():
    out = []
    for p in sorted(FIXTURES.glob("*/small/dump.rdb")) + sorted(FIXTURES.glob("public/**/*.rdb")):
        with open(p, "rb") as f:
            head = f.read(9)
        if head[:5] == b"REDIS" and head[5:9].isdigit() and int(head[5:9]) <= 9:
            out.append(p)
    return out


CASES = _rdb_le9()
KNOWN_RDBTOOLS_FAILURES = {
    "module.rdb",
    "redis_40_with_module.rdb",
    "corrupt_ziplist.rdb",
    "dump-module-2.rdb",
    "invalid_chksum_v8.rdb",
}


@pytest.mark.parametrize("path", CASES, ids=[str(p.relative_to(FIXTURES)) for p in CASES])
def test_agrees_with_rdbtools(path):
    cb = Collect()
    try:
        RdbParser(cb).parse(str(path))
    except Exception:
        if path.name in KNOWN_RDBTOOLS_FAILURES:
            pytest.skip("rdbtools itself cannot read this file")
        raise
    info = DumpInfo()
    with open(path, "rb") as f:
        ours = {
            (r.db, r.key): (r.type, r.length if r.type != "module" else 1)
            for r in parse(f, info, size=os.path.getsize(path))
        }
    # a key name longer than KEY_KEEP is read as its first bytes (docs/hostile-inputs.md)
    theirs = {(db, k[:KEY_KEEP]): v for (db, k), v in cb.keys.items()}
    assert ours == theirs


def test_crosscheck_covers_the_small_dumps():
    names = {p.parts[-3] for p in CASES if p.parent.name == "small"}
    assert names == {
        "redis-2.8.24",
        "redis-3.2.13",
        "redis-4.0.14",
        "redis-5.0.14",
        "redis-6.0.20",
        "redis-6.2.16",
    }
