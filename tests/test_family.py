"""keys.family and keys.plain_key: the loader's key families and plain-key flags
(tests/family_reference.py and their compiled twins) against the key_pattern macro and the regex they
stand in for, and the columns in loaded databases."""

from __future__ import annotations

import collections
import json
import random

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rdbwriter as W
from common import run_cli
from family_reference import FAMILY_MAX_KEY, PLAIN_KEY_REGEX, fast_family, plain_key
from hypothesis import given, settings
from hypothesis import strategies as st

from rdbscan.db import rows, store
from rdbscan.db.load import load
from rdbscan.db.macros import MACROS
from rdbscan.db.store import FAMILY_RULE

# Characters that decide key_pattern's paths: delimiters, braces, digits, '-', hex letters,
# a space, a newline, DEL, a marker character, and bytes that are not UTF-8.
ALPHABET = [
    b"a",
    b"f",
    b"z",
    b"Q",
    b":",
    b"#",
    b"{",
    b"}",
    b"-",
    b"_",
    b".",
    b"@",
    b" ",
    b"\n",
    b"\x7f",
    b"0",
    b"1",
    b"2",
    b"3",
    b"9",
    "\ue000".encode(),
    b"\xff",
]
KEYS = st.lists(st.sampled_from(ALPHABET), max_size=16).map(b"".join) | st.sampled_from(
    [
        b"",
        b":",
        b"user:1000:profile",
        b"x:20240131",
        b"x:{20240131}",
        b"x:20241301",
        b"x:19991232",
        b"x:21000101",
        b"{user:42}:cart",
        b"1:2:3",
        b"{{1",
        b"1}",
        b"a::1",
        b"n:" + b"7" * 30,
        b"k:" + b"9" * (FAMILY_MAX_KEY - 2),
        b"k:" + b"9" * (FAMILY_MAX_KEY - 1),
        b"a:",
        b"a::b",
        b"a_b:c_9",
        b"a",
        b"_a:b",
        b"0a:b",
        b"a:B",
        b"\xc3\xa9:a",
        b"ab:c\n",
        b"uid#0#7",
        b"uid#999#99",
        b"video_info#olympic#2020-08-29#1",
        b"a:#1",
        b"#",
        b"{uid#42}#3",
        # segments with a digit or '-' that are other placeholders, or none
        b"ratelimit:10.1.2.3",
        b"ip:255.255.255.255",
        b"ip:256.1.1.1",
        b"ip:01.2.3.4",
        b"ip:1.2.3",
        b"ip:1.2.3.4.5",
        b"ip:1.2.3.4x",
        b"ip:{10.0.0.1}:6379",
        b"ip:10.0.0.1#3",
        b"ip:-1.2.3.4",
        b"session:4d753fe1-a833-4a72-aea2-c02de72eb436",
        b"s:4D753FE1-A833-4A72-AEA2-C02DE72EB436",
        b"s:4d753fe1-a833-4a72-aea2-c02de72eb43",
        b"h:deadbeef",
        b"h:deadbee1",
        b"h:{deadbee1}",
        b"h:dead-bee1",
        b"t:abcdefghijklmno1",
        b"t:abcdefghijklmnop",
        b"t:0123456789012345",
        b"t:ab+/=_-cdefghij1",
        b"t:ab+/=_-cdefghi1.",
        b"d:2024-01-31T10",
        b"d:2024-01-31 10",
        b"d:2024-01-31T1",
        b"d:2024-01",
        b"d:2024-13",
        b"d:2024-01-32",
        b"d:1899-01-01",
        b"d:{2024-01-31}",
        b"n:-1",
        b"n:+2.5",
        b"n:1.",
        b"n:.5",
        b"n:1.2.3",
        b"n:--1",
        b"user-1:x",
        b"{-}:1}",
        b"}1:{",
    ]
)


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
    printable = [c for c in ALPHABET if c not in (b"\x7f", "\ue000".encode(), b"\xff")]
    keys = [
        b"".join(rnd.choice(printable) for _ in range(rnd.randint(0, 14))) for _ in range(100_000)
    ]
    keys += [b"user:%d:profile" % i for i in range(0, 10**9, 9_999_991)]
    keys += [b"x:%08d" % d for d in range(19_000_000, 21_100_000, 3_307)]  # dates and near misses
    # ids of other kinds and their near misses: hex, tokens, UUIDs, dates, numbers, addresses
    for alphabet, lengths in (
        (b"0123456789abcdefABCDEFgz-", (6, 40)),
        (b"0123456789aZ_+/=-.", (12, 20)),
        (b"0123456789-T .", (6, 14)),
    ):
        keys += [
            b"k:" + bytes(rnd.choice(alphabet) for _ in range(rnd.randint(*lengths)))
            for _ in range(30_000)
        ]
    keys += [
        b"s:%08x-%04x-%04x-%04x-%012x" % tuple(rnd.getrandbits(b) for b in (32, 16, 16, 16, 48))
        for _ in range(1_000)
    ]
    keys += [b"ip:%d.%d.%d.%d" % tuple(rnd.randint(0, 255) for _ in range(4)) for _ in range(1_000)]
    # e-mail addresses and near misses: local parts, labels, top-level domains of every kind
    mail = b"abz09._%+-@."
    keys += [
        b"m:"
        + bytes(rnd.choice(mail) for _ in range(rnd.randint(3, 14)))
        + rnd.choice([b".io", b".c", b""])
        for _ in range(20_000)
    ]
    keys += [b"m:u%d@ex-%d.example.org" % (i, i % 7) for i in range(1_000)]
    keys += [
        b"d:%d-%02d-%02d%s"
        % (
            rnd.randint(1890, 2110),
            rnd.randint(0, 13),
            rnd.randint(0, 33),
            rnd.choice([b"", b"T10", b" 23", b"T1"]),
        )
        for _ in range(5_000)
    ]
    given_ = _check(con, keys)
    assert given_ == len(keys) - sum(1 for k in keys if b"\n" in k)  # every printable key
    families = collections.Counter(fast_family(k) for k in keys[100_000:])  # the id-like ones
    assert sum(n for f, n in families.items() if f and "{id}" in f) > 10_000
    assert sum(n for f, n in families.items() if f and "{date}" in f) > 1_000
    assert sum(1 for k in keys if k.startswith(b"ip:") and fast_family(k) == "ip:{ip}") == 1_000
    assert sum(1 for k in keys if fast_family(k) == "m:{email}") > 1_000
    if rows.compiled is not None:
        assert [rows.compiled.fast_family(k) for k in keys] == [fast_family(k) for k in keys]


def _families_everywhere(con, keys: list[bytes]) -> list[str]:
    """The key_pattern macro's families of keys, once the reference and the compiled twin are
    checked to give the same."""
    got = _patterns(con, keys)
    assert [fast_family(k) for k in keys] == got
    if rows.compiled is not None:
        assert [rows.compiled.fast_family(k) for k in keys] == got
    return got


def test_address_families(con):
    """A segment that is an IPv4 address (four numbers 0-255, no leading zero) is {ip}, an e-mail
    address {email}: two million rate-limit keys `ratelimit:10.a.b.c` are one family, not two
    million, and so are `user:<e-mail>` keys."""
    want = {
        b"ratelimit:10.1.2.3": "ratelimit:{ip}",
        b"ratelimit:0.0.0.0": "ratelimit:{ip}",
        b"ratelimit:255.255.255.255": "ratelimit:{ip}",
        b"conn:{10.0.0.1}:6379": "conn:{{ip}}:{id}",
        b"blocked:192.168.1.20#2": "blocked:{ip}#{id}",
        b"ratelimit:256.1.2.3": "ratelimit:256.1.2.3",
        b"ratelimit:01.2.3.4": "ratelimit:01.2.3.4",
        b"ratelimit:1.2.3": "ratelimit:1.2.3",
        b"ratelimit:1.2.3.4.5": "ratelimit:1.2.3.4.5",
        b"v:1.2": "v:{id}",
        # e-mail addresses, with no digit too (a key holding `@` takes no fast path)
        b"user:alice@example.com": "user:{email}",
        b"user:bob.smith+tag@mail.example.co.uk:cart": "user:{email}:cart",
        b"user:{a_1@x-y.io}": "user:{{email}}",
        b"user:7@example.com#2": "user:{email}#{id}",
        b"user:alice@example": "user:alice@example",
        b"user:alice@example.c": "user:alice@example.c",
        b"user:alice@example.c0m": "user:alice@example.c0m",
        b"user:@example.com": "user:@example.com",
        b"user:a@b@example.com": "user:a@b@example.com",
        b"user:a@.example.com": "user:a@.example.com",
        b"user:a@example..com": "user:a@example..com",
        b"user:a b@example.com": "user:a b@example.com",
        b"user@example.com:1": "{email}:{id}",
    }
    assert _families_everywhere(con, list(want)) == list(want.values())


def test_split_key_families(con):
    """`#` bounds segments whatever the delimiters: the shards of a split key share a family."""
    keys = [b"uid#0#0", b"uid#999#99", b"video_info#olympic#2020-08-29#1", b"{uid#42}#3", b"a#b:7"]
    want = [
        "uid#{id}#{id}",
        "uid#{id}#{id}",
        "video_info#olympic#{date}#{id}",
        "{uid#{id}}#{id}",
        "a#b:{id}",
    ]
    assert _families_everywhere(con, keys) == want
    texts = [k.decode() for k in keys]
    assert [
        p
        for (p,) in con.execute(
            "SELECT key_pattern(unnest($k), delimiters := '/')", {"k": texts}
        ).fetchall()
    ] == want[:4] + ["a#b:7"]


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(keys=st.lists(KEYS, min_size=1, max_size=40))
def test_fast_family_is_key_pattern_generated(con, keys):
    _check(con, keys)


@pytest.mark.slow
@pytest.mark.skipif(rows.compiled is None, reason="compiled batch not built")
@settings(max_examples=2000, deadline=None)
@given(key=KEYS | st.binary(max_size=20))
def test_compiled_twins(key):
    assert rows.compiled.fast_family(key) == fast_family(key)
    assert rows.compiled.plain_key(key) == plain_key(key)


@pytest.mark.slow
def test_family_and_plain_key_columns_in_loaded_databases(fixtures_db):
    """Every fixture's keys: family = key_pattern(key) and plain_key = the regex, whether the
    loader (compiled) or the INSERT (the fallback, and the pure-Python path) set them."""
    c = duckdb.connect(fixtures_db, read_only=True)
    keys, wrong, nulls = c.execute(
        "SELECT count(*), count(*) FILTER (WHERE family IS DISTINCT FROM key_pattern(key)), "
        "count(*) FILTER (WHERE family IS NULL) FROM keys"
    ).fetchone()
    assert keys > 1000 and (wrong, nulls) == (0, 0)
    # both ways are exercised: keys the loader handles and keys left to the macro
    texts = [k for (k,) in c.execute("SELECT key_bytes FROM keys").fetchall()]
    loader = sum(fast_family(k) is not None for k in texts)
    assert 0 < loader < len(texts)
    keys, wrong, plain = c.execute(
        f"SELECT count(*), count(*) FILTER (WHERE plain_key IS DISTINCT FROM "
        f"regexp_full_match(key, '{PLAIN_KEY_REGEX}')), count(*) FILTER (WHERE plain_key) "
        f"FROM keys"
    ).fetchone()
    assert wrong == 0 and 0 < plain < keys  # fixtures hold keys of both kinds
    assert [
        plain_key(k) for (k,) in c.execute("SELECT key_bytes FROM keys ORDER BY ALL").fetchall()
    ] == [f for (f,) in c.execute("SELECT plain_key FROM keys ORDER BY key_bytes").fetchall()]


def _regex_flags(con, keys: list[bytes]) -> list[bool]:
    """What the INSERT computes for a key the loader leaves null (DuckDB's RE2)."""
    texts = [k.decode("utf-8", "backslashreplace") for k in keys]
    con.register("ks", pa.table({"i": list(range(len(texts))), "k": texts}))
    try:
        return [
            f
            for _, f in con.execute(
                f"SELECT i, regexp_full_match(k, '{PLAIN_KEY_REGEX}') FROM ks ORDER BY i"
            ).fetchall()
        ]
    finally:
        con.unregister("ks")


def test_plain_key_is_the_regex(con):
    rnd = random.Random(2030)
    alphabet = [
        b"a",
        b"q",
        b"z",
        b"0",
        b"9",
        b"_",
        b":",
        b"A",
        b"-",
        b".",
        b" ",
        b"\xff",
        "\u00e9".encode(),
    ]
    keys = [b"".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 8))) for _ in range(50_000)]
    keys += [b"user:%d:profile" % i for i in range(1000)] + [b"user", b"user:", b":user", b"User:1"]
    flags = [plain_key(k) for k in keys]
    assert flags == _regex_flags(con, keys)
    assert 1000 < sum(flags) < len(keys) - 1000  # both answers are common
    assert (
        plain_key(b"user:1000:profile"),
        plain_key(b"user"),
        plain_key(b"user:1:Profile"),
        plain_key(b"1user:x"),
        plain_key(b"a::b"),
    ) == (True, False, False, False, True)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(keys=st.lists(KEYS, min_size=1, max_size=40))
def test_plain_key_is_the_regex_generated(con, keys):
    assert [plain_key(k) for k in keys] == _regex_flags(con, keys)


def _dump(tmp_path, name: str, keys: list[bytes]) -> str:
    path = tmp_path / name
    path.write_bytes(W.rdb(b"\xfe\x00" + b"".join(W.key(0, k, W.string(b"1")) for k in keys)))
    return str(path)


def _families(rep: dict) -> dict:
    return {p["pattern"]: p["keys"] for p in rep["patterns"]["items"]}


OLD_RULE_KEYS = [b"ratelimit:10.0.0.1", b"ratelimit:10.0.0.2", b"user:a@example.com", b"user:1"]
# what this rule makes of them, and what the older rule had stored
NOW = {"ratelimit:{ip}": 2, "user:{email}": 1, "user:{id}": 1}
BEFORE = {"ratelimit:10.0.0.1": 1, "ratelimit:10.0.0.2": 1, "user:a@example.com": 1, "user:{id}": 1}


def test_a_report_over_a_database_of_the_older_family_rule_shows_this_rules_families(tmp_path):
    """A database an rdbscan of the older rule wrote (IPv4 and e-mail segments kept as they are,
    no `family_rule` in rdbscan_meta), reported without a load into it: the report reads the
    families this rule gives (a TEMP view `keys`, database.show_families_again), and the
    database is left as it was."""
    db = str(tmp_path / "old.duckdb")
    assert all(r.complete for r in load([_dump(tmp_path, "a.rdb", OLD_RULE_KEYS)], db))
    with duckdb.connect(db) as c:  # what the older rule stored
        c.execute("UPDATE key_rows SET family = key WHERE key LIKE 'ratelimit:%' OR key LIKE '%@%'")
        c.execute("DELETE FROM rdbscan_meta WHERE name = 'family_rule'")
    res = run_cli("report", db, "-f", "json")
    assert res.exit_code == 0, res.output
    assert _families(json.loads(res.stdout)) == NOW
    res = run_cli("sql", db, "SELECT family, count(*) FROM keys GROUP BY 1 ORDER BY 1", "-f", "csv")
    assert res.stdout.splitlines()[1:] == [f"{f},{n}" for f, n in sorted(NOW.items())]
    with duckdb.connect(db, read_only=True) as c:  # nothing written
        stored = dict(c.execute("SELECT family, count(*) FROM keys GROUP BY family").fetchall())
        meta = c.execute("SELECT value FROM rdbscan_meta WHERE name = 'family_rule'").fetchall()
    assert (stored, meta) == (BEFORE, [])
    # a database of this rule is read as it is: the stored families, even where they differ
    with duckdb.connect(db) as c:
        c.execute("INSERT INTO rdbscan_meta VALUES ('family_rule', ?)", [str(FAMILY_RULE)])
    res = run_cli("report", db, "-f", "json")
    assert _families(json.loads(res.stdout)) == BEFORE


def test_a_dataset_of_the_older_family_rule_is_read_with_this_rules_families(tmp_path):
    """A Parquet dataset an rdbscan of the older rule wrote: its marker has no `family_rule` and
    its keys files the older families; its `keys` view works out this rule's (report and diff
    alike, dataset._view_sql).  A dataset written now records the rule and is read as stored."""
    ds = tmp_path / "ds"
    res = run_cli("load", _dump(tmp_path, "a.rdb", OLD_RULE_KEYS), "--parquet", str(ds))
    assert res.exit_code == 0, res.output
    marker = ds / "_rdbscan_dataset.json"
    meta = json.loads(marker.read_text())
    assert meta["family_rule"] == FAMILY_RULE
    [part] = list((ds / "keys").rglob("*.parquet"))
    table = pq.read_table(part)
    keys = table.column("key").to_pylist()
    stored = table.column("family").to_pylist()
    older = [k if k.startswith("ratelimit:") or "@" in k else f for k, f in zip(keys, stored)]
    i = table.schema.get_field_index("family")
    pq.write_table(table.set_column(i, "family", pa.array(older, table.schema.field(i).type)), part)
    res = run_cli("report", str(ds), "-f", "json")
    assert res.exit_code == 0, res.output
    assert _families(json.loads(res.stdout)) == BEFORE  # the rule recorded: read as stored
    del meta["family_rule"]
    marker.write_text(json.dumps(meta))
    res = run_cli("report", str(ds), "-f", "json")
    assert res.exit_code == 0, res.output
    assert _families(json.loads(res.stdout)) == NOW


def test_a_load_into_a_database_of_the_older_family_rule_updates_its_families(
    tmp_path, monkeypatch
):
    """A database whose families an rdbscan of the older rule stored (IPv4 addresses kept as
    they are, no `family_rule` in rdbscan_meta) gets them again on the next load into it: the
    snapshots before and after share `ratelimit:{ip}` (store.Store._update_families)."""

    def dump(name: str, keys: list[bytes]):
        path = tmp_path / name
        path.write_bytes(W.rdb(b"\xfe\x00" + b"".join(W.key(0, k, W.string(b"1")) for k in keys)))
        return str(path)

    db = str(tmp_path / "old.duckdb")
    first = dump("a.rdb", [b"ratelimit:10.0.0.1", b"ratelimit:10.0.0.2", b"user:1", b"v:1.2.3"])
    assert all(r.complete for r in load([first], db))
    with duckdb.connect(db) as c:
        assert c.execute(
            "SELECT value FROM rdbscan_meta WHERE name = 'family_rule'"
        ).fetchall() == [(str(FAMILY_RULE),)]
        # what the older rule stored
        c.execute("UPDATE key_rows SET family = key WHERE key LIKE 'ratelimit:%'")
        c.execute("DELETE FROM rdbscan_meta WHERE name = 'family_rule'")
    second = dump("b.rdb", [b"ratelimit:10.0.0.3", b"user:2"])
    # an UPDATE per 3 rows (store.UPDATE_FAMILIES_ROWS), as over millions of keys
    monkeypatch.setattr(store, "UPDATE_FAMILIES_ROWS", 3)
    assert all(r.complete for r in load([second], db))
    with duckdb.connect(db, read_only=True) as c:
        got = c.execute("SELECT dump_id, key, family FROM keys ORDER BY dump_id, key").fetchall()
        meta = c.execute("SELECT value FROM rdbscan_meta WHERE name = 'family_rule'").fetchall()
    assert got == [
        (1, "ratelimit:10.0.0.1", "ratelimit:{ip}"),
        (1, "ratelimit:10.0.0.2", "ratelimit:{ip}"),
        (1, "user:1", "user:{id}"),
        (1, "v:1.2.3", "v:1.2.3"),
        (2, "ratelimit:10.0.0.3", "ratelimit:{ip}"),
        (2, "user:2", "user:{id}"),
    ]
    assert meta == [(str(FAMILY_RULE),)]
