"""The report's shortcuts give the results of the computations they skip: key_pattern's fast paths
against its regex passes, the naming rules' fast path (with and without keys.plain_key) against
report_truth, big_keys_top (a database's form) and big_keys_top_grouped (a dataset's) against a
ranking of every key (with many ties, and over every fixture dump), slots_by_memory's largest
keys of the slots it lists against the rows, strings_to_hashes' per-family parents against
per-key parents, rfamilies' per-TTL grouping against figures computed from the rows."""

from __future__ import annotations

import collections
import random
import shutil
import statistics

import duckdb
import pyarrow as pa
import pytest
from family_reference import plain_key
from report_truth import MKey, manifest, naming_violations

from rdbscan.db import macros
from rdbscan.db.load import load
from rdbscan.rdb import constants as C
from rdbscan.reports import report as rpt
from rdbscan.reports.engine import querylib, relations
from rdbscan.reports.engine.database import open_database

DELIMITER_SETS = [":", ":./", ".|", "-", ":-", "/", "#|", "_", " ", "a", ":{"]


def _keys_for_patterns(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)

    def hexs(k: int) -> str:
        return "".join(rnd.choice("0123456789abcdef") for _ in range(k))

    def seg() -> str:
        return rnd.choice(
            [
                "user",
                "Session",
                "",
                "x",
                "{",
                "}",
                "a b",
                "é",
                "deadbeef",
                "DEADBEEFcafe",
                "\ue000",
                str(rnd.randint(0, 10 ** rnd.randint(1, 12))),
                "20240131",
                "12345678",
                "2024-01-31",
                "2024-01",
                "1999-12-31T10",
                hexs(rnd.randint(5, 40)),
                hexs(8).upper(),
                hexs(7) + "g",
                "%08x-%04x-%04x-%04x-%012x"
                % tuple(rnd.getrandbits(b) for b in (32, 16, 16, 16, 48)),
                "abcdefab-abcd-abcd-abcd-abcdefabcdef",
                "ab12345678cd",
                "tok3nABCDEFGHIJKLMNOP",
                "1234-5678-9012-3456",
                "-1",
                "+5",
                "3.5",
                "ff_00",
                # 8 digits: dates and their near misses (month, day, century), ids
                "19991231",
                "20000101",
                "19991301",
                "20241200",
                "20240132",
                "20240100",
                "19000229",
                "18991231",
                "21000101",
                "10000000",
                "%08d" % rnd.randint(0, 10**8 - 1),
                "20%02d%02d%02d" % (rnd.randint(0, 99), rnd.randint(0, 14), rnd.randint(0, 40)),
            ]
        )

    keys = set()
    while len(keys) < n:
        parts = []
        for _ in range(rnd.randint(1, 5)):
            s = seg()
            parts.append(
                ("{" if rnd.random() < 0.1 else "") + s + ("}" if rnd.random() < 0.1 else "")
            )
        seps = [rnd.choice(":./|-#_ ") for _ in parts]
        same = rnd.random() < 0.7
        keys.add("".join(p + (seps[0] if same else seps[i]) for i, p in enumerate(parts))[:-1])
    return sorted(keys)


@pytest.mark.slow
def test_key_pattern_fast_paths_match_the_passes():
    con = duckdb.connect()
    macros.create_macros(con)
    con.execute(
        "CREATE MACRO key_pattern_passes(key, delimiters) AS "
        + macros._split_marked(macros._key_pattern_passes_sql())
    )
    con.register("corpus", pa.table({"key": _keys_for_patterns(8000, 1)}))
    con.execute("CREATE TABLE k AS SELECT * FROM corpus")
    sql = macros._split_marked(macros._key_pattern_sql())
    fast1 = sql.split(" THEN ")[0][len("CASE WHEN ") :]  # the conditions of the fast paths
    fast2 = sql.split(" THEN ")[1].split(" WHEN ", 1)[1]
    taken = [0, 0]
    for d in DELIMITER_SETS:
        diff = con.execute(
            "SELECT key, key_pattern(key, delimiters := $d) AS fast, key_pattern_passes(key, $d) AS passes "
            "FROM k WHERE fast IS DISTINCT FROM passes LIMIT 5",
            {"d": d},
        ).fetchall()
        assert diff == [], (d, diff)
        lit = "'" + d.replace("'", "''") + "'"  # a constant, for the regexes to compile once
        n1, n2 = con.execute(
            f"SELECT count(*) FILTER (WHERE {fast1}), count(*) FILTER (WHERE NOT ({fast1}) AND {fast2}) "
            "FROM k".replace("delimiters", lit)
        ).fetchall()[0]
        taken[0] += n1
        taken[1] += n2
    assert taken[0] > 1000 and taken[1] > 1000, taken  # both fast paths were exercised


@pytest.fixture()
def keys_db(tmp_path):
    """A database of a loaded fixture whose `keys` are replaced by the rows given."""
    m = manifest("redis-7.0.15/small")
    base = tmp_path / "base.duckdb"
    load([str(m.dump)], str(base))

    def make(rows: list[dict]) -> str:
        db = tmp_path / f"k{len(list(tmp_path.iterdir()))}.duckdb"
        shutil.copy(base, db)
        con = duckdb.connect(str(db))
        dump_id = con.execute("SELECT min(dump_id) FROM dumps").fetchall()[0][0]
        rows = [_stored(r) for r in rows]
        cols = [
            "dump_id",
            "db",
            "key",
            "key_raw",
            "rdb_type",
            "encoding_id",
            "module_type",
            "length",
            "memory_bytes",
            "slot",
            "plain_key",
            "expire_at_ms",
        ]
        con.register(
            "new_rows",
            pa.table(
                {c: [r.get(c, dump_id if c == "dump_id" else None) for r in rows] for c in cols}
            ),
        )
        con.execute("DELETE FROM key_rows")
        con.execute(
            f"INSERT INTO key_rows ({', '.join(cols)}, family) "
            f"SELECT {', '.join(cols)}, key_pattern(key) FROM new_rows"
        )
        con.close()
        return str(db)

    return make


def _stored(row: dict) -> dict:
    """A row given as key_bytes / type / encoding, as the key_rows columns the view `keys`
    computes those from."""
    row = dict(row)
    raw = row.pop("key_bytes", None)
    assert row.pop("key_length", len(row["key"].encode())) == len(raw or row["key"].encode())
    row["key_raw"] = raw if raw is not None and raw != row["key"].encode() else None
    type_name = row.pop("type")
    if "rdb_type" not in row:  # the first id of the type unless given
        row["rdb_type"] = min(t for t, name in C.TYPE_NAMES.items() if name == type_name)
    enc = row.pop("encoding")
    row["encoding_id"] = C.ENCODING_IDS.get(enc, C.MODULE_ENCODING_ID)
    row["module_type"] = None if enc in C.ENCODING_IDS else enc
    return row


def _naming_rows(raw_keys: list[bytes], with_plain: bool) -> list[dict]:
    return [
        {
            "db": i % 2,
            "key": raw.decode("utf-8", "backslashreplace"),
            "key_bytes": raw,
            "key_length": len(raw),
            "type": "string",
            "encoding": "raw",
            "length": 1,
            "memory_bytes": 100 + i,
            "slot": 0,
            "plain_key": plain_key(raw) if with_plain else None,
        }
        for i, raw in enumerate(raw_keys)
    ]


@pytest.mark.parametrize("with_plain", [True, False], ids=["plain_key", "regex"])
def test_naming_fast_path(keys_db, with_plain):
    """With keys.plain_key as the loader stores it, and without (the regex in its place)."""
    raw = [
        b"user:1",
        b"user:2:profile",
        b"user_3:x",
        b"ab:cd:ef",
        b"x:",
        b"data:1",
        b"data_7:x",
        b"tmp12:x",
        b"temp:x",
        b"test1:y",
        b"foo:bar",
        b"default9:z",
        b"abcdefghijklmnopqrstuvwxyz:0123",
        b"k:" + b"a" * 130,
        b"user:" + b"b" * 40,
        b"data:" + b"c" * 40,
        b"cart:" + b"d" * 40,
        # mixed-delimiters: root `cart` mostly `:`, root `shop` mostly `.`
        b"cart:1",
        b"cart:2",
        b"cart:3",
        b"cart.4",
        b"cart/5:6",
        b"shop.1",
        b"shop.2",
        b"shop:3",
        # fast keys whose family starts with a placeholder (checked key by key): hex ids, a
        # token; root `deadbeef12` is mostly `.`, so its `:` keys break mixed-delimiters
        b"deadbeef12:x",
        b"deadbeef12:y",
        b"deadbeef12.z",
        b"deadbeef12.w",
        b"deadbeef12.v",
        b"abcdef0123456789abcdef:y",
        b"ab12345678cd:z",
        # near keys (a fast key but for `-` after its first segment): disallowed-chars and the
        # rules of a fast key; `shop` is mostly `.`, `data` generic, one too long
        b"session:4d753fe1-a833-4a72-aea2-c02de72eb436",
        b"user:a-b",
        b"cart:-",
        b"shop:a-b:c",
        b"data:x-1",
        b"k:" + b"a-" * 70,
        # not near: `-` in the first segment, another candidate, uppercase, no delimiter
        b"user-2:x",
        b"a-b",
        b"user:a-b.c",
        b"user:A-b",
        # a `.` or `/` inside an id-like value is no delimiter: none of these is mixed
        b"ratelimit:10.0.0.1",
        b"ratelimit:10.0.0.2",
        b"price:3.5",
        b"tok:ab/cdefghijklmnop1",
        # roots `tie`, `eit`: `:` and `.` as often; the tie goes to `:` (the last in byte order)
        b"tie:1",
        b"tie.2",
        b"eit.1",
        b"eit:2",
        # keys off the fast path
        b"User:1",
        b"user-1:x",
        b"1user:x",
        b"user",
        b"us er:x",
        b"{tag}:1",
        b"x{y:1",
        b"a\tb:1",
        b"k:\xff\xfe",
        b"\xc3\xa9t\xc3\xa9:1",
        b"user:1.2",
        b"user:*",
        b"it's:1",
        b"a|b",
        b"Data:2",
        # one family of three keys per rule: naming_families' example is the first of them
        b"Data:4",
        b"Data:3",
    ]
    db = keys_db(_naming_rows(raw, with_plain))
    con = open_database(db)
    try:
        rpt.build_report(con, rpt.ReportOptions(sections=("naming",)))
        got: dict[str, set] = {}
        groups: dict[tuple, list] = {}
        for db_, key, rule, pattern, mem in con.execute(
            "SELECT db, key, rule, pattern, memory_bytes FROM rnaming"
        ).fetchall():
            got.setdefault(rule, set()).add((db_, key))
            groups.setdefault((pattern, rule), []).append((key, mem))
        q = querylib.get_query("naming_families")
        families = {top: querylib.run_dicts(con, q, {"top": top}) for top in (0, 3)}
    finally:
        con.close()
    # naming_families: per family and rule, keys, memory, the first key in byte order; the top
    # 3 by keys, memory, then family and rule
    want_families = sorted(
        (
            {
                "pattern": pattern,
                "rule": rule,
                "keys": len(ks),
                "memory_bytes": sum(m for _, m in ks),
                "example": min(k for k, _ in ks),
            }
            for (pattern, rule), ks in groups.items()
        ),
        key=lambda f: (-f["keys"], -f["memory_bytes"], f["pattern"], f["rule"]),
    )
    assert families == {0: want_families, 3: want_families[:3]}
    assert len(want_families) > 10
    mkeys = [
        MKey(
            db=i % 2,
            raw=r,
            type="string",
            encoding="raw",
            length=1,
            expire_at_ms=None,
            memory_usage=None,
            slot=None,
            value=None,
            lfu_freq=None,
            lru_idle_s=None,
        )
        for i, r in enumerate(raw)
    ]
    want = naming_violations(mkeys)
    for rule, idents in want.items():
        assert got.get(rule, set()) == {
            (d, r.decode("utf-8", "backslashreplace")) for d, r in idents
        }, rule


def test_naming_delimiter_set_shortcut(keys_db):
    """rnaming_dset (the candidate delimiters a key holds, sorted) tests each candidate with
    contains() rather than listing every match: the same sets as the list of every match, for
    each candidate set and keys holding none, one or several of them."""
    keys = _keys_for_patterns(3000, 5) + ["", "a:b.c", "a::b", "x.y.z", "q|#|#", "é:é.é"]
    con = open_database(keys_db(_naming_rows([k.encode() for k in keys[:50]], True)))
    try:
        rpt.build_report(con, rpt.ReportOptions(sections=("naming",)))  # creates the macros
        con.execute("CREATE TEMP TABLE corpus AS SELECT unnest($k) AS key", {"k": keys}).fetchall()
        for cands in (":./|#", ":", "-_ ", "é:."):
            rows = con.execute(
                "SELECT key, rnaming_dset(key, false, ':', $c) AS got, "
                "array_to_string(list_sort(list_distinct(regexp_extract_all(key, "
                "'[' || delim_class($c) || ']'))), '') AS want FROM corpus",
                {"c": cands},
            ).fetchall()
            assert [r for r in rows if r[1] != r[2]] == [], cands
            assert len({r[2] for r in rows if len(r[2]) > 1}) > 1 or len(cands) == 1, cands
    finally:
        con.close()


def test_big_keys_top_with_ties(keys_db):
    rnd = random.Random(3)
    rows = []
    for i in range(3000):
        t = rnd.choice(["string", "string", "hash", "list", "stream"])
        rows.append(
            {
                "db": rnd.randint(0, 1),
                "key": f"k:{rnd.randint(0, 99999):05d}:{i}",
                "type": t,
                "encoding": "x",
                "length": None
                if t == "stream" and rnd.random() < 0.3
                else rnd.choice([1, 2, 3, 7]),
                "memory_bytes": rnd.choice([56, 72, 72, 88, None]),
                "slot": 0,
            }
        )
    db = keys_db(rows)
    con = open_database(db)
    try:
        top = rpt.build_report(con, rpt.ReportOptions(sections=("big_keys",), top=7))["big_keys"]
    finally:
        con.close()
    got, grouped, want = _top(db, 7)
    assert got == grouped == want == top["top_by_memory"] + top["top_by_length"]
    for ranking, got_rows in (("memory", top["top_by_memory"]), ("length", top["top_by_length"])):
        for t in {r["type"] for r in rows}:
            if ranking == "length" and t == "string":
                continue
            ks = [r for r in rows if r["type"] == t]
            big = 2**62

            def by(r):
                mem, ln = r["memory_bytes"] or 0, r["length"]
                ln_key = -ln if ln is not None else big  # NULL lengths last
                return (-mem, ln_key, r["key"]) if ranking == "memory" else (ln_key, -mem, r["key"])

            want = [(r["key"], r["memory_bytes"] or 0, r["length"]) for r in sorted(ks, key=by)[:7]]
            got = [(r["key"], r["memory_bytes"], r["length"]) for r in got_rows if r["type"] == t]
            assert [r["rank"] for r in got_rows if r["type"] == t] == list(range(1, len(want) + 1))
            assert got == want, (ranking, t)


def _string_rows(with_plain: bool) -> list[dict]:
    """String keys for strings_to_hashes: families whose parent is literal (`cfg:web:{id}`,
    `sess:ag:x`), families whose parent holds an id (`user:{id}:name`), keys off plain_key."""
    rnd = random.Random(11)
    keys = set()
    for _ in range(12000):
        f = rnd.random()
        if f < 0.35:
            keys.add(f"cfg:{rnd.choice(['web', 'api', 'db'])}:{rnd.randint(0, 400)}")
        elif f < 0.6:
            keys.add(f"user:{rnd.randint(0, 300)}:{rnd.choice(['name', 'age', 'mail', 'city'])}")
        elif f < 0.7:
            keys.add(f"sess:{rnd.choice('abc')}{rnd.choice('gh')}:{rnd.choice('xyz')}")
        elif f < 0.8:
            keys.add(f"deadbeef{rnd.randint(10, 30)}:{rnd.randint(0, 5)}")  # placeholder parent
        elif f < 0.9:
            keys.add(f"Mixed:{rnd.randint(0, 40)}:{rnd.randint(0, 9)}")  # not plain
        else:
            keys.add(f"x{rnd.randint(0, 20)}:" + "y" * rnd.randint(0, 70))  # long fields
    rows = []
    for k in sorted(keys):
        n = rnd.choice([1, 5, 20, 60, 70])
        rows.append(
            {
                "db": rnd.choice([0, 0, 1]),
                "key": k,
                "type": "string",
                "encoding": "raw",
                "length": n,
                "memory_bytes": 50 + n,
                "slot": 0,
                "expire_at_ms": 1900000000000 if rnd.random() < 0.1 else None,
                "plain_key": plain_key(k.encode()) if with_plain else None,
            }
        )
    return rows


def test_strings_to_hashes_per_family(keys_db):
    """Plain keys whose family fixes their parent are counted per family: the same rows as
    computing every key's parent (plain_key null), and the counts of a literal parent."""
    q = querylib.get_query("strings_to_hashes")
    got = {}
    for with_plain in (True, False):
        rows = _string_rows(with_plain)
        con = open_database(keys_db(rows))
        try:
            values = {"top": 0, "delimiters": ":"}
            relations.prepare(con, values, needs=relations.relations_used(q))
            got[with_plain] = querylib.run_dicts(con, q, values)
        finally:
            con.close()
    assert got[True] == got[False]
    fams = {r["family"]: r for r in got[True]}
    assert {"cfg:web:*", "sess:ag:*", "user:{id}:*"} <= set(fams)  # both ways give rows
    # cfg:web: one hash per db, fields = its string keys without TTL, values within 64 bytes
    want = [
        r
        for r in rows
        if r["key"].startswith("cfg:web:") and r["expire_at_ms"] is None and r["length"] <= 64
    ]
    assert (fams["cfg:web:*"]["hashes"], fams["cfg:web:*"]["keys"]) == (
        len({r["db"] for r in want}),
        len(want),
    )
    # its estimate: per db, a listpack of the fields (`web:` cut off) and values, 2 bytes of
    # overhead per entry, 7 bytes of header
    con = duckdb.connect()
    macros.create_macros(con)
    lp = {}
    for r in want:
        lp[r["db"]] = lp.get(r["db"], 7) + len(r["key"]) - len("cfg:web:") + r["length"] + 4
    est = sum(
        con.execute("SELECT compact_memory_estimate(7, ?)", [b]).fetchone()[0] for b in lp.values()
    )
    assert fams["cfg:web:*"]["estimated_bytes"] == est
    assert fams["cfg:web:*"]["memory_bytes"] == sum(r["memory_bytes"] for r in want)


def test_ttl_families_match_the_keys(keys_db):
    """rfamilies aggregates per family, type and TTL-or-not first: every family with keys
    without TTL (query ttl_families) against the figures computed here from the rows: counts,
    memory, memory without TTL, an example among the largest keys without TTL, the median TTL
    still to run at snapshot time."""
    probe = duckdb.connect(
        keys_db(
            [
                {
                    "db": 0,
                    "key": "p",
                    "type": "string",
                    "encoding": "raw",
                    "length": 1,
                    "memory_bytes": 1,
                    "slot": 0,
                }
            ]
        ),
        read_only=True,
    )
    snap = probe.execute("SELECT ctime * 1000 FROM dumps").fetchone()[0]  # the snapshot time
    probe.close()
    rnd = random.Random(8)
    rows = []
    for i in range(4000):
        fam = rnd.choice(["a", "b", "c", "d", "e"])
        ttl = rnd.random() < {"a": 0.0, "b": 0.5, "c": 0.9, "d": 0.3, "e": 1.0}[fam]
        rows.append(
            {
                "db": 0,
                "key": f"{fam}:{i}",
                "type": rnd.choice(["string", "hash"]),
                "encoding": "x",
                "length": 1,
                # the keys with a TTL are the largest: the example must skip them
                "memory_bytes": rnd.choice([80, 96]) if ttl else rnd.choice([40, 56, 56, 72]),
                "slot": 0,
                "expire_at_ms": snap + rnd.randint(-(10**6), 10**9) if ttl else None,
            }
        )
    con = open_database(keys_db(rows))
    try:
        q = querylib.get_query("ttl_families")
        values = {"top": 0}
        relations.prepare(con, values, needs=relations.relations_used(q))
        got = {r["pattern"]: r for r in querylib.run_dicts(con, q, values)}
        assert con.execute("SELECT snapshot_ms FROM rsnap").fetchone()[0] == snap
    finally:
        con.close()
    fams: dict[str, list] = {}
    for r in rows:
        fams.setdefault(r["key"].split(":")[0] + ":{id}", []).append(r)
    assert set(got) == {"a:{id}", "b:{id}", "c:{id}", "d:{id}"}  # e: every key has a TTL
    for fam, ks in fams.items():
        if fam not in got:
            continue
        g = got[fam]
        no_ttl = [r for r in ks if r["expire_at_ms"] is None]
        ttls = [
            r["expire_at_ms"] - snap
            for r in ks
            if r["expire_at_ms"] is not None and r["expire_at_ms"] - snap > 0
        ]
        assert (g["keys"], g["keys_without_ttl"], g["memory_without_ttl"], g["memory_bytes"]) == (
            len(ks),
            len(no_ttl),
            sum(r["memory_bytes"] for r in no_ttl),
            sum(r["memory_bytes"] for r in ks),
        ), fam
        top = max(r["memory_bytes"] for r in no_ttl)
        assert g["example"] in {r["key"] for r in no_ttl if r["memory_bytes"] == top}, fam
        assert g["median_ttl_ms"] == (statistics.median(ttls) if ttls else None), fam
    assert got["b:{id}"]["median_ttl_ms"] is not None and got["a:{id}"]["median_ttl_ms"] is None


def test_fail_on_no_ttl_counts_the_ephemeral_families_keys_without_ttl(keys_db):
    """`--fail-on no-ttl` (ttl_ephemeral_without_ttl): the keys without TTL of the families
    that look like caches, sessions, tokens or locks; the same sum as ttl_families' rows."""
    rnd = random.Random(11)
    rows = []
    for i in range(900):
        fam = rnd.choice(["session", "cache", "user", "lock"])
        ttl = fam == "cache" or rnd.random() < 0.5
        rows.append(
            {
                "db": 0,
                "key": f"{fam}:{i}",
                "type": "string",
                "encoding": "raw",
                "length": 1,
                "memory_bytes": 50,
                "slot": 0,
                "expire_at_ms": 2**41 if ttl else None,
            }
        )
    con = open_database(keys_db(rows))
    try:
        got = []
        for name, values in (("ttl_ephemeral_without_ttl", {}), ("ttl_families", {"top": 0})):
            q = querylib.get_query(name)
            relations.prepare(con, values, needs=relations.relations_used(q))
            got.append(querylib.run_dicts(con, q, values))
    finally:
        con.close()
    want = sum(1 for r in rows if r["expire_at_ms"] is None and r["key"][0] in "sl")
    assert got[0] == [{"keys_without_ttl": want}]
    assert want == sum(r["keys_without_ttl"] for r in got[1] if r["looks_ephemeral"]) > 100
    assert {r["pattern"] for r in got[1]} == {"session:{id}", "user:{id}", "lock:{id}"}


def test_families_match_the_keys(keys_db):
    """rfamilies in one GROUP BY (types as bits, a module's type name from its keys, the largest
    key as the minimum of a struct) and patterns' largest keys against the figures computed here
    from the rows: counts, memory, TTLs, sorted types, the largest key (the first in byte order
    among those of the most memory), with a TTL or not; the folded (other) row likewise."""
    rnd = random.Random(28)
    kinds = [("string", "raw"), ("hash", "listpack"), ("array", "array"), ("zset", "skiplist")]
    kinds += [("module", "vectorset"), ("module", "ReJSON-RL"), ("stream", "stream")]
    kinds += [("list", "quicklist"), ("set", "intset")]
    rows = []
    for i in range(3000):
        fam = rnd.choice(["a", "b", "c", "d", "e", "f"])
        t, enc = rnd.choice(kinds[: {"a": 1, "b": 2, "c": 3, "d": 5, "e": 6}.get(fam, 9)])
        rows.append(
            {
                "db": 0,
                "key": f"{fam}:{rnd.randint(0, 10**6)}:{i}",
                "type": t,
                "encoding": enc,
                "length": 1,
                "memory_bytes": rnd.choice([40, 56, 72, 72]),
                "slot": 0,
                "expire_at_ms": rnd.choice([None, 2**40]),
            }
        )
        if enc == "ReJSON-RL":  # RDB_TYPE_MODULE_2 (7); vectorset: RDB_TYPE_MODULE (6)
            rows[-1]["rdb_type"] = 7
    assert {r["type"] for r in rows} | {"module"} >= set(C.TYPE_NAMES.values())
    con = open_database(keys_db(rows))
    try:
        relations.prepare(con, {}, needs={"rfamilies"})
        got = {r[0]: r for r in con.execute("SELECT * FROM rfamilies").fetchall()}
        q = querylib.get_query("patterns")
        values = {"top": 3}
        listed = {r["pattern"]: r for r in querylib.run_dicts(con, q, values)}
    finally:
        con.close()
    fams: dict[str, list] = {}
    for r in rows:
        fams.setdefault(r["key"].split(":")[0] + ":{id}:{id}", []).append(r)

    def largest(ks):
        return min(ks, key=lambda r: (-r["memory_bytes"], r["key"].encode()))

    def types(ks):
        return sorted({r["encoding"] if r["type"] == "module" else r["type"] for r in ks})

    assert set(got) == set(fams)
    for fam, ks in fams.items():
        top = largest(ks)
        no_ttl = [r["memory_bytes"] for r in ks if r["expire_at_ms"] is None]
        assert got[fam][1:] == (
            len(ks),
            sum(r["memory_bytes"] for r in ks),
            sum(1 for r in ks if r["expire_at_ms"] is not None),
            types(ks),
            top["key"],
            top["memory_bytes"],
            top["expire_at_ms"] is not None,
            sum(no_ttl) if no_ttl else None,
        ), fam
    rest = [r for fam, ks in fams.items() if fam not in listed for r in ks]
    assert (listed["(other)"]["largest_key"], listed["(other)"]["types"]) == (
        largest(rest)["key"],
        types(rest),
    )
    assert listed["(other)"]["families"] == len(fams) - 3


@pytest.mark.parametrize("memory", [(8, 16), (0,)])
def test_prefixes_list_each_depths_top_by_memory_keys_then_name(keys_db, memory):
    """prefixes: each depth's top N prefixes (most memory, then most keys, then the name first
    in byte order: ties are many here, and with memory 0 the keys decide), the others folded
    into (other), against the rollup computed here from the rows."""
    rnd = random.Random(5)
    words = ["a", "b", "c", "ab", "B"]
    rows = []
    for _ in range(600):
        parts = [rnd.choice(words) for _ in range(rnd.randint(1, 4))]
        rows.append(
            {
                "db": 0,
                "key": ":".join(parts),
                "type": "string",
                "encoding": "raw",
                "length": 1,
                "memory_bytes": rnd.choice(memory),
                "slot": 0,
            }
        )
    con = open_database(keys_db(rows))
    try:
        q = querylib.get_query("prefixes")
        values = {"top": 3, "max_depth": 3}
        relations.prepare(con, values, needs=relations.relations_used(q))
        got = [
            (r["depth"], r["prefix"], r["prefixes"], r["keys"], r["memory_bytes"])
            for r in querylib.run_dicts(con, q, values)
        ]
    finally:
        con.close()
    want = []
    for depth in (1, 2, 3):
        sums: dict[str, list[int]] = {}
        for r in rows:
            prefix = ":".join(r["key"].split(":")[:depth])
            s = sums.setdefault(prefix, [0, 0])
            s[0], s[1] = s[0] + r["memory_bytes"], s[1] + 1
        order = sorted(sums, key=lambda p: (-sums[p][0], -sums[p][1], p.encode()))
        listed = sorted(order[:3], key=lambda p: (-sums[p][0], p.encode()))  # as printed
        want += [(depth, p, 1, sums[p][1], sums[p][0]) for p in listed]
        rest = order[3:]
        want.append(
            (
                depth,
                "(other)",
                len(rest),
                sum(sums[p][1] for p in rest),
                sum(sums[p][0] for p in rest),
            )
        )
    assert got == want


_TOP_TYPES = ("string", "list", "set", "zset", "hash", "stream")


def _top(db: str, top: int) -> tuple[list[dict], list[dict], list[dict]]:
    """The rows of big_keys_top and big_keys_top_grouped over `db`, `top` keys per type and
    ranking (the report runs the first over a database, the second over a dataset's files:
    Runner.reads_files), and the same ranking
    of every key in Python: the largest by memory (then length, NULLs last), and by length (then
    memory) but for strings; then the key, the dump and the db; module values of every module
    type ranked together, then numbered within each module's own type."""
    con = open_database(db)
    try:
        run = relations.Runner(con, {"dump_id": 0, "delimiters": ":", "top": top})
        got, grouped = run.rows("big_keys_top"), run.rows("big_keys_top_grouped")
        keys = con.execute(
            "SELECT type, rdb_type, dump_id, db, key, encoding, length, memory_bytes, "
            "memory_is_lower_bound, expire_at_ms IS NOT NULL FROM keys"
        ).fetchall()
    finally:
        con.close()
    groups: dict[str, list[tuple]] = {}
    for k in keys:
        grp = "module" if k[1] in (6, 7) else k[0] if k[0] in _TOP_TYPES else None
        if grp is not None:
            groups.setdefault(grp, []).append(k)

    def by_memory(k):
        return (-(k[7] or 0), k[6] is None, -(k[6] or 0), k[4], k[2], k[3])

    def by_length(k):
        return (k[6] is None, -(k[6] or 0), -(k[7] or 0), k[4], k[2], k[3])

    want = []
    for ranking, order in (("memory", by_memory), ("length", by_length)):
        for grp, ks in groups.items():
            if ranking == "length" and grp == "string":
                continue
            ranks: collections.Counter = collections.Counter()
            for k in sorted(ks, key=order)[:top]:
                ranks[k[0]] += 1
                want.append(
                    dict(
                        zip(
                            ("ranking", "type", "rank", "dump_id", "db", "key", "encoding"),
                            (ranking, k[0], ranks[k[0]], *k[2:6]),
                        ),
                        length=k[6],
                        memory_bytes=k[7],
                        memory_is_lower_bound=k[8],
                        has_ttl=k[9],
                    )
                )
    want.sort(key=lambda r: (r["ranking"] != "memory", r["type"], r["rank"]))
    return got, grouped, want


@pytest.mark.parametrize(
    "top, rows", [(0, 0), (1, 13), (3, 39), (10, 130), (1000, 9684)], ids=lambda v: str(v)
)
def test_big_keys_top_ranks_every_key_of_the_fixtures(fixtures_db, top, rows):
    got, grouped, want = _top(fixtures_db, top)
    assert got == grouped == want
    assert len(got) == rows
    # the module values of every module type ranked together, then within each type
    modules = collections.Counter(r["type"] for r in got if r["ranking"] == "memory")
    assert {t: n for t, n in modules.items() if t not in C.TYPE_NAMES.values()} == (
        {"vectorset": 17, "hellotype": 4, "graphdata": 2, "test__rdb": 2, "ReJSON-RL": 1}
        if top == 1000
        else {"vectorset": min(top, 10)}
        if top
        else {}
    )


def test_slots_by_memory_finds_the_largest_key_of_each_slot_it_lists(keys_db):
    # many ties on memory: the largest key is the first in byte order of the slot's largest
    rnd = random.Random(5)
    rows = [
        {
            "db": 0,
            "key": f"s:{rnd.randint(0, 999):03d}:{i}",
            "type": "string",
            "encoding": "x",
            "length": 3,
            "memory_bytes": rnd.choice([56, 72, 72, 88]),
            "slot": rnd.randint(0, 30),
        }
        for i in range(2000)
    ]
    con = open_database(keys_db(rows))
    try:
        got = rpt.build_report(con, rpt.ReportOptions(sections=("slots",), top=7))["slots"]
    finally:
        con.close()
    slots: dict[int, list[dict]] = {}
    for r in rows:
        slots.setdefault(r["slot"], []).append(r)
    want = sorted(
        slots.items(),
        key=lambda kv: (-sum(r["memory_bytes"] for r in kv[1]), -len(kv[1]), kv[0]),
    )[:7]
    assert len(got["by_memory"]) == 7
    assert [
        (s["slot"], s["keys"], s["memory_bytes"], s["largest_key"]) for s in got["by_memory"]
    ] == [
        (
            slot,
            len(ks),
            sum(r["memory_bytes"] for r in ks),
            min(ks, key=lambda r: (-r["memory_bytes"], r["key"]))["key"],
        )
        for slot, ks in want
    ]


def test_snapshot_params_index_the_reported_dumps_times():
    """rkeys reads each key's snapshot time as one index into a list from the first reported
    dump on (relations.snapshot_params): None for a dump between them the report leaves out,
    and a list no dump can match when there is none."""
    snaps = [{"dump_id": 4, "snapshot_ms": 10}, {"dump_id": 2, "snapshot_ms": 7}]
    assert relations.snapshot_params(snaps) == {"first_dump": 2, "snapshot_times": [7, None, 10]}
    assert relations.snapshot_params([]) == {"first_dump": 0, "snapshot_times": [0]}


def test_rkeys_holds_the_keys_of_the_reported_dumps_with_their_snapshot_times(tmp_path):
    """Three dumps in one database: the first without an instance, the second and third two
    snapshots of instance `a`. The report covers the first and the latest of `a` (the third):
    rkeys holds their keys and no other, each with its own dump's snapshot time (aux ctime) and
    TTL from it, as rsnap says."""
    import rdbwriter as W

    def dump(name: str, ctime: int, keys: list[bytes]) -> str:
        body = b"".join(
            b"\xfc" + (ctime * 1000 + 5000).to_bytes(8, "little") + W.key(0, k, W.string(b"v"))
            for k in keys
        )
        path = tmp_path / name
        path.write_bytes(W.rdb(b"\xfe\x00" + body, aux={"ctime": str(ctime)}))
        return str(path)

    db = str(tmp_path / "three.duckdb")
    assert all(r.complete for r in load([dump("one.rdb", 1_700_000_000, [b"a:1", b"a:2"])], db))
    assert all(
        r.complete for r in load([dump("two.rdb", 1_700_000_100, [b"b:1"])], db, instance="a")
    )
    assert all(
        r.complete for r in load([dump("three.rdb", 1_700_000_200, [b"c:1"])], db, instance="a")
    )
    con = open_database(db)
    try:
        relations.prepare(con, {})
        snap = dict(con.execute("SELECT dump_id, snapshot_ms FROM rsnap").fetchall())
        got = con.execute(
            "SELECT dump_id, key, snapshot_ms, ttl_ms FROM rkeys ORDER BY dump_id, key"
        ).fetchall()
    finally:
        con.close()
    assert snap == {1: 1_700_000_000_000, 3: 1_700_000_200_000}
    assert got == [
        (1, "a:1", 1_700_000_000_000, 5000),
        (1, "a:2", 1_700_000_000_000, 5000),
        (3, "c:1", 1_700_000_200_000, 5000),
    ]
