"""keys.family: the loader's key families (rdbscan/family.py and its compiled twin) against the
key_pattern macro they stand in for, and the column in loaded databases."""
from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rdbscan import speedups
from rdbscan.family import FAMILY_MAX_KEY, fast_family
from rdbscan.load import load
from rdbscan.macros import MACROS

FIXTURES = Path(__file__).parent / "fixtures"
# Characters that decide key_pattern's paths: delimiters, braces, digits, '-', hex letters,
# a space, a newline, DEL, a marker character, and bytes that are not UTF-8.
ALPHABET = [b"a", b"f", b"z", b"Q", b":", b"{", b"}", b"-", b"_", b".", b" ", b"\n", b"\x7f",
            b"0", b"1", b"2", b"3", b"9", "\ue000".encode(), b"\xff"]
KEYS = st.lists(st.sampled_from(ALPHABET), max_size=16).map(b"".join) | st.sampled_from([
    b"", b":", b"user:1000:profile", b"x:20240131", b"x:{20240131}", b"x:20241301",
    b"x:19991232", b"x:21000101", b"{user:42}:cart", b"1:2:3", b"{{1", b"1}", b"a::1",
    b"n:" + b"7" * 30, b"k:" + b"9" * (FAMILY_MAX_KEY - 2), b"k:" + b"9" * (FAMILY_MAX_KEY - 1)])


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect()
    for m in MACROS:
        c.execute(m)
    yield c
    c.close()


def _patterns(con, keys: list[bytes]) -> list[str]:
    texts = [k.decode("utf-8", "backslashreplace") for k in keys]
    con.register("ks", pa.table({"i": list(range(len(texts))), "k": texts}))
    try:
        return [p for _, p in con.execute("SELECT i, key_pattern(k) FROM ks ORDER BY i").fetchall()]
    finally:
        con.unregister("ks")


def _check(con, keys: list[bytes]) -> int:
    """Every family the Python twin gives equals the macro's; returns how many it gave."""
    given_ = 0
    for k, want in zip(keys, _patterns(con, keys)):
        got = fast_family(k)
        if got is not None:
            assert got == want, k
            given_ += 1
    return given_


def test_fast_family_is_key_pattern(con):
    rnd = random.Random(2026)
    keys = [b"".join(rnd.choice(ALPHABET[:12] + ALPHABET[13:18]) for _ in range(rnd.randint(0, 14)))
            for _ in range(100_000)]
    keys += [b"user:%d:profile" % i for i in range(0, 10**9, 9_999_991)]
    keys += [b"x:%08d" % d for d in range(19_000_000, 21_100_000, 3_307)]   # dates and near misses
    given_ = _check(con, keys)
    assert given_ > 20_000   # the fast path is taken, not only refused


@settings(max_examples=400, deadline=None)
@given(keys=st.lists(KEYS, min_size=1, max_size=40))
def test_fast_family_is_key_pattern_generated(con, keys):
    _check(con, keys)


@pytest.mark.skipif(speedups.compiled is None, reason="compiled speedups not built")
@settings(max_examples=2000, deadline=None)
@given(key=KEYS | st.binary(max_size=20))
def test_compiled_family_twin(key):
    assert speedups.compiled.fast_family(key) == fast_family(key)


def test_family_column_is_key_pattern_in_loaded_databases(tmp_path):
    """Every fixture's keys: family = key_pattern(key), whether the loader or the INSERT's
    fallback worked it out."""
    dumps = sorted(str(p) for p in FIXTURES.rglob("*") if p.suffix in (".rdb", ".aof"))
    db = str(tmp_path / "f.duckdb")
    load(dumps, db)
    c = duckdb.connect(db, read_only=True)
    keys, wrong, nulls = c.execute(
        "SELECT count(*), count(*) FILTER (WHERE family IS DISTINCT FROM key_pattern(key)), "
        "count(*) FILTER (WHERE family IS NULL) FROM keys").fetchone()
    assert keys > 1000 and (wrong, nulls) == (0, 0)
    # both ways are exercised: keys the loader handles and keys left to the macro
    texts = [k for (k,) in c.execute("SELECT key_bytes FROM keys").fetchall()]
    loader = sum(fast_family(k) is not None for k in texts)
    assert 0 < loader < len(texts)
