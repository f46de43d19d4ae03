"""Valkey 9 cluster dumps: the `slot-info` aux field carries four numbers
("<slot>,<keys>,<expires>,<keys with volatile items>", the last counting keys with hash-field
TTLs); every cluster dump's announced per-slot counts equal the keys read."""

from __future__ import annotations

import io
import json
import os
from collections import Counter
from pathlib import Path

import duckdb
import pytest
import rdbwriter as W
from manifest_compare import manifest_key

from rdbscan.db.load import load
from rdbscan.model.slots import key_slot
from rdbscan.rdb.errors import CorruptError
from rdbscan.rdb.parser import DumpInfo, parse

LIVE = Path(__file__).parent / "fixtures" / "live"


def _parse(data: bytes):
    info = DumpInfo()
    recs = list(parse(io.BytesIO(data), info, size=len(data)))
    return info, recs


def _slot_aux(value: str) -> bytes:
    return b"\xfa" + W.string("slot-info") + W.string(value)


def test_four_number_slot_info_is_read_and_kept():
    body = (
        _slot_aux("5,1,0,1")
        + W.key(0, "a", W.string("x"))
        + _slot_aux("9,2,1,0")
        + W.key(0, "b", W.string("y"))
        + W.key(0, "c", W.string("z"))
    )
    info, recs = _parse(W.rdb(body, version=80, valkey=True))
    assert [r.key for r in recs] == [b"a", b"b", b"c"]
    assert info.slot_info == [(5, 1, 0), (9, 2, 1)]
    assert info.slot_volatile_items == {5: 1, 9: 0}
    assert info.slot_info_source == "aux-slot-info"


def test_three_number_slot_info_has_no_fourth():
    info, _ = _parse(W.rdb(_slot_aux("5,1,0") + W.key(0, "a", W.string("x"))))
    assert info.slot_info == [(5, 1, 0)]
    assert info.slot_volatile_items == {}


def test_numbers_after_the_fourth_are_ignored_like_valkey():
    """Valkey's loader sscanf's four numbers and ignores the rest (src/rdb.c, "slot-info")."""
    info, _ = _parse(
        W.rdb(_slot_aux("5,1,0,1,7") + W.key(0, "a", W.string("x")), version=80, valkey=True)
    )
    assert info.slot_info == [(5, 1, 0)] and info.slot_volatile_items == {5: 1}


@pytest.mark.parametrize(
    "value,message",
    [
        ("5,1", r"aux slot-info value '5,1' is not 'slot,keys,expires\[,keys with field TTLs\]'"),
        ("5,1,0,x", r"aux slot-info value '5,1,0,x' is not"),
        (f"5,1,0,{1 << 41}", r"slot info claims 2199023255552 keys with field TTLs"),
    ],
)
def test_bad_slot_info_is_corrupt_at_its_record(value, message):
    data = W.rdb(W.key(0, "first", W.string("x")) + _slot_aux(value), version=80, valkey=True)
    with pytest.raises(CorruptError, match=message) as e:
        _parse(data)
    assert e.value.offset == 9 + len(W.key(0, "first", W.string("x")))


def _check_against_manifest(dump: Path, manifest: Path, db_dir: Path):
    m = json.loads(manifest.read_text())
    info = DumpInfo()
    with open(dump, "rb") as f:
        recs = list(parse(f, info, size=dump.stat().st_size))
    assert sorted(r.key for r in recs) == sorted(manifest_key(e) for e in m["keys"])
    computed = Counter(key_slot(r.key) for r in recs)
    want = {int(s): n for s, n in m["cluster"]["slot_key_counts"].items()}
    assert dict(computed) == want
    announced = {s: k for s, k, _ in info.slot_info}
    assert announced == want
    expires = Counter(key_slot(r.key) for r in recs if r.expire_ms is not None)
    assert {s: e for s, _, e in info.slot_info if e} == dict(expires)
    records = m["cluster"]["rdb_slot_records"]
    assert records["columns"][-1] == "keys_with_field_ttl"
    want_volatile = {rec[0]: rec[-1] for rec in records["records"]}
    assert info.slot_volatile_items == want_volatile
    # the fourth number counts the keys read with at least one field TTL
    with_ttl = Counter(
        key_slot(r.key)
        for r in recs
        if r.field_ttls and r.field_ttls.min_field_expire_ms is not None
    )
    assert {s: n for s, n in info.slot_volatile_items.items() if n} == dict(with_ttl)
    # and reaches the database's slot_info table
    db = str(db_dir / "slots.duckdb")
    load([str(dump)], db)
    con = duckdb.connect(db)
    rows = con.execute(
        "SELECT slot, keys, expires, keys_with_volatile_items, source FROM slot_info ORDER BY slot"
    ).fetchall()
    con.close()
    assert rows == [
        (s, k, e, info.slot_volatile_items[s], "aux-slot-info")
        for s, k, e in sorted(info.slot_info)
    ]
    return info, recs


@pytest.mark.skipif(
    not (LIVE / "valkey-9.1-cluster" / "dump.rdb").exists(), reason="live fixture missing"
)
def test_valkey9_cluster_fixture(tmp_path):
    d = LIVE / "valkey-9.1-cluster"
    info, recs = _check_against_manifest(d / "dump.rdb", d / "manifest.json", tmp_path)
    assert info.magic == "VALKEY080" and info.server_version.startswith("9.1")
    assert sum(info.slot_volatile_items.values()) == 2
    assert len(recs) == 41


@pytest.mark.skipif(not os.environ.get("RDBSCAN_CORPUS"), reason="set RDBSCAN_CORPUS")
def test_every_corpus_cluster_dump_announces_what_it_holds(tmp_path):
    root = Path(os.environ["RDBSCAN_CORPUS"])
    d = root / "valkey-9.1.2" / "variants" / "cluster"
    info, _ = _check_against_manifest(d / "dump.rdb", d / "manifest.json", tmp_path)
    assert len(info.slot_info) == 527
    for d in sorted(root.glob("*/variants/cluster")):
        m = json.loads((d / "manifest.json").read_text())
        info = DumpInfo()
        with open(d / "dump.rdb", "rb") as f:
            recs = list(parse(f, info))
        want = {int(s): n for s, n in m["cluster"]["slot_key_counts"].items()}
        assert dict(Counter(key_slot(r.key) for r in recs)) == want, d
        if m["cluster"]["rdb_slot_records"]["records"]:
            assert {s: k for s, k, _ in info.slot_info} == want, d
