"""`rdbscan schema --relations`: families whose members (hashes: values) are names of keys of
another family, found by sampling elements from the dump (rdbscan/rdb/sample.py), on a dump a
real Redis 7.0 wrote (tests/fixtures/values/make_values.py: sets, sorted sets, lists and hashes
of `book:{id}` names in listpack, hashtable, skiplist and quicklist encodings)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import tomllib
from common import run_cli

from rdbscan.db.load import load
from rdbscan.rdb.sample import sample_elements
from rdbscan.reports import schema as sch

VALUES = Path(__file__).parent / "fixtures" / "values"
KEYS = json.loads((VALUES / "truth.json").read_text())["keys"]
# the families make_values.py fills with book names, and their keys
HOLDERS = {
    "books:genre:scifi": ["books:genre:scifi"],
    "books:genre:fantasy": ["books:genre:fantasy"],
    "books:genre:crime": ["books:genre:crime"],
    "reading:list:{id}": ["reading:list:1", "reading:list:2", "reading:list:3"],
    "top:books": ["top:books"],
    "books:all": ["books:all"],
    "books:rank": ["books:rank"],
    "shelf:{id}": ["shelf:1", "shelf:2"],
    "reading:all": ["reading:all"],
}


@pytest.mark.slow
def test_relations_are_the_families_holding_book_names(tmp_path):
    dump = tmp_path / "dump.rdb"
    shutil.copy(VALUES / "dump.rdb", dump)
    out = tmp_path / "ks.toml"
    res = run_cli("schema", str(dump), "--relations", "-o", str(out), "-q")
    assert res.exit_code == 0, res.output
    doc = tomllib.loads(out.read_text())
    assert doc["schema"]["relations_sample"] == sch.sample_statement()
    found = {
        f["observed"]["family"]: f["observed"]["relations"]
        for f in doc["family"]
        if f["observed"].get("relations")
    }
    assert sorted(found) == sorted(HOLDERS)
    for fam, keys in HOLDERS.items():
        (rel,) = found[fam]
        want_elements = sum(min(KEYS[k]["length"], sch.SAMPLE_ELEMENTS) for k in keys)
        assert rel == {
            "via": "values" if KEYS[keys[0]]["type"] == "hash" else "members",
            "family": "book:{id}",
            "share": 1,
            "elements": want_elements,
            "keys": len(keys),
        }, fam
    # the encodings covered
    assert {KEYS[k[0]]["encoding"] for k in HOLDERS.values()} == {
        "hashtable",
        "skiplist",
        "listpack",
        "quicklist",
    }
    md = run_cli("schema", str(dump), "--relations", "-f", "markdown", "-q")
    assert "`books:all` members → `book:{id}` (100% of 100 elements sampled in 1 keys)" in md.stdout
    # without the option: no relations, no statement
    plain = run_cli("schema", str(dump), "-q").stdout
    assert "relations" not in plain


def test_sampled_elements_are_the_servers(tmp_path):
    """The elements read back for each collection of the fixture: the first 100 (hashes:
    values), as many as the server says the key holds."""
    db = str(tmp_path / "v.duckdb")
    load([str(VALUES / "dump.rdb")], db)
    import duckdb

    con = duckdb.connect(db, read_only=True)
    rows = con.execute(
        "SELECT file_offset, key, type, encoding, length FROM keys "
        "WHERE type IN ('set', 'zset', 'list', 'hash')"
    ).fetchall()
    got = dict(sample_elements(str(VALUES / "dump.rdb"), [r[0] for r in rows], 100))
    for offset, key, _type, _enc, length in rows:
        assert len(got[offset]) == min(length, 100) == min(KEYS[key]["length"], 100), key
    books = {f"book:{b}".encode() for b in range(1, 301)}
    by_key = {key: got[offset] for offset, key, *_ in rows}
    assert set(by_key["books:all"]) <= books and len(set(by_key["books:all"])) == 100
    assert by_key["reading:list:1"] == [b"book:1", b"book:8", b"book:15", b"book:22", b"book:29"]
    assert set(by_key["shelf:1"]) <= books and set(by_key["shelf:2"]) <= books
    assert max(len(e) for e in by_key["doc:1"]) == KEYS["doc:1"]["max_element_bytes"]


def test_a_missing_dump_file_is_said_and_skipped(tmp_path):
    dump = tmp_path / "dump.rdb"
    shutil.copy(VALUES / "dump.rdb", dump)
    db = tmp_path / "v.duckdb"
    load([str(dump)], str(db))
    dump.unlink()
    res = run_cli("schema", str(db), "--relations", "-q", "-f", "json")
    assert res.exit_code == 0, res.output
    assert "not found, its elements were not sampled" in res.stderr
    fams = json.loads(res.stdout)["families"]
    assert all(f["observed"]["relations"] == [] for f in fams)
