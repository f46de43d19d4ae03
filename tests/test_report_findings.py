"""Findings a CI gate can fail on, checked against generated data whose truth is known
(docs/findings.md), and every list of the report bounded by --top.  Dumps are written with
tests/rdbwriter.py and go through the real load and query path."""

from __future__ import annotations

import io
import random
import struct
from pathlib import Path

import duckdb
import lzf
import pytest
import rdbwriter as W
from common import FIXTURES, run_cli
from rich.console import Console

from rdbscan.db.load import load
from rdbscan.errors import EXIT_FINDINGS
from rdbscan.reports import report as rpt
from rdbscan.reports.engine.database import open_database
from rdbscan.reports.report import render

ROOT = Path(__file__).resolve().parent.parent
SNAPSHOT_S = 1_700_000_000  # aux ctime of the generated dumps
AUX_72 = {"redis-ver": "7.2.4", "ctime": str(SNAPSHOT_S)}


def _load(tmp_path, data: bytes, name="d") -> str:
    path = tmp_path / f"{name}.rdb"
    path.write_bytes(data)
    db = tmp_path / f"{name}.duckdb"
    res = load([str(path)], str(db))
    assert res[0].complete, res[0].error
    return str(db)


def _report(db: str, fail_on=None, **kw) -> dict:
    con = open_database(db)
    try:
        return rpt.build_report(con, rpt.ReportOptions(**kw), fail_on=fail_on)
    finally:
        con.close()


def _text(report: dict) -> str:
    buf = io.StringIO()
    render.render_text(report, Console(file=buf, width=200))
    return buf.getvalue()


def _select(db: int) -> bytes:
    return b"\xfe" + W.length(db)


def _expire_ms(ms: int) -> bytes:
    return b"\xfc" + struct.pack("<q", ms)


# --- compact-encoding candidates: uncompressed sizes ------------------------------------------


def _lzf_blob(data: bytes) -> bytes:
    """An RDB string record LZF-compressing data (the way a server stores a large node)."""
    comp = lzf.compress(data)
    assert comp is not None and len(comp) < len(data)
    return b"\xc3" + W.length(len(comp)) + W.length(len(data)) + comp


def _quicklist2(nodes: list[list], compress: bool = False) -> bytes:
    out = W.length(len(nodes))
    for elems in nodes:
        lp = W.listpack(elems)
        out += W.length(2) + (_lzf_blob(lp) if compress else W.string(lp))
    return out


# list-max-listpack-size -2 (the 7.2 default): a node holds at most 8 KiB; a quicklist of one
# node converts back to a listpack at half that (t_list.c listTypeTryConvertQuicklist, shrinking),
# and a rewrite of the list (RPUSH of its elements into a new key) stays a listpack up to 8 KiB.
# rdbscan counts a quicklist as a candidate when one listpack of all its elements fits half the
# limit: LISTPACK_LIMIT.
LISTPACK_LIMIT = 8192 // 2

# The elements of each list, and how its nodes split them.
LISTS = {
    # like list:bytes9k of the fixtures: 95 elements of 100 bytes in two full nodes, compressed
    "list:twofull": ([(b"%03d" % i) + b"x" * 97 for i in range(95)], 79, True),
    # two small nodes left by deletions (LPOP / LREM never merge nodes): a rewrite compacts it
    "list:shrunk": ([b"a" * 40, b"b" * 40, b"c" * 40, "abc", 12345, b"d" * 40], 3, True),
    # one listpack of exactly LISTPACK_LIMIT bytes, and one byte more
    "list:edge-in": ([b"e" * 50] * 78 + [b"f" * 31], 40, False),
    "list:edge-out": ([b"e" * 50] * 78 + [b"f" * 32], 40, False),
}


def _jemalloc(n: int) -> int:
    """jemalloc size class of an n-byte allocation (8-byte quantum, 4 classes per doubling)."""
    if n <= 64:
        return (n + 7) // 8 * 8
    step = 1 << ((n - 1).bit_length() - 3)
    return (n + step - 1) // step * step


def test_list_candidates_use_uncompressed_listpack_bytes(tmp_path):
    body = b"".join(
        W.key(18, name, _quicklist2([elems[:split], elems[split:]], compress))
        for name, (elems, split, compress) in LISTS.items()
    )
    db = _load(tmp_path, W.rdb(body, version=11, aux=AUX_72))
    truth = {name: len(W.listpack(elems)) for name, (elems, _, _) in LISTS.items()}
    assert truth["list:twofull"] == 9792 and truth["list:edge-in"] == LISTPACK_LIMIT
    assert truth["list:edge-out"] == LISTPACK_LIMIT + 1
    con = duckdb.connect(db, read_only=True)
    stored = dict(con.execute("SELECT key, listpack_bytes FROM keys").fetchall())
    mem = dict(con.execute("SELECT key, memory_bytes FROM keys").fetchall())
    con.close()
    assert stored == truth
    rep = _report(db, sections=("encodings",), top=100, fail_on=rpt.parse_fail_on("encodings"))
    e = rep["encodings"]
    expected = {k for k, n in truth.items() if n <= LISTPACK_LIMIT}
    assert expected == {"list:shrunk", "list:edge-in"}
    assert {c["key"] for c in e["candidates"]} == expected
    for c in e["candidates"]:
        assert (c["encoding"], c["target_encoding"]) == ("quicklist", "listpack")
        # MEMORY USAGE of the key as one listpack: key sds (type 5/8 header + NUL) + dictEntry
        # + robj + the listpack allocation
        key_len = len(c["key"])
        compact = (
            _jemalloc(key_len + 1 + (1 if key_len < 32 else 3))
            + 24
            + 16
            + _jemalloc(truth[c["key"]])
        )
        assert c["savings_bytes"] == max(mem[c["key"]] - compact, 0)
    assert rep["fail_on"]["checks"][0]["value"] == 2


@pytest.mark.parametrize(
    "dump",
    sorted(
        [p for p in (ROOT / "sample_dumps").glob("*.rdb") if "6.2" not in p.name]
        + [
            FIXTURES / v / "small" / "dump.rdb"
            for v in (
                "redis-7.2.6",
                "redis-7.4.1",
                "redis-8.0-m01",
                "valkey-7.2.7",
                "valkey-8.0.1",
                "valkey-unstable-20241025",
            )
        ]
    ),
    ids=str,
)
def test_no_compact_encoding_candidate_in_72_dumps(tmp_path, dump):
    """Every 7.2+ sample dump (list:bytes9k: 9,799 bytes in two compressed nodes) is compact
    where it can be: the server converts on write, and a list of two full nodes cannot be one
    listpack."""
    db = tmp_path / "s.duckdb"
    res = load([str(dump)], str(db))
    assert res[0].complete
    rep = _report(str(db), sections=("encodings",), fail_on=rpt.parse_fail_on("encodings"))
    assert rep["encodings"]["list_compact_encoding"] == "listpack"
    assert (
        rep["encodings"]["candidates"] == [] and rep["encodings"]["candidates_total"]["keys"] == 0
    )
    assert rep["fail_on"]["failed"] is False


# --- expiry bunching ---------------------------------------------------------------------------

HERD_KEYS, HERD_SIZE = 100_000, 10_000
HERD_AT_MS = (SNAPSHOT_S + 2 * 86400) * 1000 + 250  # one EXPIREAT, 2 days after the snapshot


def _ttl_keyspace(herd: bool, singles: int = 0) -> tuple[bytes, list[int]]:
    """100,000 `session:<n>` keys with TTLs uniform over 1 h - 30 d; with herd, every tenth
    key instead expires at HERD_AT_MS. `singles` keys `rl:10.0.<n>` more, each a family of its
    own with a TTL: no moment of theirs can be a herd, but each counts in the cells tested."""
    rnd = random.Random(13)
    expires = []
    parts = [_select(0)]
    for i in range(singles):
        at = SNAPSHOT_S * 1000 + rnd.randint(3_600_000, 30 * 86_400_000)
        parts.append(_expire_ms(at) + W.key(0, f"rl:10.0.{i}", W.string("v")))
    for i in range(HERD_KEYS):
        at = SNAPSHOT_S * 1000 + rnd.randint(3_600_000, 30 * 86_400_000)
        if herd and i % 10 == 0:
            at = HERD_AT_MS
        expires.append(at)
        parts.append(_expire_ms(at) + W.key(0, f"session:{i}", W.string("v")))
    return W.rdb(b"".join(parts), version=11, aux=AUX_72), expires


@pytest.mark.slow
def test_herd_flagged_with_its_count_and_random_ttls_are_not(tmp_path):
    data, expires = _ttl_keyspace(herd=True, singles=300)
    rep = _report(_load(tmp_path, data, "herd"), sections=("ttl",))
    herd = rep["ttl"]["herd"]
    sec, minute = HERD_AT_MS // 1000, HERD_AT_MS // 60000
    in_sec = sum(1 for e in expires if e // 1000 == sec)
    in_min = sum(1 for e in expires if e // 60000 == minute)
    assert in_sec >= HERD_SIZE and in_min >= in_sec
    assert [(h["moment_ms"], h["pattern"], h["keys"]) for h in herd["seconds"]] == [
        (sec * 1000, "session:{id}", in_sec)
    ]
    assert [(h["moment_ms"], h["pattern"], h["keys"]) for h in herd["minutes"]] == [
        (minute * 60000, "session:{id}", in_min)
    ]
    # expected: the family's keys spread evenly over its seconds (minutes) from first to last expiry
    s = herd["seconds"][0]
    span = max(expires) // 1000 - min(expires) // 1000 + 1
    assert s["expected_keys"] == pytest.approx(HERD_KEYS / span, rel=1e-5)
    assert s["family_keys"] == HERD_KEYS and s["p_value"] < s["p_threshold"]
    cells = span + (max(expires) // 60000 - min(expires) // 60000 + 1) + 300 * 2
    assert s["p_threshold"] == pytest.approx(0.01 / cells, rel=1e-5, abs=0)  # (1e-12 by default)
    assert f"{in_sec} keys of session:{{id}} expire in the same second" in rep["ttl"]["advice"][-1]

    data, _ = _ttl_keyspace(herd=False)
    rep = _report(_load(tmp_path, data, "uniform"), sections=("ttl",))
    assert rep["ttl"]["herd"] == {"seconds": [], "minutes": []}
    assert not any("jitter" in a for a in rep["ttl"]["advice"])


# --- big keys: critical first ------------------------------------------------------------------


def test_critical_big_keys_are_listed_first(tmp_path):
    """12 strings of 20 KB (big, warning) outweigh a 60-element list that is critical under
    collection_critical_length=50: the top 5 still lists the critical key, first."""
    body = b"".join(W.key(0, f"blob:{i}", W.string(b"z" * (20_000 + i))) for i in range(12))
    body += W.key(18, "queue", W.length(1) + W.length(2) + W.string(W.listpack(list(range(60)))))
    db = _load(tmp_path, W.rdb(body, version=11, aux=AUX_72))
    rep = _report(
        db,
        sections=("big_keys",),
        top=5,
        big_keys={"collection_length": 10, "collection_critical_length": 50},
    )
    b = rep["big_keys"]
    assert (b["keys"], b["critical"]) == (13, 1)
    assert [(i["key"], i["severity"]) for i in b["items"]] == [
        ("queue", "critical"),
        ("blob:11", "warning"),
        ("blob:10", "warning"),
        ("blob:9", "warning"),
        ("blob:8", "warning"),
    ]
    assert "Big keys, critical first" in _text(rep)


# --- wording and units -------------------------------------------------------------------------


@pytest.mark.slow
def test_fail_on_messages_compare_like_with_like(tmp_path):
    body = W.key(0, "UPPER:key", W.string(b"x" * 100)) + W.key(0, "lower:key", W.string(b"y"))
    path = tmp_path / "w.rdb"
    path.write_bytes(W.rdb(body, version=11, aux=AUX_72))
    res = run_cli(
        "report",
        str(path),
        "-q",
        "--format",
        "json",
        "--fail-on",
        "no-ttl-share=30%,naming:uppercase,no-ttl-share=0.5",
    )
    assert res.exit_code == EXIT_FINDINGS
    assert res.stderr.strip().splitlines()[-1] == (
        "rdbscan: findings exceed --fail-on thresholds: no-ttl-share 100% > 30%, naming:uppercase 1 > 0, "
        "no-ttl-share 1 > 0.5"
    )
    import json

    checks = json.loads(res.stdout)["fail_on"]["checks"]
    assert [c["measured"] for c in checks] == ["100%", "1", "1"]
    assert checks[1]["description"] == (
        "keys breaking naming rule uppercase: uppercase letters (UPPERCASE or camelCase)"
    )


def test_field_expiry_shows_the_time_and_the_delay(tmp_path):
    """A field TTL 73 years out is shown as its time and a delay in years, not as 26856.3 d."""
    at = (SNAPSHOT_S + 26_856 * 86400) * 1000
    lp = W.listpack(["f1", "v1", at, "f2", "v2", 0])
    body = W.key(25, "hfe", struct.pack("<q", at) + W.string(lp))
    rep = _report(
        _load(
            tmp_path, W.rdb(body, version=12, aux={"redis-ver": "7.4.1", "ctime": str(SNAPSHOT_S)})
        ),
        sections=("streams",),
    )
    row = rep["streams"]["hash_field_ttl"][0]
    assert (row["min_field_expire_ms"], row["min_field_ttl_ms"]) == (at, 26_856 * 86_400_000)
    line = next(ln for ln in _text(rep).splitlines() if ln.startswith("hfe "))
    assert "2097-05-25 22:13:20 UTC" in line and "73.6 y" in line and " d " not in line


# --- every list bounded by --top ---------------------------------------------------------------


def test_keys_per_database_is_bounded(tmp_path):
    """2,500 databases holding 1-7 keys: --top 10 lists the 10 with most keys and one line
    for the rest."""
    body = b""
    per_db = {db: db % 7 + 1 for db in range(2500)}
    for db, n in per_db.items():
        body += _select(db) + b"".join(W.key(0, f"k{j}", W.string("v")) for j in range(n))
    rep = _report(
        _load(tmp_path, W.rdb(body, version=11, aux=AUX_72)), sections=("overview",), top=10
    )
    o = rep["overview"]
    listed = sorted(sorted(per_db, key=lambda d: (-per_db[d], d))[:10])
    assert [d["db"] for d in o["dbs"]] == listed == [6, 13, 20, 27, 34, 41, 48, 55, 62, 69]
    assert o["keys"] == sum(per_db.values()) and o["databases"] == 2500
    assert o["dbs_not_listed"] == {
        "databases": 2490,
        "keys": sum(per_db.values()) - 70,
        "keys_with_ttl": 0,
        "memory_bytes": o["memory_bytes"] - sum(d["memory_bytes"] for d in o["dbs"]),
    }
    text = _text(rep)
    table = text[text.index("Keys per database") : text.index("Keys and memory by type")]
    assert len(table.strip().splitlines()) == 3 + 10 + 1
    assert f"(2,490 more)   {sum(per_db.values()) - 70:,}" in table


def _stream_with_groups(groups: int) -> bytes:
    """A one-entry stream (RDB_TYPE_STREAM_LISTPACKS_3) with `groups` consumer groups; group
    g<i> has i % 13 pending entries and no consumers."""
    lp = W.listpack([1, 0, 1, "f", 0, 2, 0, 0, "v", 5])  # master entry, one entry with its fields
    out = W.length(1) + W.string(struct.pack(">QQ", 1000, 0)) + W.string(lp)
    out += W.length(1) + W.length(1000) + W.length(0)  # length, last id
    out += (
        W.length(1000) + W.length(0) + W.length(0) + W.length(0) + W.length(1)
    )  # first, max deleted, added
    parts = [out, W.length(groups)]
    for i in range(groups):
        pending = i % 13
        parts.append(
            W.string(f"g{i}") + W.length(1000) + W.length(0) + W.length(1) + W.length(pending)
        )
        parts += [
            struct.pack(">QQ", 1000, p) + struct.pack("<q", 123) + W.length(1)
            for p in range(pending)
        ]
        parts.append(W.length(0))  # consumers
    return b"".join(parts)


def test_stream_group_details_are_bounded(tmp_path):
    groups = 20_000
    db = _load(
        tmp_path, W.rdb(W.key(21, "events", _stream_with_groups(groups)), version=11, aux=AUX_72)
    )
    rep = _report(db, sections=("streams",), top=4)
    (s,) = rep["streams"]["items"]
    assert (s["groups"], s["pending"]) == (groups, sum(i % 13 for i in range(groups)))
    # the 4 groups with most pending entries (12), by name, among the groups the parser keeps
    # (the first MAX_KEPT_GROUPS; the rest are counted, not kept: docs/hostile-inputs.md)
    from rdbscan.rdb.stream_values import MAX_KEPT_GROUPS

    kept = range(min(groups, MAX_KEPT_GROUPS))
    top = sorted((g for g in kept if g % 13 == 12), key=lambda g: f"g{g}")[:4]
    assert s["group_details"] == [f"g{g} (0 consumers, 12 pending)" for g in top]
